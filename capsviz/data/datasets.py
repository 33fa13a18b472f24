"""The data sets a capsviz model is trained for, and the input size each one fixes."""

from __future__ import annotations

from capsviz.texts import _

# name -> side of the square input image in pixels
IMAGE_SIZE = {"mnist": 28, "multimnist": 36}
DATASETS = tuple(IMAGE_SIZE)
TITLES = {"mnist": "MNIST", "multimnist": "MultiMNIST"}
MNIST_TRAIN_IMAGES = 60_000  # the MNIST training and test sets' sizes (LeCun et al.)
MNIST_TEST_IMAGES = 10_000
PAIRS_PER_EPOCH = 60_000  # MultiMNIST training pairs drawn afresh for each epoch (capsviz.data.multimnist)


def check_dataset(name: str) -> str:
    """Return ``name`` if it is one of :data:`DATASETS`; else raise ``ValueError`` listing them."""
    if name not in IMAGE_SIZE:
        raise ValueError(_("dataset must be one of {DATASETS} (got {name!r})", DATASETS=", ".join(DATASETS), name=name))
    return name
