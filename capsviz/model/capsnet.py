"""CapsNet: Conv1 -> PrimaryCaps -> DigitCaps (dynamic routing) -> Decoder, for square
inputs of any size ``CapsNetConfig.image_size`` (28 x 28 MNIST, 36 x 36 MultiMNIST).

Shapes use B = batch, H = input side, F = Conv1's map side (H - 8 with 9 x 9 kernels),
G = PrimaryCaps grid side, I = primary capsules (types x G x G: 1152 for MNIST, 3200 for
MultiMNIST), J = digit capsules (10).

Reference: S. Sabour, N. Frosst, G. E. Hinton, "Dynamic Routing Between Capsules",
NIPS 2017, arXiv:1710.09829 (Sec. 4, Fig. 1 and Fig. 2).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from capsviz.model.config import CapsNetConfig
from capsviz.model.conv import (
    IM2COL_MAX_BATCH,
    conv1_patch_rows,
    conv1_relu,
    im2col_conv2d,
    im2col_conv2d_bf16,
    patch_weight,
    patch_weight_bf16,
    spectral_conv2d,
    use_fused_relu,
    use_spectral,
    use_winograd,
    winograd_conv2d,
    winograd_weight,
)
from capsviz.model.routing import (
    RoutingTrace,
    capsule_length,
    dynamic_routing,
    predict_and_route,
    product_dtype,
    squash,
    stack_transposed,
)
from capsviz.runtime import bf16_inference, intel_cpu


class _InferenceLayout:
    """A re-laid-out copy of a parameter for fast no-grad inference on the CPU.

    Rebuilt whenever the parameter changes: optimizer steps and ``load_state_dict``
    update it in place, which bumps its version counter.
    """

    def __init__(self, relayout) -> None:
        self.relayout = relayout
        self.key: tuple | None = None
        self.value: Tensor | None = None

    def __call__(self, param: Tensor) -> Tensor:
        key = (param.data_ptr(), param._version, param.device, param.dtype)
        if key != self.key:
            with torch.no_grad():
                self.value = self.relayout(param.detach())
            self.key = key
        return self.value


def _fast_inference(x: Tensor) -> bool:
    """True for the explorer's case: a few images on the CPU, no gradients."""
    return x.device.type == "cpu" and x.shape[0] <= IM2COL_MAX_BATCH and not torch.is_grad_enabled()


def _primary_weight_to_file(module, state_dict, prefix, local_metadata) -> None:
    """PrimaryCaps' state_dict hook: ``conv.weight`` as (C_out, C_in, k, k), a view."""
    state_dict[prefix + "conv.weight"] = state_dict[prefix + "conv.weight"].permute(PrimaryCaps.FILE_ORDER)


def _primary_weight_from_file(module, state_dict, prefix, *args) -> None:
    """PrimaryCaps' load_state_dict pre-hook: ``conv.weight`` (C_out, C_in, k, k) as the
    parameter's (k, k, C_out, C_in); a tensor of another rank is left for load_state_dict
    to refuse."""
    weight = state_dict.get(prefix + "conv.weight")
    if isinstance(weight, Tensor) and weight.dim() == 4:
        state_dict[prefix + "conv.weight"] = weight.permute(PrimaryCaps.FILE_ORDER)


def file_orders(model: nn.Module) -> dict[int, tuple[int, ...]]:
    """id(parameter) -> the permutation of its dims that gives its checkpoint tensor, for
    the parameters of ``model`` held in another layout than their files' (PrimaryCaps'
    kernels). Optimizer state saved with a checkpoint follows its parameter's file layout."""
    return {id(m.conv.weight): PrimaryCaps.FILE_ORDER for m in model.modules() if isinstance(m, PrimaryCaps)}


class PrimaryCaps(nn.Module):
    """Convolutional capsules: 32 types of 8-D capsules on a G x G grid (6 x 6 for MNIST,
    10 x 10 for MultiMNIST; ``cfg.grid_size``).

    Output channel ``8*type + k`` is dimension k of capsule type ``type``; capsule
    index ``i = type*G*G + y*G + x``.
    """

    # conv.weight's checkpoint tensor, (C_out, C_in, k, k), is the parameter permuted so;
    # the permutation is its own inverse
    FILE_ORDER = (2, 3, 0, 1)

    def __init__(self, cfg: CapsNetConfig) -> None:
        super().__init__()
        self.cfg = cfg
        conv = nn.Conv2d(
            cfg.conv1_channels,
            cfg.primary_types * cfg.primary_dim,
            kernel_size=cfg.kernel_size,
            stride=cfg.primary_stride,
        )  # torch's initialisation of a convolution
        # conv.weight is the kernels as a (k, k, C_out, C_in) parameter: the layout in which
        # the spectral path reads them and writes their gradient without re-laying the
        # 21 MB, and in which the optimizer walks them without a copy (torch's fused Adam
        # copies a non-contiguous parameter at every step). state_dict() gives and
        # load_state_dict() takes it as (C_out, C_in, k, k), nn.Conv2d's layout.
        self.conv = nn.Module()
        self.conv.weight = nn.Parameter(conv.weight.detach().permute(self.FILE_ORDER).contiguous())
        self.conv.bias = nn.Parameter(conv.bias.detach())
        self._register_state_dict_hook(_primary_weight_to_file)
        self._register_load_state_dict_pre_hook(_primary_weight_from_file, with_module=True)
        self._patch_weight = _InferenceLayout(patch_weight)
        self._patch_weight_bf16 = _InferenceLayout(patch_weight_bf16)
        self._winograd_weight = _InferenceLayout(lambda w: winograd_weight(w, cfg.primary_stride))

    @property
    def kernel(self) -> Tensor:
        """The convolution's weight, (C_out, C_in, k, k): a view of ``conv.weight``."""
        return self.conv.weight.permute(self.FILE_ORDER)

    def forward(self, x: Tensor) -> Tensor:
        """x : (B, 256, F, F) Conv1 features -> u : (B, I, 8), squashed (I = 32 G^2)."""
        cfg = self.cfg
        g = cfg.grid_size
        w, bias, k, stride = self.kernel, self.conv.bias, cfg.kernel_size, cfg.primary_stride
        if _fast_inference(x) and bf16_inference():  # a CPU with bfloat16 units
            out = im2col_conv2d_bf16(x, self._patch_weight_bf16(w), bias, k, stride)  # (B, G, G, 256)
        elif _fast_inference(x) and use_winograd(x, k, stride):
            out = winograd_conv2d(x, self._winograd_weight(w), bias, k, stride)  # float32 pairs; digits off AVX-512
        elif _fast_inference(x):
            out = im2col_conv2d(x, self._patch_weight(w), bias, k, stride)
        elif use_spectral(x):
            out = spectral_conv2d(x, w, bias, stride)  # (B, G, G, 256)
        else:
            # off the CPU contiguous: cuDNN copies a strided weight anyway, and MPS has read one as if laid out
            w = w if x.device.type == "cpu" else w.contiguous()
            out = nn.functional.conv2d(x, w, bias, stride=stride).permute(0, 2, 3, 1)
        out = out.reshape(-1, g, g, cfg.primary_types, cfg.primary_dim)  # (B, G, G, 32, 8)
        out = out.permute(0, 3, 1, 2, 4).reshape(-1, cfg.num_primary, cfg.primary_dim)  # (B, I, 8)
        return squash(out, dim=-1)


def one_image_predictions(u: Tensor, w_e: Tensor) -> Tensor:
    """u_hat_{j|i} = W_ij u_i (Sec. 2) for one image as 8 multiply-adds over all (i, j, d):
    u (1, I, 8) and W laid out (8, I, J*D) contiguous -> u_hat (I, 1, J*D), in u's type.

    Each multiply-add streams one contiguous eighth of W. Off Intel CPUs, MKL's batched
    product runs the I one-row products of 8 x 160 well below the rate W can be read at:
    on a 2-core AMD EPYC Zen 4 with the caches flushed first, on one thread (the
    inference thread's count), 0.58 against 0.88 ms for a digit's 1,152 capsules and
    1.14 against 2.40 ms for a pair's 3,200 (0.51 against 0.66 and 0.83 against 1.30 ms
    on two); for 8 images the product is the faster. On Intel CPUs the product is the
    faster for one image too (:func:`capsviz.runtime.intel_cpu`), and
    :meth:`DigitCaps.predictions` takes it there.
    """
    u_e = u.permute(2, 1, 0).unsqueeze(-1)  # (8, I, 1, 1) view
    w_e = w_e.unsqueeze(2)  # (8, I, 1, J*D)
    out = w_e[0] * u_e[0]
    for e in range(1, w_e.shape[0]):
        out.addcmul_(w_e[e], u_e[e])
    return out


class DigitCaps(nn.Module):
    """Predictions u_hat_{j|i} = W_ij u_i followed by dynamic routing (Procedure 1).

    ``W`` has shape (I, 10, 16, 8) (I = 1152 for MNIST, 3200 for MultiMNIST) and is
    broadcast over the batch, never tiled.
    """

    def __init__(self, cfg: CapsNetConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.W = nn.Parameter(0.01 * torch.randn(cfg.num_primary, cfg.num_classes, cfg.digit_dim, cfg.primary_dim))
        # (I, 8, J*D) contiguous: the few images' bmm (2 to 8; 1 on Intel CPUs) reads it faster than the transposed view
        self._w_t = _InferenceLayout(lambda w: w.reshape(w.shape[0], -1, w.shape[-1]).transpose(1, 2).contiguous())
        # (8, I, J*D) contiguous: one image's predictions as 8 multiply-adds off Intel CPUs (one_image_predictions)
        self._w_e = _InferenceLayout(lambda w: w.permute(3, 0, 1, 2).reshape(w.shape[-1], w.shape[0], -1).contiguous())

    def predictions(self, u: Tensor) -> Tensor:
        """u : (B, I, 8) -> u_hat : (B, I, J, 16), a view of (B, J, I, D) storage (the
        layout routing's products read fastest for many images), or for the explorer's
        few images of the (I, B, J, D) product itself: routing reads it in place, where
        re-laying a pair's 2 MB would cost more than its products lose (0.17 ms against
        0.03 ms on two threads, 2-core Xeon without AMX)."""
        n_in, n_out, d_out, d_in = self.W.shape
        batch = u.shape[0]
        fast = _fast_inference(u)
        if fast and batch == 1 and not intel_cpu():
            u_hat = one_image_predictions(u, self._w_e(self.W)).reshape(n_in, batch, n_out, d_out)
        else:  # W as (I, 8, J*D): laid out once for a few images, else a view
            w_t = self._w_t(self.W) if fast else self.W.reshape(n_in, n_out * d_out, d_in).transpose(1, 2)
            u_hat = torch.bmm(u.transpose(0, 1), w_t).reshape(n_in, batch, n_out, d_out)  # (I, B, J, D)
        if fast:
            return u_hat.transpose(0, 1)  # (B, I, J, D)
        return u_hat.permute(1, 2, 0, 3).contiguous().transpose(1, 2)  # (B, I, J, D) view of (B, J, I, D)

    def forward(self, u: Tensor, iterations: int, record: bool = False):
        """u : (B, I, 8) -> v (B, J, 16), u_hat (B, I, J, 16) or None, the record of
        :func:`dynamic_routing` or None. Training (gradients on, no record) takes
        :func:`predict_and_route`, whose u_hat stays inside it (None here)."""
        if not record and torch.is_grad_enabled() and (u.requires_grad or self.W.requires_grad):
            return predict_and_route(u, self.W, iterations), None, None
        u_hat = self.predictions(u)
        v, rec = dynamic_routing(u_hat, iterations, record=record)
        return v, u_hat, rec


class Decoder(nn.Module):
    """Reconstruction network: masked DigitCaps (160) -> 512 -> 1024 -> H x H sigmoid (784
    for MNIST, 1296 for MultiMNIST)."""

    def __init__(self, cfg: CapsNetConfig) -> None:
        super().__init__()
        self.cfg = cfg
        h1, h2 = cfg.decoder_hidden
        self.net = nn.Sequential(
            nn.Linear(cfg.num_classes * cfg.digit_dim, h1),
            nn.ReLU(inplace=True),
            nn.Linear(h1, h2),
            nn.ReLU(inplace=True),
            nn.Linear(h2, cfg.image_size**2),
            nn.Sigmoid(),
        )

    def forward(self, v: Tensor, classes: Tensor) -> Tensor:
        """Reconstruct from the capsule of ``classes`` only.

        Parameters
        ----------
        v : Tensor, shape (B, 10, 16)
        classes : LongTensor, shape (B,), values in [0, 10); or (B, K): one reconstruction
            per listed class, in one pass (MultiMNIST, Sec. 6: K = 2)

        Returns
        -------
        Tensor, shape (B, 1, H, H), or (B, K, 1, H, H); pixel values in (0, 1)
        """
        size = self.cfg.image_size
        if classes.dim() == 2:
            k = classes.shape[1]
            return self.forward(v.repeat_interleave(k, dim=0), classes.reshape(-1)).reshape(-1, k, 1, size, size)
        mask = nn.functional.one_hot(classes, self.cfg.num_classes).to(v.dtype)  # (B, 10)
        masked = (v * mask.unsqueeze(-1)).flatten(1)  # (B, 160)
        return self.net(masked).reshape(-1, 1, size, size)

    def decode_pose(self, pose: Tensor, classes: Tensor) -> Tensor:
        """Reconstruct from a single 16-D pose per example, placed in capsule ``classes``.

        pose : (B, 16), classes : (B,) -> (B, 1, H, H).
        """
        v = pose.new_zeros(pose.shape[0], self.cfg.num_classes, self.cfg.digit_dim)
        v[torch.arange(pose.shape[0], device=pose.device), classes] = pose
        return self.forward(v, classes)


@dataclass
class CapsNetOutput:
    """Result of :meth:`CapsNet.forward`.

    v : (B, 10, 16); lengths : (B, 10) in [0, 1); reconstruction : (B, 1, H, H) in (0, 1),
    (B, K, 1, H, H) for a (B, K) target, or None; trace : RoutingTrace or None.
    """

    v: Tensor
    lengths: Tensor
    reconstruction: Tensor | None
    trace: RoutingTrace | None = None


class CapsNet(nn.Module):
    """The three-layer CapsNet with reconstruction decoder of Sabour et al. (2017), Fig. 1-2.

    8,215,568 parameters with the MNIST defaults (6,804,224 without the decoder).
    """

    def __init__(self, cfg: CapsNetConfig | None = None) -> None:
        super().__init__()
        self.cfg = cfg or CapsNetConfig()
        self.conv1 = nn.Conv2d(1, self.cfg.conv1_channels, kernel_size=self.cfg.kernel_size)
        self.primary_caps = PrimaryCaps(self.cfg)
        self.digit_caps = DigitCaps(self.cfg)
        self.decoder = Decoder(self.cfg)

    def _conv1(self, x: Tensor, relu: bool = False) -> Tensor:
        """Conv1, followed by its ReLU where ``relu``. On the CPU as one matrix product over
        9x9 patches, laid out in memory for the PrimaryCaps path that reads it: the
        explorer's few images without gradients come out channels-last, (B, F, F, 256), the
        rows of PrimaryCaps' few-image product; training and batch evaluation come out (F,
        F, B, 256), in which the spectral path's transforms are single products over all
        B * 256 columns, with the ReLU in the product's call where
        :func:`~capsviz.model.conv.use_fused_relu` holds. Either way the result is an
        NCHW-shaped view, and ReLU's backward sees matching layouts (a mismatch there costs
        more than the convolution)."""
        if x.device.type != "cpu":
            out = self.conv1(x)
            return torch.relu(out) if relu else out
        batch, k = x.shape[0], self.cfg.kernel_size
        if _fast_inference(x):
            patches = x[:, 0].unfold(1, k, 1).unfold(2, k, 1)  # (B, F, F, k, k)
            side = patches.shape[1]
            w = self.conv1.weight.reshape(self.cfg.conv1_channels, k * k)
            out = torch.addmm(self.conv1.bias, patches.reshape(-1, k * k), w.t())  # (B*F*F, 256)
            out = out.view(batch, side, side, -1).permute(0, 3, 1, 2)  # channels-last strides
            return torch.relu(out) if relu else out
        # rows (y, x, image); the bias as the weight of a column of ones: no copy of it into
        # all F*F*B x 256 outputs, and its gradient comes with the weight's product
        low = product_dtype(x)
        images = x[:, 0].to(low)  # converted before the patches are gathered
        side = images.shape[1] - k + 1
        weight = torch.cat([self.conv1.weight.reshape(self.cfg.conv1_channels, k * k), self.conv1.bias[:, None]], 1)
        if relu and use_fused_relu(images, weight):
            out = conv1_relu(images, weight.to(low), k)  # (F*F*B, 256)
        else:
            out = conv1_patch_rows(images, k) @ weight.t()
            out = torch.relu(out) if relu else out
        return out.view(side, side, batch, -1).permute(2, 3, 0, 1)  # NCHW shape, (F, F, B, 256) in memory

    def forward(
        self,
        x: Tensor,
        routing_iterations: int | None = None,
        target: Tensor | None = None,
        reconstruct: bool = True,
        trace: bool = False,
    ) -> CapsNetOutput:
        """Run the network.

        Parameters
        ----------
        x : Tensor, float32, shape (B, 1, H, H), values in [0, 1]; H = ``cfg.image_size``
            (28 for MNIST, 36 for MultiMNIST)
        routing_iterations : int, optional
            Run-time number of routing iterations (default: the config's, 3).
        target : LongTensor (B,) or (B, K), optional
            Class whose capsule the decoder sees (training: the true label). Default:
            the longest capsule (the prediction). With (B, K) the decoder runs once per
            listed class (MultiMNIST, Sec. 6: K = 2) and ``reconstruction`` is
            (B, K, 1, H, H).
        reconstruct : bool
            Skip the decoder when false.
        trace : bool
            Also return a detached :class:`RoutingTrace`.

        Raises
        ------
        ValueError
            If ``x`` is not (B, 1, H, H).
        """
        size = self.cfg.image_size
        if x.dim() != 4 or tuple(x.shape[1:]) != (1, size, size):
            raise ValueError(f"expected input of shape (B, 1, {size}, {size}), got {tuple(x.shape)}")
        iterations = self.cfg.routing_iterations if routing_iterations is None else routing_iterations
        h = self._conv1(x, relu=True)  # (B, 256, F, F)
        u = self.primary_caps(h)  # (B, I, 8)
        v, u_hat, rec = self.digit_caps(u, iterations, record=trace)  # (B, 10, 16)
        lengths = capsule_length(v)  # (B, 10)
        recon = None
        if reconstruct:
            recon = self.decoder(v, target if target is not None else lengths.argmax(dim=1))
        routing_trace = None
        if rec is not None:
            vs = torch.stack(rec["v"])  # (R, B, J, D)
            routing_trace = RoutingTrace(
                u=u.detach(),
                u_lengths=capsule_length(u.detach()),
                u_hat=u_hat.detach(),
                b=stack_transposed(rec["b"]),
                c=stack_transposed(rec["c"]),
                v=vs,
                lengths=capsule_length(vs),
            )
        return CapsNetOutput(v=v, lengths=lengths, reconstruction=recon, trace=routing_trace)
