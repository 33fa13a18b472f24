"""capsviz: a visual explorer for Capsule Networks (Sabour, Frosst & Hinton 2017)."""

__version__ = "0.1.0"
