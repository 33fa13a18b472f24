"""The view choices' checks, as the settings file's values are read back."""

from __future__ import annotations

import pytest

from capsviz.view_settings import VIEW_KEYS, Restored, checked, restore


def test_a_value_read_back_is_its_type_within_its_range():
    assert checked("input/brush", "30") == 30
    assert checked("app/language", "zh_CN") == "zh_CN"
    wrong = (("input/brush", "61"), ("input/brush", "thick"), ("app/language", "de"), ("app/tour_offered", 2))
    for key, value in wrong:
        with pytest.raises(ValueError, match=key):
            checked(key, value)
    assert all(check(default) for _, default, check in VIEW_KEYS.values())  # every default passes its check


def test_a_settings_file_restores_what_passes_its_checks_and_names_the_rest(tmp_path):
    checkpoint = tmp_path / "model.safetensors"
    checkpoint.write_bytes(b"x")
    values = {
        "format": "1",
        "window/geometry": b"\x01\xd9",
        "window/state": b"",  # empty: not a layout
        "window/screen": (1920, 1080),
        "model/checkpoint": str(checkpoint),
        "input/brush": "30",
        "routing/scale": "9",
    }
    restored = restore(values, "capsviz.ini")
    assert (restored.geometry, restored.state, restored.screen) == (b"\x01\xd9", None, (1920, 1080))
    assert restored.checkpoint == checkpoint and restored.views["input/brush"] == 30
    assert restored.views["routing/scale"] == VIEW_KEYS["routing/scale"][1]  # out of range: the default
    assert restored.problems == ["window/state", "routing/scale"]
    gone = restore({"format": 1, "model/checkpoint": str(tmp_path / "gone"), "window/screen": "invalid"}, "f")
    assert gone.checkpoint is None and gone.problems == [
        "window/screen",
        f"the last checkpoint {tmp_path / 'gone'} is gone",
    ]
    assert restore({}, "f") == Restored()
    other = restore({"format": "7", "input/brush": "30"}, "other.ini")
    assert other.views == Restored().views and other.problems == [
        "other.ini is not a capsviz settings file of this version"
    ]
