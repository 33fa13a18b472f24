"""PrimaryCaps' strided convolution, fast in the two ways capsviz runs it on a CPU.

Training and batch evaluation (many images): the convolution theorem, with the DFTs
written as small matrix products. Inference of a few images (the explorer: one image per
stroke): one matrix product over channels-last patches, with the weight laid out once.

Spectral path (:func:`spectral_conv2d`).

PrimaryCaps is a 256 -> 256, 9x9, stride-2 convolution of a 20x20 map: 191.1 M
multiply-adds per image, 95 % of the network's forward cost, three times over in
training. Its 6x6 outputs only read the first 19 rows and columns, so a 19-point DFT
per axis holds the whole valid correlation without wrap-around, and

    Y(k) = X(k) * conj(W(k))          (correlation theorem, per frequency k)
    y[2m, 2n] = inverse DFT of Y at the strided positions only.

The input and the kernels are real, so 19 x 10 frequencies suffice (the others are
complex conjugates). Per frequency the channel contraction is one complex matrix
product (B, 256) @ (256, 256); with Gauss's three-multiplication form of the complex
product it costs 3 real products, 3 x 190 x 256 x 256 = 37.4 M multiply-adds per image
against 191.1 M for the direct convolution (5.1x fewer). The DFTs themselves are
separable real matrices (a 20-point row transform, then a 19-point column transform),
applied to data laid out (H, W, B, C) in memory, so that each transform is one
product over all B x C columns, and folded together with the three Gauss
combinations; the inverse goes straight to the 36 strided outputs. The
backward pass applies the transposed matrices in reverse order (written out, so the
saved spectra are reused and nothing else is kept).

The result equals ``torch.nn.functional.conv2d`` up to float rounding (relative error
about 1e-6 in float32; a unit test compares values and gradients, and gradcheck passes
in float64). ``benchmarks/train_speed.py`` measures the effect on a training step.

Few images. For one image oneDNN's direct convolution runs at about a third of the
machine's matrix-product rate, since it reorders the 21 MB weight on every call. Writing
the convolution as (B*36, 81*256) patches @ (81*256, 256) weight, with the weight permuted
to (out, ky, kx, in) once, takes about 2.3 ms instead of 6 ms per image
(``benchmarks/interactive.py``).

Winograd path (:func:`winograd_conv2d`), for a few 36x36 pairs. A pair's PrimaryCaps
reads a 28x28 map into a 10x10 grid: 530 M multiply-adds, a (100 x 20,736) @ (20,736 x
256) product that already runs near the machine's float32 rate. The stride-2 9x9
convolution is the sum of four stride-1 convolutions of the map's polyphase components
(even or odd rows and columns) with 5x5, 5x4, 4x5 and 4x4 kernels; Winograd's minimal
filtering F(2 x 2, 5 x 5) computes each 2x2 block of outputs from 6 x 6 = 36 products
instead of 100, one batched product of (tiles, 4 * 256) @ (4 * 256, 256) per point, with
the kernels transformed once (Lavin & Gray, CVPR 2016). That is 236 M multiply-adds, and
the pass of a pair's PrimaryCaps takes about 0.7 times as long
(``benchmarks/primary_winograd.py``). A digit's 6x6 grid takes it too where the
products do not run AVX-512 code at full width, and saves a quarter of the time there; on
an Intel CPU with AVX-512 it keeps the im2col product, for which the Winograd form saves a
few per cent (:func:`use_winograd`). A CPU whose bfloat16 products are the faster
(``capsviz.runtime.bf16_inference``) keeps the bfloat16 im2col product for both.
"""

from __future__ import annotations

import functools
import math
import threading
import time

import torch
import torch.nn.functional as F
from torch import Tensor

from capsviz.model.routing import REDUCED
from capsviz.runtime import avx512_products

IM2COL_MAX_BATCH = 8  # no-grad batches up to this size take the im2col path
# From these batch sizes on the spectral path beats oneDNN's direct convolution (measured
# on 2 cores: at 16 images with gradients 117 vs 164 ms, without 49 vs 39 ms; at 32
# without, 69 vs 87 ms). Below them the kernel spectra cost more than they save.
SPECTRAL_MIN_BATCH_GRAD = 12
SPECTRAL_MIN_BATCH_NO_GRAD = 24


def use_spectral(x: Tensor) -> bool:
    """Whether PrimaryCaps should take :func:`spectral_conv2d` for input ``x`` (B, C, H, W)."""
    if x.device.type != "cpu":
        return False
    return x.shape[0] >= (SPECTRAL_MIN_BATCH_GRAD if torch.is_grad_enabled() else SPECTRAL_MIN_BATCH_NO_GRAD)


@functools.lru_cache(maxsize=8)
def _dft_matrices(height: int, width: int, kernel: int, stride: int):
    """The real matrices of the spectral convolution, in float64.

    Frequencies k1 in [0, nh) (columns, full complex DFT) and k2 in [0, kw) (rows, the
    half spectrum of a real signal), with nh, nw the spans the strided outputs read.
    Returns ((oh, ow, nh, kw), t_row, t_col_x, t_row_w, t_col_w, t_inv):

    - t_row (2*kw, width): row DFT, output rows (re/im, k2); columns >= nw are zero;
    - t_col_x (3*nh, 2*height): column DFT of the input spectrum, input (r, re/im),
      output (t, k1) with t = (Xr + Xi, Xr, Xi), the Gauss factors of the input;
    - t_row_w (2*kw, kernel), t_col_w (3*nh, 2*kernel): the same for a kernel, with
      t = (Wr, -Wi - Wr, Wr - Wi);
    - t_inv (oh*ow, 3*nh*kw): from the three Gauss products P_t to the strided outputs:
      y = sum_k c_k / (nh*nw) * Re(Y e^{+i phi}), Yr = P0 - P2, Yi = P0 + P1.
    """
    oh = (height - kernel) // stride + 1
    ow = (width - kernel) // stride + 1
    nh = (oh - 1) * stride + kernel
    nw = (ow - 1) * stride + kernel
    kw = nw // 2 + 1
    f64 = torch.float64
    k1 = torch.arange(nh, dtype=f64)
    k2 = torch.arange(kw, dtype=f64)

    def row_dft(size: int) -> Tensor:  # A = sum_s a[s] e^{-2 pi i k2 s / nw}
        s = torch.arange(size, dtype=f64)
        ang = 2 * math.pi * k2[:, None] * s[None, :] / nw
        keep = (s < nw).to(f64)
        return torch.cat([torch.cos(ang) * keep, -torch.sin(ang) * keep], 0)

    def col_dft(size: int) -> tuple[Tensor, Tensor]:  # X = sum_r A[r] e^{-2 pi i k1 r / nh}, as (Re, Im) rows
        r = torch.arange(size, dtype=f64)
        ang = 2 * math.pi * k1[:, None] * r[None, :] / nh
        keep = (r < nh).to(f64)
        cos, sin = torch.cos(ang) * keep, torch.sin(ang) * keep
        re = torch.stack([cos, sin], -1).reshape(nh, 2 * size)  # Re X = sum Ar cos + Ai sin
        im = torch.stack([-sin, cos], -1).reshape(nh, 2 * size)  # Im X = sum Ai cos - Ar sin
        return re, im

    xr, xi = col_dft(height)
    wr, wi = col_dft(kernel)
    p = torch.arange(oh, dtype=f64) * stride
    q = torch.arange(ow, dtype=f64) * stride
    phi = (
        2
        * math.pi
        * (
            k1[:, None, None, None] * p[None, None, :, None] / nh
            + k2[None, :, None, None] * q[None, None, None, :] / nw
        )
    )  # (nh, kw, oh, ow)
    weight = torch.full((kw,), 2.0, dtype=f64)  # k2 and nw - k2 both stand for ...
    weight[0] = 1.0  # ... except the real DC column
    if nw % 2 == 0:
        weight[-1] = 1.0  # and the Nyquist column
    scale = (weight / (nh * nw))[None, :, None, None]
    cos = (scale * torch.cos(phi)).reshape(nh * kw, oh * ow)
    sin = (scale * torch.sin(phi)).reshape(nh * kw, oh * ow)
    t_inv = torch.cat([cos - sin, -sin, -cos], 0).t()
    return (
        (oh, ow, nh, kw),
        row_dft(width),
        torch.cat([xr + xi, xr, xi], 0),
        row_dft(kernel),
        torch.cat([wr, -wi - wr, wr - wi], 0),
        t_inv,
    )


def _matrices(height: int, width: int, kernel: int, stride: int, like: Tensor):
    dims, *mats = _dft_matrices(height, width, kernel, stride)
    return dims, [m.to(dtype=like.dtype, device=like.device).contiguous() for m in mats]


# oneDNN's 1-D convolution takes over a small-by-wide product where it runs at least this
# many times as fast as MKL's (wide_product)
CONV1D_MIN_SPEEDUP = 1.15


@functools.lru_cache(maxsize=32)
def conv1d_is_faster(m: int, k: int, n: int) -> bool:
    """Whether oneDNN's 1-D convolution computes a float32 (m, k) @ (k, n) product at least
    ``CONV1D_MIN_SPEEDUP`` times as fast as ``torch.mm`` (MKL) on this CPU, on the calling
    thread's intra-op threads: the best of three timings of each, taking turns, on random
    data, once per shape and process (the inverse DFT of a training batch: about 0.15 s)."""
    a, b = torch.randn(m, k), torch.randn(k, n)
    ways = {"mm": lambda: torch.mm(a, b), "conv1d": lambda: F.conv1d(b.view(1, k, n), a.view(m, k, 1))}
    best = dict.fromkeys(ways, math.inf)
    for way in ways.values():
        way()  # warm-up
    for _ in range(3):
        for name, way in ways.items():
            start = time.perf_counter()
            way()
            best[name] = min(best[name], time.perf_counter() - start)
    return best["conv1d"] * CONV1D_MIN_SPEEDUP < best["mm"]


def wide_product(a: Tensor, b: Tensor) -> Tensor:
    """``a @ b`` for a small matrix ``a`` (M, K) and a wide one ``b`` (K, N): in float32 on
    the CPU through oneDNN's 1-D convolution (kernel 1, ``b`` as K channels of N points)
    where :func:`conv1d_is_faster` for this shape, else ``torch.mm``. Returns (M, N),
    contiguous; the two agree to float rounding.

    Why: the spectral path's inverse DFT, (36 x 570) @ (570 x 32,768) for a batch of 128, and
    its transpose in the backward pass are such products. On a 2-core AMD EPYC (Zen 2) MKL
    runs them at 45 GFLOP/s (28 ms each), the convolution at 85 (15 ms): 3-4 % of a training
    step. On other CPUs MKL may be the faster, so each shape is measured once.
    """
    (m, k), n = a.shape, b.shape[1]
    if a.device.type == "cpu" and a.dtype == torch.float32 and conv1d_is_faster(m, k, n):
        return F.conv1d(b.reshape(1, k, n), a.reshape(m, k, 1)).view(m, n)
    return torch.mm(a, b)


class _SpectralConv2d(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: Tensor, weight: Tensor, bias: Tensor | None, stride: int) -> Tensor:
        batch, c_in, height, width = x.shape
        c_out, _, k, _ = weight.shape
        (oh, ow, nh, kw), (t_row, t_col_x, t_row_w, t_col_w, t_inv) = _matrices(height, width, k, stride, x)
        n_freq = 3 * nh * kw  # three Gauss factors per frequency
        # input spectrum, Gauss factors: (3F, B, C_in), each transform one product over all
        # B * C_in columns
        xl = x.permute(2, 3, 0, 1).contiguous()  # (H, W, B, C_in); free when x is laid out so
        a = torch.bmm(t_row.expand(height, 2 * kw, width), xl.view(height, width, batch * c_in))  # (H, 2*kw, B*C_in)
        x3t = torch.mm(t_col_x, a.view(2 * height, kw * batch * c_in)).view(n_freq, batch, c_in)
        # kernel spectra, Gauss factors: (3F, C_out, C_in). MKL's float32 row transform reads
        # the weight as stored, through a (k, k, C_out*C_in) view; oneDNN would copy that view
        # on every call, so the reduced types lay it out once, after halving it (a 2-D transpose)
        wk = weight.to(x.dtype).reshape(c_out * c_in, k * k).t()  # (k*k, C_out*C_in)
        if wk.dtype in REDUCED:
            wk = wk.contiguous()
        aw = torch.bmm(t_row_w.expand(k, 2 * kw, k), wk.view(k, k, c_out * c_in))  # (k, 2*kw, C_out*C_in)
        w3 = torch.mm(t_col_w, aw.view(2 * k, kw * c_out * c_in)).view(n_freq, c_out, c_in)
        p = torch.bmm(x3t, w3.transpose(1, 2))  # (3F, B, C_out): the three real products per frequency
        # to the strided outputs in one product over all B * C_out columns, then (B, oh*ow, C_out)
        y = wide_product(t_inv, p.view(n_freq, batch * c_out)).view(oh * ow, batch, c_out).transpose(0, 1).contiguous()
        if bias is not None:
            y = y + bias
        ctx.save_for_backward(x3t, w3)
        ctx.shape = (batch, c_in, height, width, c_out, k, stride)
        ctx.has_bias = bias is not None
        return y.view(batch, oh, ow, c_out)

    @staticmethod
    def backward(ctx, grad_y: Tensor):
        x3t, w3 = ctx.saved_tensors
        batch, c_in, height, width, c_out, k, stride = ctx.shape
        grad_y = grad_y.to(x3t.dtype)  # the spectra's type: float32, or autocast's bfloat16
        (oh, ow, nh, kw), (t_row, t_col_x, t_row_w, t_col_w, t_inv) = _matrices(height, width, k, stride, x3t)
        n_freq = 3 * nh * kw
        grad_y = grad_y.reshape(batch, oh * ow, c_out)
        grad_yt = grad_y.transpose(0, 1).reshape(oh * ow, batch * c_out)  # (oh*ow, B * C_out)
        grad_p = wide_product(t_inv.t(), grad_yt).view(n_freq, batch, c_out)  # (3F, B, C_out)
        grad_x = grad_w = grad_b = None
        if ctx.needs_input_grad[0]:
            grad_x3 = torch.bmm(grad_p, w3)  # (3F, B, C_in)
            grad_a = torch.mm(t_col_x.t(), grad_x3.view(3 * nh, kw * batch * c_in))  # (2H, kw*B*C_in)
            grad_xl = torch.bmm(t_row.t().expand(height, width, 2 * kw), grad_a.view(height, 2 * kw, batch * c_in))
            grad_x = grad_xl.view(height, width, batch, c_in).permute(2, 3, 0, 1)  # (H, W, B, C_in) in memory
        if ctx.needs_input_grad[1]:
            # (3F, C_out, C_in): MKL runs this orientation 1.6x faster than (C_in, B) @ (B, C_out)
            grad_w3 = torch.bmm(grad_p.transpose(1, 2), x3t)
            grad_aw = torch.mm(t_col_w.t(), grad_w3.view(n_freq // kw, kw * c_out * c_in))  # (2k, kw*C_out*C_in)
            grad_wl = torch.matmul(t_row_w.t(), grad_aw.view(k, 2 * kw, c_out * c_in))  # (k, k, C_out*C_in)
            grad_w = grad_wl.view(k, k, c_out, c_in).permute(2, 3, 0, 1).contiguous()
        if ctx.has_bias and ctx.needs_input_grad[2]:
            grad_b = grad_y.sum(dim=(0, 1))
        return grad_x, grad_w, grad_b, None


def spectral_conv2d(x: Tensor, weight: Tensor, bias: Tensor | None, stride: int) -> Tensor:
    """``F.conv2d(x, weight, bias, stride=stride)`` through the correlation theorem (see the
    module docstring); no padding, no dilation, groups 1, square kernel.

    Parameters
    ----------
    x : Tensor, float32 or float64, (B, C_in, H, W), any strides; laid out (H, W, B, C_in)
        in memory (``CapsNet``'s Conv1 output in training) it is read without a copy
    weight : Tensor, (C_out, C_in, k, k); bias : Tensor (C_out,) or None
    stride : int >= 1

    Returns
    -------
    Tensor, (B, H_out, W_out, C_out), channels last (note: not NCHW). Differentiable in
    x, weight and bias; the gradient of x is laid out (H, W, B, C_in) in memory.
    """
    return _SpectralConv2d.apply(x, weight, bias, stride)


def patch_weight(weight: Tensor) -> Tensor:
    """(C_out, C_in, k, k) -> (k*k*C_in, C_out), rows ordered (ky, kx, c_in), contiguous.

    The layout the few-image product reads fastest: on one thread (the explorer's inference
    thread) a (36 x 20,736) @ (20,736 x 256) product takes 2.7 ms with it against 3.7 ms with
    the transpose of a (C_out, k*k*C_in) copy, and as long on two (2-core Xeon, AVX-512).
    """
    return weight.permute(2, 3, 1, 0).reshape(-1, weight.shape[0]).contiguous()


# Scratch matrices up to this size (im2col's patch rows, each of the Winograd path's three
# transformed inputs) are written into buffers that the calling thread keeps, one per use
# and type (:func:`_patch_buffer`); larger ones are allocated per call.
PATCH_BUFFER_MAX_BYTES = 16 << 20


class _PatchBuffers(threading.local):
    """Per thread: (use, dtype) -> the scratch buffer that thread keeps for that use."""

    def __init__(self) -> None:
        self.kept: dict[tuple[str, torch.dtype], Tensor] = {}


_patch_buffers = _PatchBuffers()


def _patch_buffer(numel: int, dtype: torch.dtype, device: torch.device, use: str) -> Tensor | None:
    """The calling thread's scratch buffer for ``numel`` elements of ``dtype`` (the first
    ``numel`` of one it keeps per ``use`` and type, grown when too small), or None for a
    request over ``PATCH_BUFFER_MAX_BYTES`` or a device other than the CPU. ``use`` names
    a buffer for one purpose: ``patches`` (im2col's rows), or each of the Winograd path's
    three transformed inputs (``winograd-columns``, ``winograd-rows``, ``winograd-points``).

    Why: the app maps every block of 4 MiB or more on its own and unmaps it when freed
    (``capsviz.runtime.release_freed_memory``), so a pair's patch matrix (100 x 20,736
    float32, 8.3 MB) allocated per pass is mapped and page-faulted anew each time: the copy
    into it takes 1.66 ms against 0.23 ms into the kept buffer (2-core Xeon without AMX).
    """
    if device.type != "cpu" or numel * dtype.itemsize > PATCH_BUFFER_MAX_BYTES:
        return None
    buffers = _patch_buffers.kept
    buf = buffers.get((use, dtype))
    if buf is None or buf.numel() < numel:
        with torch.inference_mode(False):  # a normal tensor: writable in and outside inference mode
            buf = buffers[use, dtype] = torch.empty(numel, dtype=dtype)
    return buf[:numel]


def _scratch(shape: tuple[int, ...], dtype: torch.dtype, device: torch.device, use: str) -> Tensor:
    """An uninitialised tensor of ``shape`` and ``dtype``: the calling thread's
    :func:`_patch_buffer` for ``use`` where it has one, else a new one."""
    buf = _patch_buffer(math.prod(shape), dtype, device, use)
    return torch.empty(shape, dtype=dtype, device=device) if buf is None else buf.view(shape)


def _patch_columns(x: Tensor, kernel: int, stride: int, dtype: torch.dtype | None = None) -> tuple[Tensor, int, int]:
    """The channels-last patches of ``x`` (B, C_in, H, W) as rows: ((B*h*w, k*k*C_in), h, w),
    in ``dtype`` (default x's). On the CPU, up to ``PATCH_BUFFER_MAX_BYTES``, the rows are
    the calling thread's :func:`_patch_buffer`: valid until that thread's next call."""
    patches = x.permute(0, 2, 3, 1).unfold(1, kernel, stride).unfold(2, kernel, stride)  # (B, h, w, C, k, k)
    batch, out_h, out_w = patches.shape[:3]
    rows = patches.permute(0, 1, 2, 4, 5, 3)  # (B, h, w, k, k, C)
    buf = _scratch(rows.shape, dtype or x.dtype, x.device, "patches")
    buf.copy_(rows)
    return buf.view(batch * out_h * out_w, -1), out_h, out_w


# Up to this many patch rows (4 digits, 1 pair) the product is split along its inner
# dimension, one part per intra-op thread (:func:`split_product`).
SPLIT_MAX_ROWS = 144


def split_product(cols: Tensor, packed: Tensor, bias: Tensor | None, max_rows: int = SPLIT_MAX_ROWS) -> Tensor:
    """``cols @ packed + bias`` for a few rows, with the inner dimension K cut into one
    part per intra-op thread: a batched product of the parts, then their sum.

    cols : (M, K); packed : (K, N) contiguous; bias : (N,) or None. Returns (M, N) in
    their dtype. Split for M <= ``max_rows`` on more than one thread (when the thread
    count divides K); otherwise one ``addmm``. The sum's order differs from one product's,
    so the result differs from it by float rounding only (about 1e-7 relative in float32).

    Why: with few rows the one product leaves the second core half idle. On 2 threads
    (2-core Xeon without AMX, AVX-512) a (36 x 20,736) @ (20,736 x 256) product, one digit's
    PrimaryCaps, takes 1.43 ms split against 1.93 ms whole, a pair's 100 rows 3.57 against
    4.09 ms; from 200 rows on the two are even (``benchmarks/primary_product.py``, medians
    of 60, the two taking turns).
    """
    parts = torch.get_num_threads()
    rows, inner = cols.shape
    if parts < 2 or rows > max_rows or inner % parts:
        return torch.addmm(bias, cols, packed) if bias is not None else cols @ packed
    out = torch.bmm(cols.reshape(rows, parts, -1).transpose(0, 1), packed.reshape(parts, -1, packed.shape[1])).sum(0)
    return out.add_(bias) if bias is not None else out


def im2col_conv2d(x: Tensor, packed: Tensor, bias: Tensor | None, kernel: int, stride: int) -> Tensor:
    """Convolution as one matrix product over channels-last patches (no padding, no dilation),
    by :func:`split_product`.

    x : (B, C_in, H, W), any memory format; packed : :func:`patch_weight` of the
    (C_out, C_in, k, k) weight; bias : (C_out,) or None.
    Returns (B, H_out, W_out, C_out), channels last (note: not NCHW).
    """
    cols, out_h, out_w = _patch_columns(x, kernel, stride)
    return split_product(cols, packed, bias).reshape(x.shape[0], out_h, out_w, -1)


def patch_weight_bf16(weight: Tensor) -> Tensor:
    """:func:`patch_weight` in bfloat16: (C_out, C_in, k, k) -> (k*k*C_in, C_out), the layout
    oneDNN's bfloat16 product (AMX, AVX-512 BF16) reads fastest."""
    return patch_weight(weight).to(torch.bfloat16)


def im2col_conv2d_bf16(x: Tensor, packed: Tensor, bias: Tensor | None, kernel: int, stride: int) -> Tensor:
    """:func:`im2col_conv2d` with the product in bfloat16 (8-bit mantissas in, float32 sums,
    the result rounded to bfloat16 and returned as float32 with ``bias`` added in float32):
    ``packed`` is :func:`patch_weight_bf16` of the weight. For CPUs with bfloat16 units."""
    cols, out_h, out_w = _patch_columns(x, kernel, stride, torch.bfloat16)
    out = (cols @ packed).float()
    if bias is not None:
        out += bias
    return out.reshape(x.shape[0], out_h, out_w, -1)


# Winograd path: F(m x m, r x r) on the stride-s polyphase components (module docstring).
WINOGRAD_TILE = 2  # m: outputs per tile side
WINOGRAD_POINTS = (0.0, 1.0, -1.0, 2.0, -0.5)  # and infinity; the first n - 1 are used
WINOGRAD_MIN_GRID = 10  # a few images' pass takes this path from this grid side on (use_winograd)


@functools.lru_cache(maxsize=4)
def winograd_matrices(m: int, r: int) -> tuple[Tensor, Tensor, Tensor]:
    """The Toom-Cook matrices of the 1-D correlation F(m, r), in float64.

    With n = m + r - 1 evaluation points (the first n - 1 of ``WINOGRAD_POINTS``, then
    infinity), the m outputs ``y[t] = sum_a g[a] d[t + a]`` of an r-tap filter g over n
    inputs d are ``y = A_T @ ((G @ g) * (B_T @ d))``: n multiplications instead of m * r.
    This is the transpose of the linear convolution evaluated at the points and
    interpolated back (Lavin & Gray, "Fast Algorithms for Convolutional Neural Networks",
    CVPR 2016, Sec. 4).

    Returns A_T (m, n), G (n, r), B_T (n, n). Raises ``ValueError`` when n - 1 exceeds the
    points there are.
    """
    n = m + r - 1
    if n - 1 > len(WINOGRAD_POINTS):
        raise ValueError(f"F({m}, {r}) needs {n - 1} finite points; WINOGRAD_POINTS has {len(WINOGRAD_POINTS)}")
    points = WINOGRAD_POINTS[: n - 1]

    def evaluate(terms: int) -> Tensor:  # a polynomial's values at the points from its `terms` coefficients
        rows = [[p**e for e in range(terms)] for p in points] + [[0.0] * (terms - 1) + [1.0]]  # infinity: the top one
        return torch.tensor(rows, dtype=torch.float64)

    return evaluate(m).t().contiguous(), evaluate(r), torch.linalg.inv(evaluate(n)).t().contiguous()


def _winograd_shape(kernel: int, stride: int) -> tuple[int, int, int]:
    """(m, r, n): tile side, polyphase taps ceil(k / s), points m + r - 1."""
    m, r = WINOGRAD_TILE, -(-kernel // stride)
    return m, r, m + r - 1


def winograd_fits(height: int, width: int, kernel: int, stride: int) -> bool:
    """Whether :func:`winograd_conv2d` computes this convolution: a kernel at least as wide
    as the stride, enough points for F(m, r), each output side a multiple of the tile, and
    the last tile's zero-padded taps still inside the map (a pair's PrimaryCaps, 28 -> 10,
    and a digit's, 20 -> 6, with 9x9 kernels at stride 2)."""
    m, r, n = _winograd_shape(kernel, stride)
    if kernel < stride or n - 1 > len(WINOGRAD_POINTS):
        return False
    for side in (height, width):
        grid = (side - kernel) // stride + 1
        if grid < m or grid % m or stride * (grid + r - 1) > side:
            return False
    return True


def use_winograd(x: Tensor, kernel: int, stride: int) -> bool:
    """Whether PrimaryCaps' few-image pass should take :func:`winograd_conv2d` for input
    ``x`` (B, C, H, W): float32, :func:`winograd_fits`, and either an output grid of at
    least ``WINOGRAD_MIN_GRID`` (a pair's 10x10) or products that do not run AVX-512 code
    at full width (:func:`capsviz.runtime.avx512_products`).

    A digit's 6x6 grid (``benchmarks/primary_winograd.py``, one image, 2-core Xeon without
    AMX): the Winograd path takes 0.69-0.76 times the im2col product's time with MKL capped
    at AVX2 (``MKL_ENABLE_INSTRUCTIONS=AVX2``, with or without ATen and oneDNN capped too),
    0.85-0.97 times uncapped. There, a few per cent of a 3 ms pass are not worth a second
    37.7 MB weight remade, at 42-71 ms against im2col's 16-31 ms, at every weight snapshot
    of a training run in the app (one a second)."""
    height, width = x.shape[2:]
    grid = min((height - kernel) // stride, (width - kernel) // stride) + 1
    if x.dtype != torch.float32 or not winograd_fits(height, width, kernel, stride):
        return False
    return grid >= WINOGRAD_MIN_GRID or not avx512_products()


def winograd_weight(weight: Tensor, stride: int) -> Tensor:
    """The kernels in the Winograd domain: (C_out, C_in, k, k) -> U (n*n, s*s*C_in, C_out)
    contiguous, in the weight's dtype; rows (xi, nu, alpha, beta, c_in) of
    ``U = G w_ab G^T`` for the s*s polyphase kernels ``w_ab = w[:, :, s*a + alpha, s*b + beta]``
    (ceil(k / s) or fewer taps a side; G's columns for taps past k are not used).

    For a pair's PrimaryCaps n = 6: 36 x 1,024 x 256, 37.7 MB in float32 against the
    weight's 21.2 MB, made in 36-45 ms on 2 cores (rounding about 1e-7 of the largest value).
    """
    c_out, c_in, k, _ = weight.shape
    m, r, n = _winograd_shape(k, stride)
    g = winograd_matrices(m, r)[1].to(weight.dtype)
    taps = weight.permute(2, 3, 1, 0).contiguous().view(k, k, c_in * c_out)  # (ky, kx, c_in*c_out)
    u = weight.new_empty((n, n, stride, stride, c_in * c_out))
    for alpha in range(stride):
        rows = taps[alpha::stride]  # (a, kx, C_in*C_out): ky = s*a + alpha
        by_rows = torch.mm(g[:, : rows.shape[0]], rows.reshape(rows.shape[0], -1)).view(n, k, -1)  # (xi, kx, ...)
        for beta in range(stride):
            cols = by_rows[:, beta::stride]  # (xi, b, C_in*C_out): kx = s*b + beta
            u[:, :, alpha, beta] = torch.matmul(g[:, : cols.shape[1]], cols)  # (xi, nu, C_in*C_out)
    return u.view(n * n, stride * stride * c_in, c_out)


@functools.lru_cache(maxsize=8)
def _winograd_maps(
    height: int, width: int, kernel: int, stride: int, dtype: torch.dtype
) -> tuple[Tensor, Tensor, Tensor]:
    """The data transforms of :func:`winograd_conv2d` as matrices of ``dtype``.

    rows (T_h*n*s, H) and cols (T_w*n*s, W): row (P, xi, alpha) holds B_T[xi, rho] at
    pixel s*m*P + s*rho + alpha, so one product takes every tile's polyphase inputs of one
    axis to the Winograd domain; out (m*m, n*n) = A_T kron A_T, from the points to a tile's
    m x m outputs.
    """
    m, r, n = _winograd_shape(kernel, stride)
    a_t, _, b_t = winograd_matrices(m, r)

    def band(side: int) -> Tensor:
        tiles = ((side - kernel) // stride + 1) // m
        mat = torch.zeros(tiles, n, stride, side, dtype=torch.float64)
        for p in range(tiles):
            for alpha in range(stride):
                mat[p, :, alpha, stride * m * p + alpha : stride * (m * p + n) : stride] = b_t
        return mat.reshape(tiles * n * stride, side).to(dtype)

    return band(height), band(width), torch.kron(a_t, a_t).to(dtype)


def winograd_conv2d(x: Tensor, u: Tensor, bias: Tensor | None, kernel: int, stride: int) -> Tensor:
    """A strided convolution (no padding, no dilation) through Winograd's minimal filtering
    F(2 x 2, r x r) on its s x s polyphase components, without gradients (the transforms
    write into buffers the calling thread keeps).

    x : (B, C_in, H, W) float32 or float64, on the CPU, any memory format (channels-last is
    read in place); u : :func:`winograd_weight` of the (C_out, C_in, k, k) weight, x's
    dtype; bias : (C_out,) or None. Returns (B, H_out, W_out, C_out) in x's dtype,
    channels last (note: not NCHW). In float32 it equals ``conv2d`` to 2e-6 to 4e-6 of the
    largest output (a unit test checks it against float64).

    Raises
    ------
    ValueError
        If :func:`winograd_fits` is False for this shape, or x or u requires a gradient
        while gradients are on.

    Each tile's 2 x 2 outputs of every polyphase component come from n x n products
    instead of 2 x 2 x r x r, summed over the components and channels together: n*n
    batched (B*T*T, s*s*C_in) @ (s*s*C_in, C_out) products. For a pair's PrimaryCaps
    (n = 6, 25 tiles of the 10 x 10 grid) that is 236 M multiply-adds per pair against
    530 M for the direct convolution. The data transforms are products with banded
    matrices (:func:`_winograd_maps`) and one re-layout into the points' order, in buffers
    the calling thread keeps (:func:`_scratch`).
    """
    batch, c_in, height, width = x.shape
    if not winograd_fits(height, width, kernel, stride):
        raise ValueError(f"no Winograd path for a {kernel}x{kernel} stride-{stride} convolution of {height}x{width}")
    if torch.is_grad_enabled() and (x.requires_grad or u.requires_grad):
        raise ValueError("winograd_conv2d computes without gradients; call it under torch.no_grad()")
    m, _, n = _winograd_shape(kernel, stride)
    rows, cols, out = _winograd_maps(height, width, kernel, stride, x.dtype)
    tiles_h, tiles_w = rows.shape[0] // (n * stride), cols.shape[0] // (n * stride)
    # the columns' transform, then the rows': (B*H, T_w*n*s, C_in), then (B, T_h*n*s, T_w*n*s*C_in)
    x_rows = x.permute(0, 2, 3, 1).reshape(batch * height, width, c_in)  # a view when x is channels-last
    z = _scratch((batch * height, cols.shape[0], c_in), x.dtype, x.device, "winograd-columns")
    z = torch.bmm(cols.expand(batch * height, -1, -1), x_rows, out=z).view(batch, height, -1)
    v = _scratch((batch, rows.shape[0], z.shape[2]), x.dtype, x.device, "winograd-rows")
    v = torch.bmm(rows.expand(batch, -1, -1), z, out=v)
    v = v.view(batch, tiles_h, n, stride, tiles_w, n, stride, c_in).permute(2, 5, 0, 1, 4, 3, 6, 7)
    points = _scratch(v.shape, x.dtype, x.device, "winograd-points")  # (xi, nu) | (b, P, Q) | (alpha, beta, c)
    points.copy_(v)
    prod = torch.bmm(points.view(n * n, batch * tiles_h * tiles_w, -1), u)  # (n*n, B*T_h*T_w, C_out)
    y = torch.mm(out, prod.view(n * n, -1)).view(m, m, batch, tiles_h, tiles_w, -1)  # (t, u, b, P, Q, o)
    y = y.permute(2, 3, 0, 4, 1, 5).reshape(batch, tiles_h * m, tiles_w * m, -1)
    if bias is not None:
        y += bias
    return y
