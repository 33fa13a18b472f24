"""Start a CapsNet for a larger input from the weights of one trained on a smaller input.

The convolutions (Conv1, PrimaryCaps) do not depend on the input size and are copied. The
digit-capsule transforms W_ij belong to one primary capsule each, at a grid position: a
primary capsule of the larger grid takes the W of the capsule of the same type that sees
the same part of the digit when the smaller image is centred in the larger one (grid
offset (g_large - g_small) / 2), clamped to the smaller grid at its border. The decoder's
hidden layers are copied; its output layer is copied for the pixels of the centred smaller
image, and the border pixels start with zero weights and the bias of an empty pixel
(sigmoid(-6) = 0.0025).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from capsviz.model.config import CapsNetConfig
from capsviz.texts import _

EMPTY_PIXEL_LOGIT = -6.0


def widen_state(state: dict[str, Tensor], source: CapsNetConfig, target: CapsNetConfig) -> dict[str, Tensor]:
    """Map the ``state_dict`` of a CapsNet of config ``source`` to one of config ``target``.

    ``target`` must differ from ``source`` only in ``image_size`` (not smaller, same parity
    of grid offset) and ``routing_iterations``. Returns a new dict of float32 tensors with
    ``target``'s shapes: ``digit_caps.W`` (I_target, 10, 16, 8), ``decoder.net.4.*`` for
    ``target.image_size ** 2`` pixels.

    Raises
    ------
    ValueError
        If the configs differ otherwise, or the target image is smaller or off-centre.
    """
    same = {k: v for k, v in source.__dict__.items() if k not in ("image_size", "routing_iterations")}
    other = {k: v for k, v in target.__dict__.items() if k not in ("image_size", "routing_iterations")}
    if same != other:
        raise ValueError(_("the two models differ in more than their input size"))
    pad = target.image_size - source.image_size
    offset = (target.grid_size - source.grid_size) // 2
    if pad < 0 or pad % (2 * source.primary_stride) or 2 * offset != target.grid_size - source.grid_size:
        raise ValueError(
            _(
                "cannot widen a {image_size}px model to {image_size2}px: the larger image must "
                "centre the smaller one on whole PrimaryCaps grid steps",
                image_size=source.image_size,
                image_size2=target.image_size,
            )
        )
    out = {k: v.detach().to(torch.float32).clone() for k, v in state.items()}
    g_s, g_t, types = source.grid_size, target.grid_size, source.primary_types
    near = np.clip(np.arange(g_t) - offset, 0, g_s - 1)  # source row/column of each target row/column
    index = (np.arange(types)[:, None, None] * g_s * g_s + near[None, :, None] * g_s + near[None, None, :]).reshape(
        -1
    )  # capsule i = type * g * g + y * g + x
    out["digit_caps.W"] = out["digit_caps.W"][torch.from_numpy(index)].clone()
    weight, bias = out["decoder.net.4.weight"], out["decoder.net.4.bias"]  # (s*s, hidden), (s*s,)
    s, t, p = source.image_size, target.image_size, pad // 2
    new_weight = weight.new_zeros(t, t, weight.shape[1])
    new_bias = bias.new_full((t, t), EMPTY_PIXEL_LOGIT)
    new_weight[p : p + s, p : p + s] = weight.reshape(s, s, -1)
    new_bias[p : p + s, p : p + s] = bias.reshape(s, s)
    out["decoder.net.4.weight"] = new_weight.reshape(t * t, -1)
    out["decoder.net.4.bias"] = new_bias.reshape(-1)
    return out
