# out = a * x + y in double precision (Python floats).
def reference(x, y, out):
    for i in range(N):
        out[i] = a * x[i] + y[i]
