"""The training panel offers the ranges of capsviz.train.config.TRAIN_LIMITS, the ones the
CLI checks its flags against."""

from __future__ import annotations

from PySide6.QtWidgets import QDoubleSpinBox, QSpinBox

from capsviz.gui.widgets.training import TrainingPanel
from capsviz.train.config import TRAIN_LIMITS

FIELDS = {  # spin box of the panel -> its setting
    "epochs": "epochs",
    "batch_size": "batch_size",
    "lr": "lr",
    "lr_decay": "lr_decay",
    "lr_decay_steps": "lr_decay_steps",
    "routing": "routing_iterations",
    "reconstruction_weight": "reconstruction_weight",
    "max_shift": "max_shift",
    "seed": "seed",
    "train_subset": "train_subset",
    "test_subset": "test_subset",
    "pairs_per_epoch": "pairs_per_epoch",
}


def test_every_spin_box_offers_its_settings_range(qtbot):
    panel = TrainingPanel()
    qtbot.addWidget(panel)
    assert set(FIELDS.values()) == set(TRAIN_LIMITS)
    for attribute, name in FIELDS.items():
        box = getattr(panel, attribute)
        assert isinstance(box, (QSpinBox, QDoubleSpinBox)), attribute
        limit = TRAIN_LIMITS[name]
        assert (box.minimum(), box.maximum()) == limit.control_range(), name
        assert limit.problem(box.minimum()) is None and limit.problem(box.maximum()) is None, name
    assert (panel.routing.maximum(), panel.max_shift.maximum(), panel.lr.minimum()) == (7, 6, 1e-7)
