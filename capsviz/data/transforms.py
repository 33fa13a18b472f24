"""Geometric and stroke transforms of a 28x28 input, for probing invariance and
equivariance: rotate, scale, translate, shear (torchvision's affine warp), and thicken or
thin the strokes (grey-scale dilation / erosion)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

import numpy as np
import torch
import torch.nn.functional as F
from torchvision.transforms import InterpolationMode
from torchvision.transforms.v2 import functional as TF

from capsviz.texts import QT_TR_NOOP


@dataclass(frozen=True)
class InputTransform:
    """Parameters, applied in this order: affine warp about the image centre, then strokes.

    rotation : degrees, counter-clockwise, in [-90, 90]
    scale : factor in [0.5, 1.5]
    tx, ty : pixels, right and down, in [-8, 8]
    shear : degrees along x, in [-45, 45]
    thickness : dilation (> 0) or erosion (< 0) steps of a 3x3 grey-scale max filter, in
        [-2, 2]; fractions blend the last step
    """

    rotation: float = 0.0
    scale: float = 1.0
    tx: float = 0.0
    ty: float = 0.0
    shear: float = 0.0
    thickness: float = 0.0

    def is_identity(self) -> bool:
        return self == InputTransform()

    def with_value(self, name: str, value: float) -> InputTransform:
        return replace(self, **{name: float(value)})

    def as_dict(self) -> dict:
        return asdict(self)


# (name, label, low, high, unit) of every parameter, for sliders and sweeps; the labels are
# English sources the GUI translates
PARAMETERS = (
    ("rotation", QT_TR_NOOP("rotate"), -90.0, 90.0, "°"),
    ("scale", QT_TR_NOOP("scale"), 0.5, 1.5, "×"),
    ("tx", QT_TR_NOOP("move x"), -8.0, 8.0, " px"),
    ("ty", QT_TR_NOOP("move y"), -8.0, 8.0, " px"),
    ("shear", QT_TR_NOOP("shear"), -45.0, 45.0, "°"),
    ("thickness", QT_TR_NOOP("stroke"), -2.0, 2.0, ""),
)


def sweep_values(name: str, steps: int) -> np.ndarray:
    """``steps`` values of parameter ``name`` evenly over its range in :data:`PARAMETERS`
    (both ends included), float32 (steps,). Raises ``KeyError`` for an unknown name."""
    low, high = next(((lo, hi) for n, _, lo, hi, _ in PARAMETERS if n == name), (None, None))
    if low is None:
        raise KeyError(f"no transform parameter {name!r}")
    return np.linspace(low, high, steps, dtype=np.float32)


def _dilate(x: torch.Tensor) -> torch.Tensor:
    return F.max_pool2d(x, 3, stride=1, padding=1)


def _erode(x: torch.Tensor) -> torch.Tensor:
    return -F.max_pool2d(-x, 3, stride=1, padding=1)


def apply_transform(image: np.ndarray, t: InputTransform) -> np.ndarray:
    """Transform one input.

    image : (28, 28) float in [0, 1]. Returns (28, 28) float32 in [0, 1]; the identity
    returns an unchanged copy. Pixels moved in from outside are 0 (background).
    """
    return apply_transforms(image, [t])[0]


def _transformed(x: torch.Tensor, t: InputTransform) -> torch.Tensor:
    """(B, 1, H, W) float in [0, 1] under ``t``: the affine warp, then the strokes; clamped."""
    if (t.rotation, t.scale, t.tx, t.ty, t.shear) != (0.0, 1.0, 0.0, 0.0, 0.0):
        x = TF.affine(
            x,
            angle=-t.rotation,  # torchvision's affine turns clockwise
            translate=[t.tx, t.ty],
            scale=t.scale,
            shear=[t.shear, 0.0],
            interpolation=InterpolationMode.BILINEAR,
            fill=0.0,
        )
    steps, frac = int(abs(t.thickness)), abs(t.thickness) % 1.0
    op = _dilate if t.thickness > 0 else _erode
    for _ in range(steps):
        x = op(x)
    if frac > 0:
        x = (1 - frac) * x + frac * op(x)
    return x.clamp(0, 1)


def apply_transforms(image: np.ndarray, transforms: list[InputTransform]) -> np.ndarray:
    """One input under several transforms: (K, 28, 28) float32 in [0, 1]."""
    base = torch.from_numpy(np.array(image, dtype=np.float32)).reshape(1, 1, *np.shape(image))  # a copy
    return torch.stack([_transformed(base.clone(), t)[0, 0] for t in transforms]).numpy().astype(np.float32)


def apply_each(images: np.ndarray, transforms: list[InputTransform]) -> np.ndarray:
    """Images under a transform each: images (N, H, W) uint8 0..255 or float in [0, 1],
    ``transforms`` N of them. Returns (N, H, W) float32 in [0, 1]; images with the same
    transform are warped together, exactly as :func:`apply_transform` warps one.

    Raises ``ValueError`` when the counts differ.
    """
    images = np.asarray(images)
    if len(transforms) != len(images):
        raise ValueError(f"{len(images)} images but {len(transforms)} transforms")
    x = images.astype(np.float32) / 255.0 if images.dtype == np.uint8 else images.astype(np.float32)
    out = np.empty_like(x)
    groups: dict[InputTransform, list[int]] = {}
    for k, t in enumerate(transforms):
        groups.setdefault(t, []).append(k)
    for t, members in groups.items():
        if t.is_identity():
            out[members] = x[members]
        else:
            out[members] = _transformed(torch.from_numpy(x[members]).unsqueeze(1), t)[:, 0].numpy()
    return out
