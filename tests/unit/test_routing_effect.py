"""What routing does for one trace and over a test set (capsviz.model.routing_effect)."""

from __future__ import annotations

import os

import numpy as np
import pytest

from capsviz.evaluate import answers_differ, answers_of
from capsviz.model.routing_effect import RoutingCheck, cached_routing_check, marked_capsules, routing_effect


def _trace(iterations: int = 3, n_primary: int = 1152):
    """Every capsule at the even split but capsule 40 (all to digit 2 at the end) and capsule 7
    (0.16 to digit 5, a departure of 0.06), with lengths whose answer moves from 1 to 2."""
    c = np.full((iterations, n_primary, 10), 0.1)
    c[-1, 40] = 0.0
    c[-1, 40, 2] = 1.0
    c[-1, 7] = (1 - 0.16) / 9
    c[-1, 7, 5] = 0.16
    u_lengths = np.full(n_primary, 0.5)
    u_lengths[40] = 0.9
    lengths = np.full((iterations, 10), 0.1)
    lengths[0, 1] = 0.8
    lengths[-1, 2] = 0.9
    return u_lengths, c, lengths


def test_the_decisive_capsules_their_mass_the_entropy_and_the_answers():
    u_lengths, c, lengths = _trace()
    e = routing_effect(u_lengths, c, lengths)
    assert e.primary == 1152 and e.threshold == pytest.approx(0.05)
    assert e.decisive.tolist() == [40, 7]  # the largest departure (0.9) first
    assert e.mass_share == pytest.approx((0.9 + 0.5) / (0.5 * 1150 + 0.9 + 0.5))
    assert e.entropy[0] == pytest.approx(np.log(10))
    p = c[-1, 7]
    expected = (np.log(10) * 1150 - (p * np.log(p)).sum()) / 1152  # capsule 40 has entropy 0
    assert e.entropy[-1] == pytest.approx(expected)
    assert e.first == (1,) and e.last == (2,) and e.changed
    # a stricter threshold leaves only the capsule that routes wholly
    assert routing_effect(u_lengths, c, lengths, threshold=1.0).decisive.tolist() == [40]


def test_pairs_answer_with_their_two_longest_capsules_in_any_order():
    u_lengths, c, lengths = _trace()
    lengths[0, 2], lengths[-1, 1] = 0.7, 0.85  # both iterations: digits 1 and 2, in other orders
    e = routing_effect(u_lengths, c, lengths, answers=2)
    assert e.first == (1, 2) and e.last == (2, 1) and not e.changed  # longest first, as the pair panel says them
    a = answers_of(np.array([[0.1, 0.9, 0.8, 0], [0.9, 0.1, 0.2, 0]]), 2)
    assert a.tolist() == [[1, 2], [0, 2]]
    assert answers_differ(a, np.array([[2, 1], [0, 2]])).tolist() == [True, False]
    with pytest.raises(ValueError, match="answers must be 1 or 2"):
        answers_of(lengths, 3)


def test_its_lines_set_r_1_beside_r_and_with_one_iteration_say_there_is_nothing_to_compare():
    from capsviz.texts import english

    e = routing_effect(*_trace())
    assert e.lines(english)[-2:] == ["answer 1 (r = 1), 2 (r = 3)", "routing changes the answer"]
    one = routing_effect(*_trace(iterations=1))
    assert one.iterations == 1 and not one.changed
    assert one.lines(english)[-2:] == ["answer 2 (r = 1)", "one routing iteration: raise R to compare"]


def test_shapes_that_do_not_fit_are_refused():
    u_lengths, c, lengths = _trace()
    with pytest.raises(ValueError, match=r"expected u_lengths \(I,\), c \(R, I, J\)"):
        routing_effect(u_lengths[:-1], c, lengths)


def test_marked_capsules_stand_on_their_tile_and_their_receptive_field():
    # capsule 0: type 0 at (0, 0); capsule 36 * 9 + 6 * 2 + 5: type 9 (mosaic row 1, column 1) at y 2, x 5
    mosaic, field = marked_capsules(np.array([0, 36 * 9 + 6 * 2 + 5]), 1152)
    np.testing.assert_allclose(mosaic, [[0.5, 0.5], [7 + 5.5, 7 + 2.5]])
    np.testing.assert_allclose(field, [[8.5, 8.5], [2 * 5 + 8.5, 2 * 2 + 8.5]])


def test_the_count_is_kept_per_model_file_and_redone_when_the_file_changes(tmp_path):
    model = tmp_path / "model.safetensors"
    model.write_bytes(b"weights")
    calls = []

    def compute():
        calls.append(1)
        return RoutingCheck(10_000, 3, 7, 9965, 9964)

    cache = tmp_path / "cache"
    assert cached_routing_check(cache, model, 3, 10_000) is None
    assert cached_routing_check(cache, model, 3, 10_000, compute) == RoutingCheck(10_000, 3, 7, 9965, 9964)
    assert cached_routing_check(cache, model, 3, 10_000, compute).differ == 7 and len(calls) == 1
    assert cached_routing_check(cache, model, 2, 10_000) is None  # another R is another count
    (kept,) = cache.iterdir()
    kept.write_text("{not json", encoding="utf-8")  # a damaged cache counts as absent
    assert cached_routing_check(cache, model, 3, 10_000, compute).differ == 7 and len(calls) == 2
    stat = model.stat()
    os.utime(model, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # the file was written again
    assert cached_routing_check(cache, model, 3, 10_000) is None
