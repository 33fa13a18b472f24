"""Model configuration for the CapsNet of Sabour, Frosst & Hinton (2017)."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass

MAX_SIZE = 4096  # bound on every size, so a forged config cannot ask for absurd memory
# The baseline CNNs (capsviz.model.baseline): name -> the widths of its three convolutions
PRESETS = {"baseline": (256, 256, 128), "baseline-small": (64, 64, 32)}


@dataclass(frozen=True)
class CapsNetConfig:
    """Hyper-parameters that fix the shapes of a CapsNet.

    The defaults are the MNIST network of the paper (arXiv:1710.09829, Sec. 4):
    Conv1 256 x 9x9, PrimaryCaps 32 types of 8-D capsules on a 6x6 grid,
    DigitCaps 10 capsules of 16 dimensions, decoder 512-1024-784.

    Raises
    ------
    ValueError
        If a size is not positive or the geometry does not give a whole grid.
    """

    image_size: int = 28
    conv1_channels: int = 256
    kernel_size: int = 9
    primary_types: int = 32
    primary_dim: int = 8
    primary_stride: int = 2
    num_classes: int = 10
    digit_dim: int = 16
    decoder_hidden: tuple[int, int] = (512, 1024)
    routing_iterations: int = 3

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            values = value if isinstance(value, tuple) else (value,)
            if any(isinstance(x, bool) or not isinstance(x, int) or not 1 <= x <= MAX_SIZE for x in values):
                raise ValueError(f"CapsNetConfig.{field.name} must be integers in 1..{MAX_SIZE}, got {value!r}")
        if not isinstance(self.decoder_hidden, tuple) or len(self.decoder_hidden) != 2:
            raise ValueError(f"CapsNetConfig.decoder_hidden must be two layer sizes, got {self.decoder_hidden!r}")
        if self.conv1_size < self.kernel_size:
            raise ValueError(
                f"image_size {self.image_size} is too small for two {self.kernel_size}x{self.kernel_size} convolutions"
            )

    @property
    def conv1_size(self) -> int:
        """Side of the Conv1 feature map (20 for MNIST)."""
        return self.image_size - self.kernel_size + 1

    @property
    def grid_size(self) -> int:
        """Side of the PrimaryCaps grid (6 for MNIST)."""
        return (self.conv1_size - self.kernel_size) // self.primary_stride + 1

    @property
    def num_primary(self) -> int:
        """Number of primary capsules, types x grid x grid (1152 for MNIST)."""
        return self.primary_types * self.grid_size**2

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> CapsNetConfig:
        """Parse a config written by :meth:`to_json`.

        Raises
        ------
        ValueError
            If the text is not a JSON object of known fields.
        """
        return config_from_json(cls, text)


def config_from_json(cls, text: str):
    """An instance of the frozen dataclass ``cls`` from the JSON object ``text`` (lists become
    tuples). ``ValueError`` when the text is not a JSON object of ``cls``'s fields or a
    value is refused."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"model config is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError("model config must be a JSON object")
    unknown = sorted(set(data) - {f.name for f in dataclasses.fields(cls)})
    if unknown:
        raise ValueError(f"model config has unknown fields: {', '.join(unknown)}")
    data = {k: tuple(v) if isinstance(v, list) else v for k, v in data.items()}
    try:
        return cls(**data)
    except TypeError as exc:
        raise ValueError(f"bad model config: {exc}") from None
