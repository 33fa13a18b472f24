"""Squash and routing-by-agreement (Sabour, Frosst & Hinton 2017, arXiv:1710.09829).

Shapes use B = batch, I = primary capsules (1152 for MNIST, 3200 for MultiMNIST),
J = digit capsules (10), D = digit capsule dimension (16).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from capsviz.runtime import amx_products

SQUASH_EPS = 1e-8
REDUCED = (torch.bfloat16, torch.float16)


def full_dtype(dtype: torch.dtype) -> torch.dtype:
    """float32 for bfloat16 or float16 (mixed-precision training), else ``dtype``."""
    return torch.float32 if dtype in REDUCED else dtype


def product_dtype(t: Tensor) -> torch.dtype:
    """The type a matrix product of ``t`` runs in: autocast's where it is on for ``t``'s
    device and ``t`` is a floating type other than float64 (autocast casts those), else
    ``t``'s. Read from autocast's state, so that nothing is cast to find it out."""
    device = t.device.type
    eligible = t.is_floating_point() and t.dtype != torch.float64
    if eligible and torch.amp.is_autocast_available(device) and torch.is_autocast_enabled(device):
        return torch.get_autocast_dtype(device)
    return t.dtype


def full_precision(t: Tensor) -> Tensor:
    """``t`` as :func:`full_dtype` of its type (a no-op unless it is bfloat16 or float16)."""
    return t.to(full_dtype(t.dtype))


def contiguous_in(t: Tensor, dtype: torch.dtype) -> Tensor:
    """``t`` in ``dtype``, contiguous, converted and laid out in one pass where either is
    needed (``Tensor.to`` with a memory format returns ``t`` itself, strides and all, when
    the type already matches; the second step lays that one out)."""
    return t.to(dtype, memory_format=torch.contiguous_format).contiguous()


def squash(s: Tensor, dim: int = -1, eps: float = SQUASH_EPS) -> Tensor:
    """Squash non-linearity, Eq. 1: v = ||s||^2 / (1 + ||s||^2) * s / ||s||.

    Parameters
    ----------
    s : Tensor, float, any shape
        Capsule input vectors along ``dim``.
    dim : int
        The capsule-vector axis (the pose dimensions, never the capsule index).
    eps : float
        Added inside the square root, so ``s = 0`` gives ``v = 0`` and finite gradients.

    Returns
    -------
    Tensor, same shape as ``s`` and its dtype (float32 for a bfloat16 or float16 ``s``:
    the squash is computed in float32 under mixed precision), vector lengths in [0, 1).
    """
    s = full_precision(s)
    norm_sq = (s * s).sum(dim=dim, keepdim=True)
    scale = norm_sq / (1.0 + norm_sq) / torch.sqrt(norm_sq + eps)
    return scale * s


def capsule_length(v: Tensor, dim: int = -1, eps: float = SQUASH_EPS) -> Tensor:
    """Length ||v|| along ``dim``, with ``eps`` inside the root for finite gradients at 0
    (float32 for a bfloat16 or float16 ``v``)."""
    v = full_precision(v)
    return torch.sqrt((v * v).sum(dim=dim) + eps)


@dataclass
class RoutingTrace:
    """Detached record of one forward pass through PrimaryCaps and DigitCaps.

    Attributes
    ----------
    u : Tensor, float32, shape (B, I, 8)
        Primary capsule outputs (after squash). Capsule i = type*G*G + y*G + x on the G x G
        PrimaryCaps grid (G = 6 for MNIST, 10 for MultiMNIST).
    u_lengths : Tensor, float32, shape (B, I), in [0, 1)
    u_hat : Tensor, float32, shape (B, I, J, D)
        Predictions u_hat_{j|i} = W_ij u_i.
    b : Tensor, float32, shape (R, B, I, J)
        Routing logits *used* at iteration r (b[0] is all zeros).
    c : Tensor, float32, shape (R, B, I, J)
        Coupling coefficients softmax(b[r]) over J (Eq. 3); each row sums to 1.
    v : Tensor, float32, shape (R, B, J, D)
        Digit capsule outputs after iteration r (Eq. 1, 2).
    lengths : Tensor, float32, shape (R, B, J), in [0, 1)
    """

    u: Tensor
    u_lengths: Tensor
    u_hat: Tensor
    b: Tensor
    c: Tensor
    v: Tensor
    lengths: Tensor

    @property
    def iterations(self) -> int:
        return int(self.c.shape[0])

    def to_numpy(self, index: int = 0, keys: tuple[str, ...] | None = None) -> dict[str, np.ndarray]:
        """One example of the trace as float32 numpy arrays that nothing else writes (safe
        to send across threads; writing into a shared one writes the trace).

        Returns a dict with ``u`` (I, 8), ``u_lengths`` (I,), ``u_hat`` (I, J, D),
        ``b`` (R, I, J), ``c`` (R, I, J), ``v`` (R, J, D), ``lengths`` (R, J); only
        ``keys`` when given. A CPU float32 tensor that is all of its storage (a one-image
        trace's) is shared, in its own strides; the rest
        is copied, so that an example of a batch does not keep the batch's memory.
        """
        out = {
            "u": self.u[index],
            "u_lengths": self.u_lengths[index],
            "u_hat": self.u_hat[index],
            "b": self.b[:, index],
            "c": self.c[:, index],
            "v": self.v[:, index],
            "lengths": self.lengths[:, index],
        }
        return {k: _numpy(t) for k, t in out.items() if keys is None or k in keys}


def _numpy(t: Tensor) -> np.ndarray:
    """``t`` as a float32 array: shared where ``t`` is a CPU float32 tensor spanning all of
    its storage (a trace's tensors are written once, by the pass that made them), else a copy."""
    t = t.detach()
    whole = t.untyped_storage().nbytes() == t.numel() * t.element_size()
    if t.device.type == "cpu" and t.dtype == torch.float32 and whole:
        return t.numpy()
    return t.float().cpu().numpy().copy()


def _agreement(u_hat_j: Tensor, v: Tensor) -> Tensor:
    """u_hat . v for every (n, i): u_hat_j (N, I, D), v (N, D) in u_hat_j's type -> (N, I).

    N products (1, D) @ (D, I) with u_hat read transposed: in every type the orientation
    its library streams fastest. For a batch of 128 digits on a 2-core Xeon without AMX
    (``benchmarks/routing_products.py``): float32 (MKL) 2.6 ms against 3.4 ms for
    (I, D) @ (D, 1), bfloat16 (oneDNN) 2.8 ms against 5.5 ms. For one image's ten float32
    matrices, read in place from the (I, B, J, D) product as the explorer's passes do,
    24 us against 31 us (the two forms taking turns, medians of 300, same machine).
    """
    n, n_in, dim = u_hat_j.shape
    return torch.bmm(v.reshape(n, 1, dim), u_hat_j.transpose(1, 2)).reshape(n, n_in)


def _weighted_sum(u_hat: Tensor, c: Tensor) -> Tensor:
    """Eq. 2's s_j = sum_i c_ij u_hat_{j|i} for every example: c (B, J, I), any float type,
    -> s (B, J, D) in u_hat's type.

    u_hat laid out (B*J, I, D) (3-D): B*J one-row products (1, I) @ (I, D), 2.0 ms against
    4.0 ms for (D, I) @ (I, 1) (float32, 128 digits). Laid out (B, I, J, D) (4-D, the AMX
    path of :class:`_PredictRouteFunction`): B products (J, I) @ (I, J*D), of which the
    diagonal blocks (j, j) are s: ten times the multiply-adds, which AMX takes in its
    stride, in place of oneDNN's one-row bfloat16 products, which stream u_hat at about 11
    GB/s there (a routing group of 34 digits, 12.5 MB: 0.74 against 1.24 ms).
    """
    if u_hat.dim() == 4:
        batch, n_in, n_out, dim = u_hat.shape
        full = torch.bmm(c.to(u_hat.dtype), u_hat.view(batch, n_in, n_out * dim))  # (B, J, J*D)
        return full.view(batch, n_out, n_out, dim).diagonal(dim1=1, dim2=2).transpose(1, 2)
    n, n_in, dim = u_hat.shape
    return torch.bmm(c.reshape(n, 1, n_in).to(u_hat.dtype), u_hat).reshape(c.shape[0], -1, dim)


def _agreements(u_hat: Tensor, v: Tensor) -> Tensor:
    """u_hat_{j|i} . v_j for every example: v (B, J, D), any float type, -> (B, J, I) in
    u_hat's type (a view for the 4-D layout).

    u_hat laid out (B*J, I, D): :func:`_agreement`. Laid out (B, I, J, D): B products
    (I, J*D) @ (J*D, J) with v's rows on the block diagonal (0.46 against 0.93 ms for a
    routing group of 34 digits in bfloat16 on a 2-core Xeon with AMX).
    """
    if u_hat.dim() == 4:
        batch, n_in, n_out, dim = u_hat.shape
        eye = torch.eye(n_out, dtype=v.dtype, device=v.device)
        blocks = (v[:, :, :, None] * eye[None, :, None, :]).reshape(batch, n_out * dim, n_out)  # (B, J*D, J)
        return torch.bmm(u_hat.view(batch, n_in, n_out * dim), blocks.to(u_hat.dtype)).transpose(1, 2)
    n, n_in, _ = u_hat.shape
    return _agreement(u_hat, v.to(u_hat.dtype)).reshape(v.shape[0], -1, n_in)


def _iterate(
    u_hat_j: Tensor, batch: int, iterations: int, first_s: Tensor | None = None, c_out: Tensor | None = None
) -> dict[str, list[Tensor]]:
    """Run Procedure 1 on u_hat in the (B*J, I, D) layout, or the (B, I, J, D) one (4-D).
    ``first_s`` (B, J, D), where given, is the first iteration's s (its c is uniform), used
    in place of its weighted sum, and c_0 = 1/J is written without a softmax. ``c_out``
    (R, B, J, I), where given, receives each iteration's c, written there (no copy); it
    must be of c's type.

    Returns the per-iteration ``b`` and ``c`` (B, J, I), ``s`` and ``v`` (B, J, D): b[r] is
    the logits that gave c[r]; with ``first_s`` given the zero b_0 is not recorded, and
    b[r] gave c[r + 1]. b starts at zero for each example and each call: it is never
    shared across the batch. Differentiable by autograd without ``c_out`` (a softmax with
    ``out=`` records no gradient: the hand-written backward passes use it).

    Under mixed precision (u_hat in bfloat16 or float16) b, c and v stay float32: the
    softmax and the squash in full precision, the two products in u_hat's type, or in
    autocast's where it is on.
    """
    n_in = u_hat_j.shape[1]
    n_out = u_hat_j.shape[2] if u_hat_j.dim() == 4 else u_hat_j.shape[0] // batch
    full = full_dtype(u_hat_j.dtype)
    # b = 0 (B, J, I); with a given first s it is left implicit (and not recorded): c_0 is 1/J
    b = None if first_s is not None else u_hat_j.new_zeros(batch, n_out, n_in, dtype=full)
    out: dict[str, list[Tensor]] = {"b": [], "c": [], "s": [], "v": []}
    for r in range(iterations):
        if b is None:  # softmax of zeros over J, bit for bit
            c = u_hat_j.new_empty(batch, n_out, n_in, dtype=full) if c_out is None else c_out[r]
            c.fill_(1.0 / n_out)
        else:  # over the J parent capsules, Eq. 3
            c = torch.softmax(b, dim=1) if c_out is None else torch.softmax(b, dim=1, out=c_out[r])
        s = first_s if r == 0 and first_s is not None else _weighted_sum(u_hat_j, c)  # Eq. 2
        v = squash(s, dim=-1)  # Eq. 1
        for key, value in (("b", b), ("c", c), ("s", s), ("v", v)):
            if value is not None:
                out[key].append(value)
        if r < iterations - 1:
            a = _agreements(u_hat_j, v)  # u_hat . v
            b = contiguous_in(a, full) if b is None else b + a
    return out


# The hand-written routing routes the examples in groups whose u_hat spans at most this many bytes
ROUTING_GROUP_BYTES = 12 << 20
# The same for u_hat laid out (B, I, J, D) (bfloat16 on a CPU with AMX): 128 digits' 47 MB in one
# group, a step of 161.0 against 163.9 ms with 12 MB groups there (2-core Xeon with AMX,
# medians of 40 taking turns); 128 pairs in two groups, even with twelve (401.7 against 402.9 ms)
BLOCKS_GROUP_BYTES = 64 << 20


def _spans(count: int, item_bytes: int, limit: int, device: torch.device) -> list[tuple[int, int]]:
    """[start, stop) ranges of ``count`` items of ``item_bytes`` each, each range at most
    ``limit`` bytes (one item at least): the routing groups of examples
    (``ROUTING_GROUP_BYTES``, ``BLOCKS_GROUP_BYTES``) and the chunks of primary capsules of
    :class:`_PredictRouteFunction`'s backward pass (``PREDICTION_CHUNK_BYTES``). On a
    device other than the CPU one range of all: the cache sizes are the CPU's."""
    if device.type != "cpu":
        return [(0, count)]
    size = max(1, limit // item_bytes)
    return [(start, min(start + size, count)) for start in range(0, count, size)]


def _own_type(u_hat_j: Tensor):
    """A context in which routing's products run in u_hat's own type: CPU autocast off
    while it is on (it would round a float32 u_hat to bfloat16 for every product); used by
    :class:`_PredictRouteFunction`, whose u_hat laid out (B*J, I, D) is float32 under
    autocast on the CPU (its bfloat16 u_hat laid out (B, I, J, D) is routed in its own type
    either way)."""
    if u_hat_j.device.type == "cpu" and torch.is_autocast_enabled("cpu"):
        return torch.autocast("cpu", enabled=False)
    return contextlib.nullcontext()


def _route(
    u_hat_j: Tensor, batch: int, iterations: int, fill=None, first_s: Tensor | None = None
) -> tuple[Tensor, Tensor, Tensor]:
    """Procedure 1's forward pass for a hand-written backward: u_hat_j (B*J, I, D) or
    (B, I, J, D), contiguous -> c (R, B, J, I), s and v (R, B, J, D) of every iteration.

    Each example is routed on its own, so on the CPU the examples go in groups whose
    u_hat fits a last-level cache (``ROUTING_GROUP_BYTES``): a group's first product reads
    its u_hat from memory and the other 2R - 2 find it in the cache. u_hat laid out (B, I,
    J, D) goes in larger groups (``BLOCKS_GROUP_BYTES``, measured on a Xeon with AMX,
    whose last-level cache is the larger). For 128 digits on a
    2-core AMD EPYC (Zen 2, L3 16 MiB) 25.7 ms in groups of 17 against 36.5 ms at once
    (medians of 7, taking turns). ``fill(start, stop)``, where given, writes the u_hat of
    examples [start, stop) into ``u_hat_j`` just before they are routed. ``first_s`` (B, J,
    D), where given, is the first iteration's s (:func:`_iterate`).
    """
    rows = 1 if u_hat_j.dim() == 4 else u_hat_j.shape[0] // batch  # u_hat's rows per example
    n_in, n_out = u_hat_j.shape[1], (u_hat_j.shape[2] if rows == 1 else rows)
    # c (B, J, I) of every iteration, written by the softmax; s and v (B, J, D) copied in
    kept = {"c": u_hat_j.new_empty(iterations, batch, n_out, n_in, dtype=full_dtype(u_hat_j.dtype))}
    per_example = u_hat_j.numel() // batch * u_hat_j.element_size()
    limit = BLOCKS_GROUP_BYTES if rows == 1 else ROUTING_GROUP_BYTES
    for start, stop in _spans(batch, per_example, limit, u_hat_j.device):
        if fill is not None:
            fill(start, stop)
        first = None if first_s is None else first_s[start:stop]
        run = _iterate(u_hat_j[start * rows : stop * rows], stop - start, iterations, first, kept["c"][:, start:stop])
        for key in ("s", "v"):
            # kept in the type of the last iteration's value: a given first s (float32) is
            # stored in the type of the sums over u_hat that follow it
            last = run[key][-1]
            if key not in kept:
                kept[key] = last.new_empty((iterations, batch, *last.shape[1:]))
            for r, value in enumerate(run[key]):
                kept[key][r, start:stop] = value
    return kept["c"], kept["s"], kept["v"]


def _route_backward(
    u_hat_j: Tensor,
    cs: Tensor,
    ss: Tensor,
    vs: Tensor,
    grad_v: Tensor,
    low: torch.dtype | None = None,
    left_last: bool = False,
    first_given: bool = False,
) -> tuple[Tensor, Tensor, Tensor | None]:
    """The backward pass of Procedure 1 down to the two factors of dL/du_hat.

    Walks the iterations in reverse on the small tensors (c, s, v from :func:`_route`) and
    returns ``left`` (N, K, I), or (N, I, K) where ``left_last``, and ``right`` (N, K, D) in
    ``low`` (default u_hat's type), K = 2R - 1, with

        dL/du_hat[n, i, :] = sum_k left[n, k, i] right[n, k, :]
                           = sum_r c_r[n, i] ds_r[n, :] + sum_{r<R} da_r[n, i] v_r[n, :]

    (N = B*J), for u_hat laid out (B*J, I, D) or (B, I, J, D). The two products with
    u_hat run in u_hat's type and the softmax and squash gradients in float32, as in the
    forward pass.

    Where ``first_given`` (the first iteration's s computed from u and W, not from u_hat:
    :class:`_PredictRouteFunction`), the term c_0 ds_0 is left out (K = 2R - 2) and ds_0
    (B, J, D), float32, is returned third; else the third value is None.
    """
    low = low or u_hat_j.dtype  # the factors' type (float32, or autocast's bfloat16 or float16)
    iterations, batch, n_out, n_in = cs.shape
    dim = ss.shape[-1]
    n = batch * n_out
    left: list[Tensor] = []  # (N, 1, I) factors
    right: list[Tensor] = []  # (N, 1, D) factors
    grad_b_next = None  # dL/db_{r+1}
    for r in range(iterations - 1, -1, -1):
        c = cs[r]
        if r == iterations - 1:
            gv = grad_v
        else:
            ga = grad_b_next  # b_{r+1} = b_r + a_r
            ga_low = ga.to(low)  # converted once where u_hat is in the factors' type too
            gv = full_precision(_weighted_sum(u_hat_j, ga_low if low == u_hat_j.dtype else ga))  # as Eq. 2's sum
            left.append(ga_low.reshape(n, 1, n_in))
            right.append(vs[r].reshape(n, 1, dim).to(low))
        with torch.enable_grad():
            s_leaf = ss[r].detach().requires_grad_()
            (gs,) = torch.autograd.grad(squash(s_leaf, dim=-1), s_leaf, gv)
        if r == 0 and first_given:
            return _stacked(left, right, n, n_in, left_last) + (gs,)
        left.append(c.reshape(n, 1, n_in) if left_last else c.reshape(n, 1, n_in).to(low))
        right.append(gs.reshape(n, 1, dim).to(low))
        if r > 0:  # b_0 = 0 is a constant
            # float32 and contiguous, as the softmax kernel reads it, in one pass
            gc = contiguous_in(_agreements(u_hat_j, gs), c.dtype)
            # softmax backward over J, c (gc - sum_j c gc), in one pass: torch's own kernel
            gb = torch._softmax_backward_data(gc, c, 1, c.dtype)
            grad_b_next = gb if grad_b_next is None else gb + grad_b_next
    return _stacked(left, right, n, n_in, left_last) + (None,)


def _stacked(left: list[Tensor], right: list[Tensor], n: int, n_in: int, left_last: bool) -> tuple[Tensor, Tensor]:
    """:func:`_route_backward`'s factors, each (N, 1, I) or (N, 1, D), stacked."""
    right_k = torch.cat(right, dim=1)
    if left_last:  # each factor converted as it is written into its column
        stacked = right_k.new_empty(n, n_in, len(left))
        for k, factor in enumerate(left):
            stacked[:, :, k].copy_(factor.view(n, n_in))
        return stacked, right_k
    # stacked along I's rows, each factor copies whole rows (float32: 6.1 ms against 9.1 ms for (N, I, K))
    return torch.cat(left, dim=1), right_k


class _RoutingFunction(torch.autograd.Function):
    """Procedure 1 with a hand-written backward pass, for a given u_hat (training only).

    Autograd would keep one (B*J, I, D) gradient per use of u_hat (R weighted sums and
    R - 1 agreements), form each as an outer product, and add them up: many passes
    over the largest tensor of the network. Here the backward walks the iterations in
    reverse on the small tensors (:func:`_route_backward`) and forms the gradient of u_hat
    in one batched product with K = 2R - 1. The forward pass routes the examples in
    cache-sized groups on the CPU (:func:`_route`); the backward pass gains nothing so
    (33.8 against 32.1 ms, 128 digits, Zen 2) and runs on the whole batch.

    The numbers equal autograd's through the plain loop (a unit test checks this).
    """

    @staticmethod
    def forward(ctx, u_hat_j: Tensor, batch: int, iterations: int) -> Tensor:
        # u_hat_j : (B*J, I, D) contiguous
        cs, ss, vs = _route(u_hat_j, batch, iterations)
        ctx.save_for_backward(u_hat_j, cs, ss, vs)
        return vs[-1].clone()  # not a view of what the backward keeps

    @staticmethod
    def backward(ctx, grad_v: Tensor):
        u_hat_j, cs, ss, vs = ctx.saved_tensors
        left, right, _ = _route_backward(u_hat_j, cs, ss, vs, grad_v)
        # (I, K) @ (K, D) per n, the left factors read transposed
        return torch.bmm(left.transpose(1, 2), right), None, None


# The backward pass of predict_and_route forms dL/du_hat for this many bytes of it at a time
PREDICTION_CHUNK_BYTES = 4 << 20
# Its forward pass makes the predictions of at least this many examples in one product (whole
# routing groups): one of fewer rows per primary capsule runs slower than the copy it saves
PREDICTION_MIN_EXAMPLES = 32


def relaid_gradient(
    left: Tensor, right: Tensor, start: int, stop: int, out: Tensor, products: Tensor | None, strided: bool
) -> Tensor:
    """dL/du_hat of primary capsules [start, stop) from :func:`_route_backward`'s factors,
    written into ``out`` (i, B, J*D), i = stop - start, and returned. ``strided``: left is
    stacked (N, I, K) and the chunk's product writes ``out`` itself; else left is (N, K, I)
    and the product goes to ``products`` (at least N * i * D elements), then is re-laid."""
    part, batch, _ = out.shape
    n, _, dim = right.shape
    if strided:
        torch.bmm(left[:, start:stop], right, out=out.view(part, n, dim).transpose(0, 1))
    else:
        g = products[: n * part * dim].view(n, part, dim)
        torch.bmm(left[:, :, start:stop].transpose(1, 2), right, out=g)
        out.view(part, batch, n // batch, dim).copy_(g.view(batch, n // batch, part, dim).permute(2, 0, 1, 3))
    return out


def routes_in_blocks(low: torch.dtype, device: torch.device) -> bool:
    """Whether the training path (:func:`predict_and_route`) lays u_hat out (B, I, J, D)
    and routes it in ``low``, the predictions' type: bfloat16 on a CPU with AMX
    (``capsviz.runtime.amx_products``). Elsewhere u_hat is laid out (B*J, I, D), in
    ``full_dtype(low)`` on the CPU and in ``low`` on other devices."""
    return low == torch.bfloat16 and device.type == "cpu" and amx_products()


class _PredictRouteFunction(torch.autograd.Function):
    """u_hat = W u (the predictions) and Procedure 1, with one hand-written backward pass
    through both (training only).

    Through autograd, the predictions' product would write u_hat whole (94 MB in float32
    for 128 digits) and re-lay it for routing in one more pass over memory, and the
    backward pass would write dL/du_hat whole, re-lay it back and read it twice more. Here
    the forward pass makes each routing group's predictions just before routing them
    (:func:`_route`), re-laid in the cache, and the backward pass forms dL/du_hat chunk by
    chunk over the primary capsules (``PREDICTION_CHUNK_BYTES``), re-laid in the cache and
    taken by both products, dL/du and dL/dW, while it is there. On a 2-core AMD EPYC
    (Zen 2, L3 16 MiB), 128 digits: the re-layouts take 12.6 ms of a step against
    28-32 ms, the step 520.5 against 535.9 ms (two networks taking turns in one process,
    medians of 12).

    Under bfloat16 or float16 autocast on the CPU the predictions' product runs in that
    type and u_hat is kept in float32 for routing (the re-layout converts it), so routing's
    products, which stream u_hat with one output row per matrix, run at MKL's float32
    rate instead of oneDNN's much slower one-row bfloat16 products; dL/du_hat's factors,
    its chunks and the products to dL/du and dL/dW stay in the reduced type. On a 2-core
    AMD EPYC Zen 4 (AVX-512 BF16), 128 digits, the two forms taking turns in one process
    (medians of 20): forward 29.5 and 31.4 ms against 42.5 and 40.1 ms, backward 43.2 and
    42.3 ms against 52.4 and 51.3 ms.

    In bfloat16 on a CPU with AMX (:func:`routes_in_blocks`) u_hat stays in bfloat16 and
    is laid out (B, I, J, D), and no re-layout pass is made: the predictions' product
    writes each group's u_hat in place (its (I, b, J*D) output a strided view of it), routing
    takes its products as (J, I) @ (I, J*D) and (I, J*D) @ (J*D, J) per example
    (:func:`_weighted_sum`, :func:`_agreements`), and each chunk of dL/du_hat is one batched
    product that writes it re-laid, from the left factors stacked (N, I, K). oneDNN takes
    these strided outputs at its usual rate, where MKL's float32 products slow down about
    threefold with them. On a 2-core Xeon with AMX, 128 digits, the two forms taking turns
    in one process (medians of 15): forward 34.2 against 52.3 ms, backward 50.0 against
    63.4 ms. On that path the first iteration's s, whose c is uniform, is one product of
    u and W, (B, I*E) @ (I*E, J*D) / J, in place of a weighted sum over u_hat, and the
    backward pass takes its term to dL/du and dL/dW by two products of that size, leaving
    K = 2R - 2 factors of dL/du_hat: a training step of 177.4 against 178.8 ms for 128
    digits, 419.5 against 424.0 ms for 128 pairs (medians of 12 and 6, taking turns).
    """

    @staticmethod
    def forward(ctx, u: Tensor, weight: Tensor, iterations: int) -> Tensor:
        # u : (B, I, E), weight : (I, J, D, E)
        n_in, n_out, dim, d_in = weight.shape
        batch = u.shape[0]
        # the type of the predictions' product and of dL/du_hat's factors: u's, or autocast's where it is on
        low = product_dtype(u)
        # W as (I, E, J*D) and u as (B, I, E), converted once each: the backward pass reads them too
        w_t = weight.reshape(n_in, n_out * dim, d_in).transpose(1, 2)
        w_t = contiguous_in(w_t, low)
        u_low = u.to(low)
        blocks = routes_in_blocks(low, u.device)
        if blocks:  # u_hat (B, I, J, D) in bfloat16, written in place by the predictions' product
            u_hat_j = u.new_empty(batch, n_in, n_out, dim, dtype=low)
            u_t = u_low.transpose(0, 1).contiguous()  # (I, B, E): a group's (I, b, E) slice is read in place
        else:  # u_hat (B*J, I, D), in float32 on the CPU (the re-layout converts it)
            routed = full_dtype(low) if u.device.type == "cpu" else low
            u_hat_j = u.new_empty(batch * n_out, n_in, dim, dtype=routed)
            u_t = u_low.transpose(0, 1)  # (I, B, E) view
        first_s = None
        if blocks and iterations > 1:  # the first iteration's s from u and W: c is uniform, s_j = sum_i W_ij u_i / J
            first = u_low.reshape(batch, n_in * d_in) @ w_t.view(n_in * d_in, n_out * dim)
            first_s = full_precision(first.view(batch, n_out, dim)) / n_out

        made: list = [0, 0, None]  # the examples [first, last) whose predictions were made last, (I, b, J, D)

        def fill(start: int, stop: int) -> None:  # the predictions of a routing group, made or re-laid in the cache
            if stop > made[1]:  # made for whole groups of at least PREDICTION_MIN_EXAMPLES examples
                last = min(batch, start + (stop - start) * -(-PREDICTION_MIN_EXAMPLES // (stop - start)))
                if blocks:  # (I, b, J*D) products written straight into u_hat's (b, I, J, D)
                    target = u_hat_j[start:last].view(last - start, n_in, n_out * dim).transpose(0, 1)
                    torch.bmm(u_t[:, start:last], w_t, out=target)
                else:
                    made[2] = torch.bmm(u_t[:, start:last], w_t).view(n_in, last - start, n_out, dim)
                made[:2] = start, last
            if not blocks:
                part = made[2][:, start - made[0] : stop - made[0]]  # (I, b, J, D)
                target = u_hat_j[start * n_out : stop * n_out].view(stop - start, n_out, n_in, dim)
                target.copy_(part.permute(1, 2, 0, 3))

        with _own_type(u_hat_j):
            cs, ss, vs = _route(u_hat_j, batch, iterations, fill, first_s)
        ctx.save_for_backward(u_low, u_t, w_t, u_hat_j, cs, ss, vs)
        ctx.low, ctx.first_given = low, first_s is not None
        ctx.weight_shape, ctx.weight_dtype, ctx.u_dtype = weight.shape, weight.dtype, u.dtype
        return vs[-1].clone()

    @staticmethod
    def backward(ctx, grad_v: Tensor):
        u_low, u_t, w_t, u_hat_j, cs, ss, vs = ctx.saved_tensors  # (B, I, E), (I, B, E), (I, E, J*D) in low
        low = ctx.low
        # u_hat laid out (B, I, J, D): each chunk's product writes dL/du_hat re-laid itself
        strided = u_hat_j.dim() == 4
        with _own_type(u_hat_j):  # left (N, K, I), or (N, I, K) where strided; right (N, K, D)
            left, right, grad_first = _route_backward(
                u_hat_j, cs, ss, vs, grad_v, low, left_last=strided, first_given=ctx.first_given
            )
        n_in, n_out, dim, d_in = ctx.weight_shape
        batch = u_low.shape[0]
        n = batch * n_out
        chunks = _spans(n_in, n * dim * low.itemsize, PREDICTION_CHUNK_BYTES, u_low.device)
        size = chunks[0][1]
        need_u, need_w = ctx.needs_input_grad[:2]
        grad_u = u_low.new_empty(batch, n_in, d_in, dtype=ctx.u_dtype) if need_u else None
        grad_u_i = u_low.new_empty(size, d_in, batch) if need_u else None  # a chunk's, (i, E, B)
        grad_w = u_low.new_empty(n_in, d_in, n_out * dim) if need_w else None
        products = None if strided else u_low.new_empty(n * size * dim)  # dL/du_hat of a chunk of i capsules, (N, i, D)
        relaid = u_low.new_empty(size, batch, n_out * dim)  # the same, (i, B, J*D)
        for start, stop in chunks:
            part = stop - start
            g_i = relaid_gradient(left, right, start, stop, relaid[:part], products, strided)
            if need_u:  # dL/du as (i, E, B): 0.20 ms against 0.69 ms as (i, B, E) (a chunk of 51, Zen 2)
                grad_i = torch.bmm(w_t[start:stop], g_i.transpose(1, 2), out=grad_u_i[:part])
                grad_u[:, start:stop].copy_(grad_i.permute(2, 0, 1))
            if need_w:
                torch.bmm(u_t[start:stop].transpose(1, 2), g_i, out=grad_w[start:stop])  # dL/dW: (i, E, J*D)
        if grad_first is not None:  # the first iteration's s = sum_i W_ij u_i / J
            grad_s = (grad_first / n_out).to(low).reshape(batch, n_out * dim)  # (B, J*D)
            if need_u:  # (B, J*D) @ (J*D, I*E)
                grad_u += (grad_s @ w_t.view(n_in * d_in, n_out * dim).t()).view_as(grad_u)
            if need_w:  # (I*E, B) @ (B, J*D)
                grad_w.view(n_in * d_in, n_out * dim).addmm_(u_low.reshape(batch, -1).t(), grad_s)
        if need_w:  # (I, J, D, E) in W's type, laid out as W: one converting pass, and autograd keeps it as is
            relaid = grad_w.view(n_in, d_in, n_out, dim).permute(0, 2, 3, 1)
            grad_w = relaid.new_empty(relaid.shape, dtype=ctx.weight_dtype).copy_(relaid)
        return grad_u, grad_w, None


def predict_and_route(u: Tensor, weight: Tensor, iterations: int) -> Tensor:
    """The digit capsules of a training step: u_hat_{j|i} = W_ij u_i (Sec. 2), then
    routing-by-agreement (Procedure 1), differentiable in u and W through one
    hand-written backward pass (:class:`_PredictRouteFunction`).

    Parameters
    ----------
    u : Tensor, float32, (B, I, E): the squashed primary capsules (E = 8)
    weight : Tensor, float32, (I, J, D, E): DigitCaps' W, broadcast over the batch
    iterations : int >= 1

    Returns
    -------
    v : Tensor, (B, J, D), lengths in [0, 1); float32. Where autocast is on, the
    predictions' product and those of dL/du_hat run in autocast's type, and routing's
    products in float32 on the CPU (in autocast's type elsewhere, and in bfloat16 on a
    CPU with AMX). Equal to ``dynamic_routing`` of the predictions, values and gradients,
    in float32 and float64; under bfloat16 autocast on the CPU, v equals autocast's
    predictions routed in float32 bit for bit, or within a bfloat16 rounding step of them
    routed in bfloat16 on a CPU with AMX, and the gradients are within bfloat16's rounding
    of that path's (unit tests check both).

    Raises
    ------
    ValueError
        If ``iterations < 1``.
    """
    if iterations < 1:
        raise ValueError(f"routing iterations must be >= 1, got {iterations}")
    return _PredictRouteFunction.apply(u, weight, iterations)


def stack_transposed(tensors: list[Tensor]) -> Tensor:
    """Stack R tensors (B, I, J), each the transposed view of a contiguous (B, J, I) one (as
    :func:`dynamic_routing` records ``b`` and ``c``), into (R, B, I, J): the transposed view
    of their (R, B, J, I) stack, which copies without transposing (for a 36x36 pair's 3 x
    3,200 x 10 logits 0.015 ms against 0.042 for ``torch.stack``, 2-core Xeon without AMX)."""
    return torch.stack([t.transpose(-1, -2) for t in tensors]).transpose(-1, -2)


def dynamic_routing(
    u_hat: Tensor, iterations: int, record: bool = False
) -> tuple[Tensor, dict[str, list[Tensor]] | None]:
    """Routing-by-agreement, Procedure 1 of the paper.

    For every example separately: b = 0; then ``iterations`` times
    c_i = softmax_j(b_i) (Eq. 3), s_j = sum_i c_ij u_hat_{j|i} (Eq. 2),
    v_j = squash(s_j) (Eq. 1), b_ij += u_hat_{j|i} . v_j.

    Parameters
    ----------
    u_hat : Tensor, float, shape (B, I, J, D)
    iterations : int, >= 1
    record : bool
        If true, also return the per-iteration ``b``, ``c``, ``v`` (detached).

    Returns
    -------
    v : Tensor, shape (B, J, D), lengths in [0, 1)
    record : dict of lists of Tensors, or None

    Raises
    ------
    ValueError
        If ``iterations < 1`` or ``u_hat`` is not 4-D.
    """
    if iterations < 1:
        raise ValueError(f"routing iterations must be >= 1, got {iterations}")
    if u_hat.dim() != 4:
        raise ValueError(f"u_hat must have shape (B, I, J, D), got {tuple(u_hat.shape)}")
    batch, n_in, n_out, dim = u_hat.shape
    # Work on (B*J, I, D) matrices so that Eq. 2 and the agreement are plain batched
    # matrix products over B*J: a view where u_hat's B and J strides allow it (both of
    # DigitCaps.predictions' layouts), else a copy.
    u_hat_j = u_hat.transpose(1, 2).reshape(batch * n_out, n_in, dim)  # (B*J, I, D)
    if not record and torch.is_grad_enabled() and u_hat.requires_grad:
        return _RoutingFunction.apply(u_hat_j.contiguous(), batch, iterations), None
    it = _iterate(u_hat_j, batch, iterations)
    rec = None
    if record:
        rec = {
            "b": [b.detach().transpose(1, 2) for b in it["b"]],  # (B, I, J)
            "c": [c.detach().transpose(1, 2) for c in it["c"]],
            "v": [v.detach() for v in it["v"]],
        }
    return it["v"][-1], rec
