"""Qt-free CapsNet model: configuration, routing, network and losses.

The names below load their modules (and torch) when first used, so that
:mod:`capsviz.model.config` can be read without torch (``capsviz --help``).
"""

from __future__ import annotations

import importlib

_HOMES = {
    "CapsNet": "capsviz.model.capsnet",
    "CapsNetOutput": "capsviz.model.capsnet",
    "Decoder": "capsviz.model.capsnet",
    "DigitCaps": "capsviz.model.capsnet",
    "PrimaryCaps": "capsviz.model.capsnet",
    "CapsNetConfig": "capsviz.model.config",
    "margin_loss": "capsviz.model.losses",
    "reconstruction_loss": "capsviz.model.losses",
    "total_loss": "capsviz.model.losses",
    "RoutingTrace": "capsviz.model.routing",
    "capsule_length": "capsviz.model.routing",
    "dynamic_routing": "capsviz.model.routing",
    "squash": "capsviz.model.routing",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str):
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'capsviz.model' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES})
