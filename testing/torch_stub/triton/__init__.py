__version__ = 'stub'
