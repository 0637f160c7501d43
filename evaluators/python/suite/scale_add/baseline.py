# One element at a time, indexing each buffer.
def kernel(x, y, out):
    for i in range(N):
        out[i] = a * x[i] + y[i]
