# out = x / (1 + exp(-x)) in double precision: x and out are float64 torch
# tensors on the CPU, shaped [M, N].
import torch


def reference(x, out):
    out.copy_(x / (1 + torch.exp(-x)))
