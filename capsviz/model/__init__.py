"""Qt-free CapsNet model: configuration, routing, network and losses."""

from capsviz.model.capsnet import CapsNet, CapsNetOutput, Decoder, DigitCaps, PrimaryCaps
from capsviz.model.config import CapsNetConfig
from capsviz.model.losses import margin_loss, reconstruction_loss, total_loss
from capsviz.model.routing import RoutingTrace, capsule_length, dynamic_routing, squash

__all__ = [
    "CapsNet",
    "CapsNetConfig",
    "CapsNetOutput",
    "Decoder",
    "DigitCaps",
    "PrimaryCaps",
    "RoutingTrace",
    "capsule_length",
    "dynamic_routing",
    "margin_loss",
    "reconstruction_loss",
    "squash",
    "total_loss",
]
