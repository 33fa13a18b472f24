"""PrimaryCaps' strided convolution, fast in the two ways capsviz runs it on a CPU.

Training (large batches, gradients): a backward pass made of two forward-style convolutions.
Inference of a few images (the explorer: one image per stroke): one matrix product over
channels-last patches, with the weight laid out once and cached.

Backward pass.

On CPU, oneDNN's fused backward for PrimaryCaps' 256 -> 256, 9x9, stride-2 convolution
runs at about 60 % of the speed of its forward kernels. The same gradients come out
faster as (measured in ``benchmarks/train_speed.py``):

- grad_input  = conv_transpose2d(grad_out, W, stride) (the adjoint of the convolution);
- grad_weight = a dilated convolution of the input (batch as channels) with grad_out
  (batch as channels) as the kernel, dilation = stride.

The numbers are the same as ``torch.nn.functional.conv2d``'s gradients up to float
rounding; a unit test compares them.

Small batches. For one image oneDNN's direct convolution runs at about a third of the
machine's matrix-product rate, since it reorders the 21 MB weight on every call. Writing
the convolution as (B*36, 81*256) patches @ (81*256, 256) weight, with the weight permuted
to (out, ky, kx, in) once, takes about 2.3 ms instead of 6 ms per image
(``benchmarks/interactive.py``).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor


CHANNELS_LAST_GRAD_INPUT = True
IM2COL_MAX_BATCH = 8  # beyond this oneDNN's convolution is faster (measured at 32)


class _StridedConv2d(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: Tensor, weight: Tensor, bias: Tensor | None, stride: int) -> Tensor:
        ctx.save_for_backward(x, weight)
        ctx.stride = stride
        ctx.has_bias = bias is not None
        return F.conv2d(x, weight, bias, stride=stride)

    @staticmethod
    def backward(ctx, grad_out: Tensor):
        x, weight = ctx.saved_tensors
        stride = ctx.stride
        k = weight.shape[-1]
        grad_x = grad_w = grad_b = None
        grad_out = grad_out.contiguous()
        if ctx.needs_input_grad[0]:
            out_h = (grad_out.shape[-2] - 1) * stride + k
            out_w = (grad_out.shape[-1] - 1) * stride + k
            pad = (x.shape[-2] - out_h, x.shape[-1] - out_w)
            if CHANNELS_LAST_GRAD_INPUT:
                grad_x = F.conv_transpose2d(grad_out.contiguous(memory_format=torch.channels_last),
                                            weight.contiguous(memory_format=torch.channels_last),
                                            stride=stride, output_padding=pad)
            else:
                grad_x = F.conv_transpose2d(grad_out, weight, stride=stride, output_padding=pad)
        if ctx.needs_input_grad[1]:
            # Only the input rows/columns the convolution reads take part.
            span_h = (grad_out.shape[-2] - 1) * stride + k
            span_w = (grad_out.shape[-1] - 1) * stride + k
            xs = x[:, :, :span_h, :span_w]
            # (C_in, B, H, W) * (C_out, B, h, w) dilated -> (C_in, C_out, k, k)
            grad_w = F.conv2d(xs.transpose(0, 1), grad_out.transpose(0, 1), dilation=stride).transpose(0, 1)
        if ctx.has_bias and ctx.needs_input_grad[2]:
            grad_b = grad_out.sum(dim=(0, 2, 3))
        return grad_x, grad_w, grad_b, None


def strided_conv2d(x: Tensor, weight: Tensor, bias: Tensor | None, stride: int) -> Tensor:
    """``F.conv2d(x, weight, bias, stride=stride)`` (no padding, no dilation, groups 1), with the
    backward described in the module docstring on CPU; plain ``F.conv2d`` elsewhere.

    x : (B, C_in, H, W); weight : (C_out, C_in, k, k); bias : (C_out,) or None.
    """
    if x.device.type != "cpu" or stride == 1 or not torch.is_grad_enabled():
        return F.conv2d(x, weight, bias, stride=stride)
    return _StridedConv2d.apply(x, weight, bias, stride)


def patch_weight(weight: Tensor) -> Tensor:
    """(C_out, C_in, k, k) -> (C_out, k*k*C_in), columns ordered (ky, kx, c_in), contiguous.

    (MKL multiplies by its transpose faster than by a (k*k*C_in, C_out) copy.)
    """
    return weight.permute(0, 2, 3, 1).reshape(weight.shape[0], -1).contiguous()


def im2col_conv2d(x: Tensor, packed: Tensor, bias: Tensor | None, kernel: int, stride: int) -> Tensor:
    """Convolution as one matrix product over channels-last patches (no padding, no dilation).

    x : (B, C_in, H, W), any memory format; packed : :func:`patch_weight` of the
    (C_out, C_in, k, k) weight; bias : (C_out,) or None.
    Returns (B, H_out, W_out, C_out), channels last (note: not NCHW).
    """
    batch = x.shape[0]
    patches = x.permute(0, 2, 3, 1).unfold(1, kernel, stride).unfold(2, kernel, stride)  # (B, h, w, C, k, k)
    out_h, out_w = patches.shape[1], patches.shape[2]
    cols = patches.permute(0, 1, 2, 4, 5, 3).reshape(batch * out_h * out_w, -1)  # (B*h*w, k*k*C)
    out = torch.addmm(bias, cols, packed.t()) if bias is not None else cols @ packed.t()
    return out.reshape(batch, out_h, out_w, -1)
