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

The input and the kernels are real, so half the spectrum suffices: 10 frequencies along
the rows times 19 along the columns, of which the first row frequency's column is
Hermitian in turn, so it needs only 10. Per frequency the channel contraction is one
complex matrix product (B, 256) @ (256, 256); with Gauss's three-multiplication form of
the complex product it costs 3 real products (1 for the purely real DC frequency):
541 x 256 x 256 = 35.5 M multiply-adds per image against 191.1 M for the direct
convolution (5.4x fewer). The DFTs are separable real matrices applied to data laid out
(H, W, B, C) in memory: a real DFT along the rows, one product over all W x B x C
columns, then a complex DFT along the columns, one product per row frequency over all
B x C columns, folded together with the three Gauss combinations; the inverse takes
the two axes in turn too, straight to the 36 strided outputs. The kernels take the same
path from PrimaryCaps' weight, which is laid out (k, k, C_out, C_in) in memory so that
its transform and its gradient need no re-layout. The backward pass applies the
transposed matrices in reverse order (written out, so the saved spectra are reused and
nothing else is kept).

The result equals ``torch.nn.functional.conv2d`` up to float rounding (relative error
about 1e-6 in float32; a unit test compares values and gradients, and gradcheck passes
in float64). ``benchmarks/train_speed.py`` measures the effect on a training step.

In bfloat16 on a CPU with AMX the path takes a dense form (:func:`use_dense_dft`): each
transform is one dense real matrix (:func:`_dense_dft_matrices`), and each of the 181
frequencies kept (one of each conjugate pair) takes four real products instead of
Gauss's three: with X = Xr + i Xi and W = Wr + i Wi, the rows [Xr; Xi] (2B, C_in) of all
frequencies go through two batched products, @ Wr^T and @ Wi^T, and the inverse combines
Xr Wr + Xi Wi and Xi Wr - Xr Wi. A third more multiply-adds in the channel products, but
two thirds of the transforms' rows, and two contiguous batches of products of 2B rows,
which oneDNN runs at about 1,260 GFLOP/s in a training step on a 2-core Xeon with AMX,
against 730-920 for the Gauss form's B-row products (the kernels' gradient, whose
products read a transposed factor, at about 650 either way).

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

import torch
from torch import Tensor

from capsviz.model.routing import product_dtype
from capsviz.runtime import amx_products, avx512_products

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

    With nh, nw = (oh - 1) * stride + kernel, (ow - 1) * stride + kernel the spans the
    strided outputs read (the DFT lengths) and kh = nh // 2 + 1 half-spectrum frequencies,
    the spectrum is computed in two stages: a real DFT along the first axis (the input's
    rows, the kernel's ky), then a full complex DFT along the second axis, one frequency
    kh of the first stage at a time. At kh = 0 the first stage gives real values, whose
    spectrum along the second axis is Hermitian: only its frequencies k <= nw // 2 are
    kept, the real ones (k = 0, and k = nw / 2 for even nw) as one Gauss factor instead
    of three. The frequencies are ordered: the kh = 0 block (m0 rows), then (kh, t, k)
    for kh >= 1 (3 nw rows each), t indexing the three Gauss factors. That makes
    F = m0 + 3 nw (kh - 1) rows: 541 for MNIST (19-point spans), 1,093 for 36x36 pairs
    (27-point spans).

    Returns ((oh, ow, nw, kh, m0), half_x, full_x0, full_x, half_w, full_w0, full_w,
    inv_a0, inv_a, inv_b):

    - half_x (2kh - 1, height): the first stage; rows: kh = 0 (its real part only), then
      (kh, re/im) for kh >= 1; columns >= nh are zero;
    - full_x0 (m0, width): the second stage at kh = 0, from the real rows (k, t) with
      t = (Xr + Xi, Xr, Xi), the Gauss factors of the input (one row, Xr, for a real k);
    - full_x (3 nw, 2 * width): the second stage at each kh >= 1, input (re/im, column),
      output (t, k);
    - half_w (2kh - 1, kernel), full_w0 (m0, kernel), full_w (3 nw, 2 * kernel): the same
      for a kernel, with t = (Wr, -Wi - Wr, Wr - Wi);
    - inv_a0 (ow, m0), inv_a (2 ow, 3 nw): the inverse along the second axis, from the
      three Gauss products P_t of one kh to Z at the strided columns q, rows (re/im, q)
      (real at kh = 0): Z = sum_k Y e^{+i alpha}, Yr = P0 - P2, Yi = P0 + P1, each k at
      kh = 0 counted twice where it stands for its conjugate too;
    - inv_b (oh, 2kh - 1): the inverse along the first axis, from the Z of one column q,
      rows (kh = 0), then (kh, re/im), to its strided rows p: y = (Z(0) + sum_kh
      c_kh Re(Z e^{+i beta})) / (nh nw), c_kh = 2 but for the Nyquist row of an even nh.
    """
    oh = (height - kernel) // stride + 1
    ow = (width - kernel) // stride + 1
    nh = (oh - 1) * stride + kernel
    nw = (ow - 1) * stride + kernel
    kh = nh // 2 + 1
    f64 = torch.float64
    distinct = range(nw // 2 + 1)  # k at kh = 0: the others are their conjugates

    def gauss_ts(k: int) -> tuple[int, ...]:  # the Gauss factors kept at (0, k): one for a real value
        return (0,) if k == 0 or 2 * k == nw else (0, 1, 2)

    def half(size: int) -> Tensor:  # A[kh] = sum_s a[s] e^{-2 pi i kh s / nh}
        s = torch.arange(size, dtype=f64)
        ang = 2 * math.pi * torch.arange(1, kh, dtype=f64)[:, None] * s[None, :] / nh
        rows = torch.stack([torch.cos(ang), -torch.sin(ang)], 1).reshape(-1, size)  # (kh, re/im)
        return torch.cat([torch.ones(1, size, dtype=f64), rows], 0) * (s < nh).to(f64)

    def full(size: int, gauss) -> tuple[Tensor, Tensor]:  # X[k] = sum_r A[r] e^{-2 pi i k r / nw}
        r = torch.arange(size, dtype=f64)
        ang = 2 * math.pi * torch.arange(nw, dtype=f64)[:, None] * r[None, :] / nw
        keep = (r < nw).to(f64)
        cos, sin = torch.cos(ang) * keep, torch.sin(ang) * keep
        re = torch.cat([cos, sin], 1)  # Re X = sum Ar cos + Ai sin
        im = torch.cat([-sin, cos], 1)  # Im X = sum Ai cos - Ar sin
        factors = gauss(re, im)  # three (nw, 2 * size)
        rows0 = [factors[t][k, :size] for k in distinct for t in gauss_ts(k)]
        return torch.stack(rows0), torch.cat(factors, 0)

    full_x0, full_x = full(width, lambda re, im: (re + im, re, im))
    full_w0, full_w = full(kernel, lambda re, im: (re, -im - re, re - im))
    # the inverse, in two stages: along the second axis to the strided columns q, one
    # product per kh (Z, rows (re/im, q)), then along the first axis to the strided rows p
    q = torch.arange(ow, dtype=f64)[:, None] * stride
    k = torch.arange(nw, dtype=f64)[None, :]
    alpha = 2 * math.pi * k * q / nw  # (ow, nw)
    cos, sin = torch.cos(alpha), torch.sin(alpha)
    # Zr = sum_k Yr cos - Yi sin, Zi = sum_k Yr sin + Yi cos, with Yr = P0 - P2, Yi = P0 + P1
    inv_re = torch.cat([cos - sin, -sin, -cos], 1)  # (ow, 3 nw): columns (t, k)
    inv_im = torch.cat([sin + cos, cos, -sin], 1)
    inv_a = torch.cat([inv_re, inv_im], 0)  # (2 ow, 3 nw): rows (re/im, q)
    # kh = 0: Z is real, each k standing for its conjugate partner too (c_k = 2) unless real
    inv_a0 = torch.stack(
        [inv_re[:, t * nw + kk] * (1.0 if len(gauss_ts(kk)) == 1 else 2.0) for kk in distinct for t in gauss_ts(kk)], 1
    )  # (ow, m0)
    pp = torch.arange(oh, dtype=f64)[:, None] * stride
    beta = 2 * math.pi * torch.arange(1, kh, dtype=f64)[None, :] * pp / nh  # (oh, kh - 1)
    c = torch.where(2 * torch.arange(1, kh) == nh, 1.0, 2.0).to(f64)  # the Nyquist row of an even nh: 1
    # y = (Zr(0) + sum_kh c_kh (Zr cos beta - Zi sin beta)) / (nh nw)
    inv_b = torch.cat(
        [torch.ones(oh, 1, dtype=f64), torch.stack([c * torch.cos(beta), -c * torch.sin(beta)], 2).reshape(oh, -1)], 1
    )
    inv_b = inv_b / (nh * nw)  # (oh, 2kh - 1): columns (kh = 0), then (kh, re/im)
    return (
        (oh, ow, nw, kh, full_x0.shape[0]),
        half(height),
        full_x0,
        full_x,
        half(kernel),
        full_w0,
        full_w,
        inv_a0,
        inv_a,
        inv_b,
    )


def _matrices(height: int, width: int, kernel: int, stride: int, like: Tensor) -> list[Tensor]:
    """The matrices of :func:`_dft_matrices` (without its dims) in ``like``'s type and device."""
    _, *mats = _dft_matrices(height, width, kernel, stride)
    return [m.to(dtype=like.dtype, device=like.device).contiguous() for m in mats]


# A batched product of the second DFT stage computes each product's output in row blocks of
# at most this many bytes (_stage_products)
STAGE_BLOCK_BYTES = 16 << 20


def _stage_products(mat: Tensor, b: Tensor, out: Tensor) -> None:
    """``out[g] = mat @ b[g]`` for every g: mat (M, K), b (G, K, N), out (G, M, N) contiguous,
    as one batched product, or as batched products of row blocks where an output matrix
    exceeds ``STAGE_BLOCK_BYTES``.

    Why: on a 2-core AMD EPYC (Zen 2, L3 16 MiB) MKL takes 96-103 ms for a 36x36 pair's
    kernel spectra, 13 products (81 x 18) @ (18 x 65,536) whose outputs are 21 MB each,
    and 43 ms for them in two row blocks; the digits' (57 x 18) @ (18 x 65,536) products,
    15 MB each, take 18 ms whole and 20-22 ms split.
    """
    m, n = mat.shape[0], b.shape[2]
    blocks = -(-m * n * out.element_size() // STAGE_BLOCK_BYTES)
    step = -(-m // blocks)
    for start in range(0, m, step):
        rows = mat[start : start + step]
        torch.bmm(rows.expand(b.shape[0], -1, -1), b, out=out[:, start : start + step])


def _inverse(p: Tensor, inv_a0: Tensor, inv_a: Tensor, inv_b: Tensor) -> Tensor:
    """The spectral path's inverse DFT: the Gauss products p (F, N), frequencies ordered as
    in :func:`_dft_matrices`, to the strided outputs (oh, ow, N). Along the second axis
    first, one product per row frequency kh, to Z (2kh - 1, ow, N), rows (kh = 0), then
    (kh, re/im); then along the first axis, one product per output column q over Z's
    2kh - 1 rows of that column: 6,324 + 684 multiply-adds per column for MNIST, against
    36 x 541 = 19,476 in one dense product."""
    inv_a0, inv_a, inv_b = (m.to(p.dtype) for m in (inv_a0, inv_a, inv_b))  # p's type, or autocast's
    (ow, m0), (oh, rows) = inv_a0.shape, inv_b.shape
    n = p.shape[1]
    z = p.new_empty(rows, ow, n)
    torch.mm(inv_a0, p[:m0], out=z[0])
    groups = (rows - 1) // 2
    if groups:
        torch.bmm(inv_a.expand(groups, -1, -1), p[m0:].view(groups, -1, n), out=z[1:].view(groups, 2 * ow, n))
    y = p.new_empty(oh, ow, n)
    torch.bmm(inv_b.expand(ow, -1, -1), z.transpose(0, 1), out=y.transpose(0, 1))
    return y


def _inverse_transposed(grad_y: Tensor, inv_a0: Tensor, inv_a: Tensor, inv_b: Tensor) -> Tensor:
    """The transpose of :func:`_inverse`: grad_y (oh, ow, N) -> (F, N)."""
    (_, ow, n), (_, m0), rows = grad_y.shape, inv_a0.shape, inv_b.shape[1]
    grad_z = grad_y.new_empty(rows, ow, n)
    torch.bmm(inv_b.t().expand(ow, -1, -1), grad_y.transpose(0, 1), out=grad_z.transpose(0, 1))
    groups = (rows - 1) // 2
    grad_p = grad_y.new_empty(m0 + groups * inv_a.shape[1], n)
    torch.mm(inv_a0.t(), grad_z[0], out=grad_p[:m0])
    if groups:
        torch.bmm(
            inv_a.t().expand(groups, -1, -1), grad_z[1:].view(groups, 2 * ow, n), out=grad_p[m0:].view(groups, -1, n)
        )
    return grad_p


@functools.lru_cache(maxsize=8)
def _dense_dft_matrices(height: int, width: int, kernel: int, stride: int) -> tuple[Tensor, Tensor, Tensor]:
    """The dense path's DFTs, one real matrix per transform, in float64, over G frequencies:
    of the (nh, nw)-point spectrum (spans as in :func:`_dft_matrices`) one of each pair of
    conjugates, (kh, kw) <= (-kh mod nh, -kw mod nw) in lexicographic order, each weighted
    c = 1 where it is its own conjugate and c = 2 otherwise in the inverse. G = 181 for
    MNIST (19-point spans), 365 for 36x36 pairs (27-point spans).

    Returns (dft_x (2G, height * width), dft_w (2G, kernel * kernel), inv (oh * ow, 4G)):

    - ``dft_x @ x`` for an input laid out (height, width, N): Re X and Im X of each
      frequency, rows (g, re/im), X(k) = sum over the span of x[r, c] e^{-i theta},
      theta = 2 pi (kh r / nh + kw c / nw);
    - ``dft_w @ w`` for kernels laid out (kernel, kernel, N): Re W and Im W, rows
      (re/im, g);
    - ``inv @ p`` for the four real products per frequency p, rows (w re/im, g, x re/im),
      i.e. Xr Wr, Xi Wr, Xr Wi, Xi Wi: the strided outputs laid out (oh, ow, N), as
      y = sum_g c_g Re(X conj(W) e^{+i phi}) / (nh nw) (correlation theorem), phi = 2 pi
      (kh p / nh + kw q / nw) at the strided positions (p, q), with
      Re(X conj(W) e^{i phi}) = (Xr Wr + Xi Wi) cos phi - (Xi Wr - Xr Wi) sin phi.
    """
    oh, ow = (height - kernel) // stride + 1, (width - kernel) // stride + 1
    nh, nw = (oh - 1) * stride + kernel, (ow - 1) * stride + kernel
    f64 = torch.float64
    kept = [(a, b) for a in range(nh) for b in range(nw) if (a, b) <= (-a % nh, -b % nw)]
    ka = torch.tensor([a for a, _ in kept], dtype=f64)[:, None]
    kw = torch.tensor([b for _, b in kept], dtype=f64)[:, None]
    weight = torch.tensor([1.0 if (a, b) == (-a % nh, -b % nw) else 2.0 for a, b in kept], dtype=f64)

    def spectra(rows: int, cols: int) -> Tensor:  # (G, re/im, rows * cols), zero beyond the span
        r = torch.arange(rows, dtype=f64).repeat_interleave(cols)[None]
        c = torch.arange(cols, dtype=f64).repeat(rows)[None]
        theta = 2 * math.pi * (ka * r / nh + kw * c / nw)
        return torch.stack([torch.cos(theta), -torch.sin(theta)], 1) * ((r < nh) & (c < nw)).to(f64)

    dft_x = spectra(height, width).reshape(-1, height * width)
    dft_w = spectra(kernel, kernel).transpose(0, 1).reshape(-1, kernel * kernel)
    p = torch.arange(oh, dtype=f64).repeat_interleave(ow)[:, None] * stride
    q = torch.arange(ow, dtype=f64).repeat(oh)[:, None] * stride
    phi = 2 * math.pi * (p * ka.T / nh + q * kw.T / nw)  # (oh * ow, G)
    cos, sin = torch.cos(phi) * weight / (nh * nw), torch.sin(phi) * weight / (nh * nw)
    inv = torch.stack([torch.stack([cos, -sin], -1), torch.stack([sin, cos], -1)], 1).reshape(oh * ow, -1)
    return dft_x, dft_w, inv


def use_dense_dft(t: Tensor) -> bool:
    """Whether the spectral path takes its dense form (module docstring,
    :func:`_dense_dft_matrices`) for the spectra ``t``: bfloat16 on a CPU with AMX.

    Why: the two-stage DFTs are products of a small matrix by a wide one, (57 x 40) @
    (40 x 32,768) and the like, which oneDNN runs at 100-250 GFLOP/s on a 2-core Xeon with
    AMX, while one dense product per transform, (362 x 400) @ (400 x 32,768) for the input
    spectra of 128 digits, runs at 1,000-2,000 GFLOP/s there. On that Xeon
    (``benchmarks/spectral_dft.py``, bfloat16, the two forms taking turns) PrimaryCaps'
    forward and backward passes take 71.9 against 95.9 ms for 128 digits (60.4 against
    34.8 GFLOP), 153.8 against 171.0 ms for 128 pairs, and the dense form's relative error
    against float64 is the smaller, 4.8e-3 against 7.5e-3 (values and gradients). In
    float32, and in bfloat16 without AMX, the extra multiply-adds cost more than the
    products save (float32 on that Xeon: 268.8 against 182.9 ms for 128 digits).
    """
    return t.dtype == torch.bfloat16 and t.device.type == "cpu" and amx_products()


@functools.lru_cache(maxsize=16)
def _dense_dft(height: int, width: int, kernel: int, stride: int, dtype: torch.dtype, transposed: bool):
    """:func:`_dense_dft_matrices` in ``dtype``, each transposed and laid out so where
    ``transposed`` (oneDNN reads a transposed view at about half the rate), each entry
    rounded to nearest. (Rounding each row with the error carried to the next entry, so
    that its partial sums stay within a rounding step, raises the bfloat16 convolution's
    error against float64 here: 5.3e-3 against 4.8e-3, values and gradients.)"""
    mats = _dense_dft_matrices(height, width, kernel, stride)
    return tuple((m.t() if transposed else m).to(dtype).contiguous() for m in mats)


def _spectrum(data: Tensor, half: Tensor, full0: Tensor, full: Tensor) -> Tensor:
    """The Gauss factors of the spectra of ``data`` (rows, columns * N), laid out (rows,
    columns, N) in memory: (F, N), frequencies ordered as in :func:`_dft_matrices`. The
    first stage is one product over all columns * N, the second one per kh over all N (in
    row blocks, :func:`_stage_products`). In ``data``'s type, or autocast's."""
    a = torch.mm(half, data)  # (2kh - 1, columns * N)
    full0, full = full0.to(a.dtype), full.to(a.dtype)
    (m0, columns), (per_kh, kh) = full0.shape, (full.shape[0], (a.shape[0] + 1) // 2)
    n = a.shape[1] // columns
    out = a.new_empty(m0 + per_kh * (kh - 1), n)
    torch.mm(full0, a[0].view(columns, n), out=out[:m0])
    if kh > 1:  # a one-row span has only kh = 0
        _stage_products(full, a[1:].view(kh - 1, 2 * columns, n), out[m0:].view(kh - 1, per_kh, n))
    return out


def _spectrum_transposed(grad: Tensor, half: Tensor, full0: Tensor, full: Tensor) -> Tensor:
    """The transpose of :func:`_spectrum`: grad (F, N) -> (rows, columns * N)."""
    (m0, columns), (per_kh, kh) = full0.shape, (full.shape[0], (half.shape[0] + 1) // 2)
    n = grad.shape[1]
    grad_a = grad.new_empty(2 * kh - 1, columns * n)
    torch.mm(full0.t(), grad[:m0], out=grad_a[0].view(columns, n))
    if kh > 1:
        rows = grad[m0:].view(kh - 1, per_kh, n)
        torch.bmm(full.t().expand(kh - 1, -1, -1), rows, out=grad_a[1:].view(kh - 1, -1, n))
    return torch.mm(half.t(), grad_a)


class _SpectralConv2d(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: Tensor, weight: Tensor, bias: Tensor | None, stride: int) -> Tensor:
        batch, c_in, height, width = x.shape
        c_out, _, k, _ = weight.shape
        oh, ow = (height - k) // stride + 1, (width - k) // stride + 1
        xl = x.permute(2, 3, 0, 1).reshape(height, width * batch * c_in)  # free when x is laid out (H, W, B, C_in)
        low = product_dtype(xl)  # the products' type: x's, or autocast's
        # the kernels laid out (k, k, C_out, C_in): free for PrimaryCaps' weight (PrimaryCaps.__init__)
        wl = weight.to(low).permute(2, 3, 0, 1).reshape(k, k * c_out * c_in)
        ctx.dense = use_dense_dft(wl)
        if ctx.dense:  # one dense DFT per transform, four real products per frequency
            dft_x, dft_w, inv = _dense_dft(height, width, k, stride, low, transposed=False)
            n_freq = dft_x.shape[0] // 2  # G
            x3 = torch.mm(dft_x, xl.view(height * width, -1)).view(n_freq, 2 * batch, c_in)  # (G, [Xr; Xi], C_in)
            w3 = torch.mm(dft_w, wl.view(k * k, -1)).view(2, n_freq, c_out, c_in)  # (Wr/Wi, G, C_out, C_in)
            p = x3.new_empty(2, n_freq, 2 * batch, c_out)
            for part in range(2):  # [Xr; Xi] @ Wr^T, then @ Wi^T: each one contiguous batch of products
                torch.bmm(x3, w3[part].transpose(1, 2), out=p[part])
            y = torch.mm(inv, p.view(4 * n_freq, batch * c_out))
        else:  # the DFTs in two stages, Gauss's three real products per frequency
            half_x, full_x0, full_x, half_w, full_w0, full_w, *inverse = _matrices(height, width, k, stride, xl)
            x3 = _spectrum(xl, half_x, full_x0, full_x)  # (F, B*C_in)
            w3 = _spectrum(wl, half_w, full_w0, full_w)  # (F, C_out*C_in)
            n_freq = x3.shape[0]
            p = torch.bmm(x3.view(n_freq, batch, c_in), w3.view(n_freq, c_out, c_in).transpose(1, 2))  # (F, B, C_out)
            y = _inverse(p.view(n_freq, batch * c_out), *inverse)
        # the strided outputs (oh, ow, B*C_out), to (B, oh*ow, C_out)
        y = y.view(oh * ow, batch, c_out).transpose(0, 1).contiguous()
        if bias is not None:
            y = y + bias
        ctx.save_for_backward(x3, w3)
        ctx.shape = (batch, c_in, height, width, c_out, k, stride)
        ctx.has_bias = bias is not None
        return y.view(batch, oh, ow, c_out)

    @staticmethod
    def backward(ctx, grad_y: Tensor):
        x3, w3 = ctx.saved_tensors
        batch, c_in, height, width, c_out, k, stride = ctx.shape
        oh, ow = (height - k) // stride + 1, (width - k) // stride + 1
        grad_y = grad_y.to(x3.dtype)  # the spectra's type: float32, or autocast's bfloat16
        grad_y = grad_y.reshape(batch, oh * ow, c_out)
        grad_yt = grad_y.transpose(0, 1).reshape(oh * ow, batch * c_out)  # (oh*ow, B * C_out)
        need_x, need_w = ctx.needs_input_grad[:2]
        grad_x = grad_w = grad_b = None
        n_freq = x3.shape[0]  # G, or F for the two-stage form
        if ctx.dense:  # x3 (G, 2B, C_in), w3 (2, G, C_out, C_in)
            dft_x_t, dft_w_t, inv_t = _dense_dft(height, width, k, stride, x3.dtype, transposed=True)
            grad_p = torch.mm(inv_t, grad_yt).view(2, n_freq, 2 * batch, c_out)
            if need_x:
                grad_x3 = torch.bmm(grad_p[0], w3[0]).baddbmm_(grad_p[1], w3[1])  # (G, 2B, C_in)
                grad_xl = torch.mm(dft_x_t, grad_x3.view(2 * n_freq, batch * c_in))  # (H*W, B*C_in)
            if need_w:
                grad_w3 = x3.new_empty(2, n_freq, c_out, c_in)
                for part in range(2):
                    torch.bmm(grad_p[part].transpose(1, 2), x3, out=grad_w3[part])
                grad_wl = torch.mm(dft_w_t, grad_w3.view(2 * n_freq, c_out * c_in))  # (k*k, C_out*C_in)
        else:
            half_x, full_x0, full_x, half_w, full_w0, full_w, *inverse = _matrices(height, width, k, stride, x3)
            grad_p = _inverse_transposed(grad_yt.view(oh, ow, -1), *inverse).view(n_freq, batch, c_out)
            if need_x:
                grad_x3 = torch.bmm(grad_p, w3.view(n_freq, c_out, c_in)).view(n_freq, batch * c_in)  # (F, B*C_in)
                grad_xl = _spectrum_transposed(grad_x3, half_x, full_x0, full_x)  # (H, W*B*C_in)
            if need_w:
                # (F, C_out, C_in): MKL runs this orientation 1.6x faster than (C_in, B) @ (B, C_out)
                grad_w3 = torch.bmm(grad_p.transpose(1, 2), x3.view(n_freq, batch, c_in)).view(n_freq, c_out * c_in)
                grad_wl = _spectrum_transposed(grad_w3, half_w, full_w0, full_w)  # (ky, kx*C_out*C_in)
        if need_x:
            grad_x = grad_xl.view(height, width, batch, c_in).permute(2, 3, 0, 1)  # (H, W, B, C_in) in memory
        if need_w:
            grad_w = grad_wl.view(k, k, c_out, c_in).permute(2, 3, 0, 1)  # (k, k, C_out, C_in) in memory
        if ctx.has_bias and ctx.needs_input_grad[2]:
            grad_b = grad_y.sum(dim=(0, 1))
        return grad_x, grad_w, grad_b, None


def spectral_conv2d(x: Tensor, weight: Tensor, bias: Tensor | None, stride: int) -> Tensor:
    """``F.conv2d(x, weight, bias, stride=stride)`` through the correlation theorem (see the
    module docstring); no padding, no dilation, groups 1, square kernel.

    Parameters
    ----------
    x : Tensor, float32 or float64 (bfloat16 or float32 under autocast, whose type the
        products take), (B, C_in, H, W), any strides; laid out (H, W, B, C_in) in memory
        (``CapsNet``'s Conv1 output in training) it is read without a copy
    weight : Tensor, (C_out, C_in, k, k), any strides; laid out (k, k, C_out, C_in) in
        memory (PrimaryCaps' weight) it is read without a copy, and its gradient comes
        out laid so; bias : Tensor (C_out,) or None
    stride : int >= 1

    Returns
    -------
    Tensor, (B, H_out, W_out, C_out), channels last (note: not NCHW), in the products'
    type. Differentiable in x, weight and bias; the gradient of x is laid out (H, W, B,
    C_in) in memory, in x's type.
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


def use_fused_relu(images: Tensor, weight: Tensor) -> bool:
    """Whether Conv1 of training images (B, H, W) in the products' type, with ``weight``
    (C, k*k + 1), takes :func:`conv1_relu`: bfloat16 on a CPU with AMX, where torch has
    oneDNN's fused linear operator, no gradient of the images is asked for, and both are
    finite. oneDNN's ReLU gives 0 for NaN where ``torch.relu`` keeps it (and an infinite
    weight times a zero pixel is NaN), so a weight or image holding a NaN or an infinity
    takes the unfused path and a diverged run still shows a NaN loss (the two checks take
    about 0.1 ms for 128 digits)."""
    return (
        images.dtype == torch.bfloat16
        and images.device.type == "cpu"
        and not images.requires_grad
        and amx_products()
        and hasattr(torch.ops.mkldnn, "_linear_pointwise")
        and bool(torch.isfinite(weight).all())
        and bool(torch.isfinite(images).all())
    )


def conv1_patch_rows(images: Tensor, kernel: int) -> Tensor:
    """The rows of Conv1's product: images (B, H, W) -> (F*F*B, k*k + 1), rows ordered (y,
    x, image), each a k x k patch (ky, kx) and a 1 (the bias's column), in the images'
    type. F = H - k + 1."""
    batch, side = images.shape[0], images.shape[1] - kernel + 1
    rows = images.new_empty(side, side, batch, kernel * kernel + 1)
    patches = images.unfold(1, kernel, 1).unfold(2, kernel, 1)  # (B, F, F, k, k)
    rows[..., : kernel * kernel].view(side, side, batch, kernel, kernel).copy_(patches.permute(1, 2, 0, 3, 4))
    rows[..., kernel * kernel] = 1.0
    return rows.view(-1, kernel * kernel + 1)


def conv1_patch_columns_t(images: Tensor, kernel: int) -> Tensor:
    """The transpose of :func:`conv1_patch_rows`, (k*k + 1, F*F*B), gathered from the images
    laid out (H, W, B): each row copies runs of B values (0.3 ms for 128 digits, against
    1.2 ms for :func:`conv1_patch_rows`' runs of k and 2.9 ms for transposing its result)."""
    batch, side = images.shape[0], images.shape[1] - kernel + 1
    laid = images.permute(1, 2, 0).contiguous()  # (H, W, B)
    cols = images.new_empty(kernel * kernel + 1, side, side, batch)
    windows = laid.unfold(0, kernel, 1).unfold(1, kernel, 1)  # (F, F, B, k, k)
    cols[: kernel * kernel].view(kernel, kernel, side, side, batch).copy_(windows.permute(3, 4, 0, 1, 2))
    cols[kernel * kernel] = 1.0
    return cols.view(kernel * kernel + 1, -1)


class _Conv1ReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, images: Tensor, weight: Tensor, kernel: int) -> Tensor:
        out = torch.ops.mkldnn._linear_pointwise(conv1_patch_rows(images, kernel), weight, None, "relu", [], "")
        ctx.save_for_backward(images, out)
        ctx.kernel = kernel
        return out

    @staticmethod
    def backward(ctx, grad: Tensor):
        images, out = ctx.saved_tensors
        grad = torch.ops.aten.threshold_backward(grad, out, 0)  # ReLU's, read from its output as torch.relu's is
        # (k*k + 1, N) @ (N, C): both factors as stored, where grad^T @ rows reads one transposed
        grad_weight = (conv1_patch_columns_t(images, ctx.kernel) @ grad).t()
        return None, grad_weight, None


def conv1_relu(images: Tensor, weight: Tensor, kernel: int) -> Tensor:
    """Conv1 and its ReLU for training, ``relu(conv1_patch_rows(images) @ weight.T)``, in
    one oneDNN call (``torch.ops.mkldnn._linear_pointwise``, where :func:`use_fused_relu`
    holds), differentiable in ``weight``.

    images : (B, H, W); weight : (C, k*k + 1), the kernels (ky, kx) and the bias last; both
    in one type (bfloat16 on that path). Returns (F*F*B, C), rows ordered (y, x, image), in
    that type: the product rounded, then ReLU (rounding keeps the sign), as the unfused
    path gives it on a CPU with AMX, for finite inputs. The weight's gradient is formed
    from :func:`conv1_patch_columns_t`, so that neither factor is read transposed, and the
    rows are not kept from the forward pass. For 128 digits on a 2-core Xeon with AMX:
    product and ReLU 2.1 ms fused against 3.7 ms as a product and ``torch.relu``; the
    weight's gradient 2.4 ms against 3.8 ms (medians of 15 and 25).
    """
    return _Conv1ReLU.apply(images, weight, kernel)


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
