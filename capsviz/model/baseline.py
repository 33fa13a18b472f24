"""The CNN that capsules are compared against (Sabour et al. 2017, Sec. 5 and 6.2).

Three 5 x 5 convolutions of stride 1 (ReLU, zero-padded so the maps keep the input size),
then fully connected layers of 328 and 192 units (ReLU), dropout, and a 10-way linear
layer. On MNIST the outputs are a softmax trained with cross entropy; on MultiMNIST they
are ten independent sigmoids trained with binary cross entropy against the two digits
present, and the two highest are the prediction (top-2 scoring, as for the CapsNet).

Presets (:data:`capsviz.model.config.PRESETS`):

- ``baseline``: the paper's MNIST baseline, 256, 256 and 128 channels: 35,445,522
  parameters at 28 x 28 (the paper: 35.4 M). The paper gives only the parameter count of
  its MultiMNIST baseline (24.56 M); at 36 x 36 this layout has 56,941,330.
- ``baseline-small``: 64, 64 and 32 channels, the same layers otherwise: 8,449,650
  parameters at 28 x 28, about as many as the CapsNet (8.2 M with its decoder; the paper's
  affNIST comparison used a CNN of the CapsNet's size), 13,823,602 at 36 x 36. The shipped
  CNNs are this one (float16, 17 and 27 MB).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from capsviz.model.config import MAX_SIZE, PRESETS, config_from_json

OUTPUTS = ("softmax", "sigmoid")


@dataclass(frozen=True)
class BaselineConfig:
    """Shapes of the baseline CNN (defaults: the paper's MNIST baseline).

    image_size : input side in pixels (28 MNIST, 36 MultiMNIST); channels : the three
    convolutions' widths; kernel_size : their square kernels (stride 1, zero padding
    kernel_size // 2); hidden : the two fully connected layers; dropout : probability
    before the last layer, in [0, 1); output : ``softmax`` (one digit, cross entropy) or
    ``sigmoid`` (several digits, binary cross entropy).

    Raises ``ValueError`` for a size outside 1..4096, an even kernel, a dropout outside
    [0, 1) or an unknown output.
    """

    image_size: int = 28
    channels: tuple[int, int, int] = (256, 256, 128)
    kernel_size: int = 5
    hidden: tuple[int, int] = (328, 192)
    dropout: float = 0.5
    num_classes: int = 10
    output: str = "softmax"

    def __post_init__(self) -> None:
        for name in ("image_size", "channels", "kernel_size", "hidden", "num_classes"):
            value = getattr(self, name)
            values = value if isinstance(value, tuple) else (value,)
            if any(isinstance(x, bool) or not isinstance(x, int) or not 1 <= x <= MAX_SIZE for x in values):
                raise ValueError(f"BaselineConfig.{name} must be integers in 1..{MAX_SIZE}, got {value!r}")
        if len(self.channels) != 3 or len(self.hidden) != 2:
            raise ValueError("BaselineConfig needs three convolution widths and two hidden layer sizes")
        if self.kernel_size % 2 == 0:
            raise ValueError(f"BaselineConfig.kernel_size must be odd (same-size padding), got {self.kernel_size}")
        if not isinstance(self.dropout, (int, float)) or not 0 <= self.dropout < 1:
            raise ValueError(f"BaselineConfig.dropout must be in [0, 1), got {self.dropout!r}")
        if self.output not in OUTPUTS:
            raise ValueError(f"BaselineConfig.output must be one of {', '.join(OUTPUTS)}, got {self.output!r}")

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> BaselineConfig:
        """Parse a config written by :meth:`to_json`; ``ValueError`` if it is not one."""
        return config_from_json(cls, text)


def preset(name: str, image_size: int = 28) -> BaselineConfig:
    """The config of a preset of :data:`PRESETS` for ``image_size`` (36: MultiMNIST, sigmoid
    outputs). Raises ``ValueError`` for an unknown name."""
    if name not in PRESETS:
        raise ValueError(f"unknown baseline {name!r}; choose from {', '.join(PRESETS)}")
    return BaselineConfig(
        image_size=image_size, channels=PRESETS[name], output="sigmoid" if image_size != 28 else "softmax"
    )


class BaselineCNN(nn.Module):
    """x (B, 1, H, H) float in [0, 1] -> class logits (B, 10); :meth:`scores` gives the
    probabilities the app and ``capsviz eval`` compare with capsule lengths."""

    def __init__(self, cfg: BaselineConfig | None = None) -> None:
        super().__init__()
        self.cfg = cfg = cfg or BaselineConfig()
        layers: list[nn.Module] = []
        inputs = 1
        for width in cfg.channels:
            layers += [nn.Conv2d(inputs, width, cfg.kernel_size, padding=cfg.kernel_size // 2), nn.ReLU(inplace=True)]
            inputs = width
        self.features = nn.Sequential(*layers)
        first, second = cfg.hidden
        self.classifier = nn.Sequential(
            nn.Flatten(),
            nn.Linear(inputs * cfg.image_size**2, first),
            nn.ReLU(inplace=True),
            nn.Linear(first, second),
            nn.ReLU(inplace=True),
            nn.Dropout(cfg.dropout),
            nn.Linear(second, cfg.num_classes),
        )

    def forward(self, x: Tensor) -> Tensor:
        return self.classifier(self.features(x))

    def probabilities_from(self, logits: Tensor) -> Tensor:
        """float32 (B, 10) in [0, 1]: the softmax of ``logits`` (rows sum to 1), or for a
        ``sigmoid`` model each class's own sigmoid."""
        logits = logits.float()
        return torch.sigmoid(logits) if self.cfg.output == "sigmoid" else torch.softmax(logits, dim=1)

    @torch.inference_mode()
    def scores(self, x: Tensor) -> Tensor:
        """Class probabilities (B, 10) float32 in [0, 1], in eval mode (no dropout)."""
        if self.training:  # eval() walks every module; the explorer asks for every input
            self.eval()
        return self.probabilities_from(self(x))

    def loss(self, logits: Tensor, labels: Tensor) -> Tensor:
        """Mean loss of a batch: cross entropy against ``labels`` (B,) int64 for a softmax
        model; for a sigmoid model binary cross entropy against the two-hot targets of
        ``labels`` (B, 2), summed over the 10 classes."""
        logits = logits.float()
        if self.cfg.output == "softmax":
            return F.cross_entropy(logits, labels)
        target = torch.zeros_like(logits).scatter_(1, labels, 1.0)
        return F.binary_cross_entropy_with_logits(logits, target, reduction="sum") / len(logits)


def baseline_probabilities(cnn: BaselineCNN, images, batch_size: int = 256):
    """The CNN's class probabilities for a stack of inputs, as the app shows them beside the
    capsule lengths (in batches, by :func:`capsviz.evaluate.batched`).

    images : (N, H, H) or one (H, H) float array in [0, 1], H = ``cnn.cfg.image_size``.
    Returns float32 numpy (N, 10) (or (10,) for one image) in [0, 1].

    Raises ``ValueError`` when the images are not H x H.
    """
    import numpy as np

    from capsviz.evaluate import batched

    images = np.asarray(images, dtype=np.float32)
    one = images.ndim == 2
    result = batched(cnn, images[None] if one else images, cnn.scores, (cnn.cfg.num_classes,), batch_size)
    return result[0] if one else result
