"""The view choices' checks, as the settings file's values are read back."""

from __future__ import annotations

import pytest

from capsviz.view_settings import VIEW_KEYS, checked


def test_a_value_read_back_is_its_type_within_its_range():
    assert checked("input/brush", "30") == 30
    assert checked("app/language", "zh_CN") == "zh_CN"
    wrong = (("input/brush", "61"), ("input/brush", "thick"), ("app/language", "de"), ("app/tour_offered", 2))
    for key, value in wrong:
        with pytest.raises(ValueError, match=key):
            checked(key, value)
    assert all(check(default) for _, default, check in VIEW_KEYS.values())  # every default passes its check
