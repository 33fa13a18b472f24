"""The paper's baseline CNN for MNIST (Sabour et al. 2017, Sec. 5): the network capsules
are compared against.

Three 5 x 5 convolutions of stride 1 with 256, 256 and 128 channels (ReLU, padded to keep
the 28 x 28 size: the paper's 35.4 M parameters need the full-size maps), then fully
connected layers of 328 and 192 units (ReLU), dropout, and a 10-way linear layer whose
softmax is trained with cross entropy. 35,445,522 parameters at 28 x 28.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn


@dataclass(frozen=True)
class BaselineConfig:
    """Shapes of the baseline CNN (defaults: the paper's MNIST baseline).

    image_size : input side in pixels; channels : the three convolutions' widths;
    kernel_size : their square kernels (stride 1, zero padding kernel_size // 2);
    hidden : the two fully connected layers; dropout : probability before the last layer.
    """

    image_size: int = 28
    channels: tuple[int, int, int] = (256, 256, 128)
    kernel_size: int = 5
    hidden: tuple[int, int] = (328, 192)
    dropout: float = 0.5
    num_classes: int = 10


class BaselineCNN(nn.Module):
    """x (B, 1, H, H) float in [0, 1] -> class logits (B, 10); ``probabilities`` gives the softmax."""

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

    @torch.inference_mode()
    def probabilities(self, x: Tensor) -> Tensor:
        """Softmax over the 10 classes, (B, 10), each row summing to 1 (eval mode: no dropout)."""
        self.eval()
        return torch.softmax(self(x).float(), dim=1)
