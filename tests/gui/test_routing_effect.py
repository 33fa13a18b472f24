"""The Routing view's 'what routing does here': figures of the input shown against those
computed here from ``capsviz trace`` of the same image, the marked capsules, and the count
over the test set that ``capsviz eval --per-iteration`` keeps per model file."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image
from PySide6.QtCore import Qt

from capsviz.cli import main
from capsviz.data.mnist import load_test_or_sample
from tests.conftest import mnist_root
from tests.gui.events import settle


@pytest.fixture
def digit_zero(tmp_path):
    """MNIST test image 0 (a 7; the shipped sample's first too) as a PNG file, and its ``capsviz trace``."""
    png = tmp_path / "test0.png"
    Image.fromarray(load_test_or_sample(mnist_root())[0].images[0]).save(png)
    trace = tmp_path / "test0.npz"
    assert main(["trace", str(png), "--out", str(trace)]) == 0
    return png, dict(np.load(trace))


def test_the_routing_figures_of_test_image_0_are_those_of_its_trace(window, qtbot, digit_zero):
    png, trace = digit_zero
    # computed here from the trace alone: capsules more than 0.05 from the even split 0.1
    departure = np.abs(trace["c"][-1] - 0.1).max(axis=1)  # (I,)
    decisive = np.flatnonzero(departure > 0.05)
    share = trace["u_lengths"][decisive].sum() / trace["u_lengths"].sum()
    entropy = -(trace["c"] * np.log(trace["c"])).sum(axis=2).mean(axis=1)  # (R,)
    first, last = trace["lengths"][0].argmax(), trace["lengths"][-1].argmax()
    assert len(decisive) > 0 and first == last == 7

    assert window.sources.open_image(png)
    settle(qtbot, window)
    view = window.routing_view
    effect = view.effect
    assert sorted(effect.decisive) == sorted(decisive)
    assert effect.mass_share == pytest.approx(share, abs=1e-6)
    np.testing.assert_allclose(effect.entropy, entropy, atol=1e-5)
    assert effect.first == (first,) and effect.last == (last,) and not effect.changed
    text = view.effect_label.text().replace("\u00a0", " ")
    assert f"decisive: {len(decisive):,} of 1,152<br>(|c_ij − 0.1| > 0.05 at r = 3)" in text
    assert f"share of Σ‖u_i‖: {100 * share:.1f} %" in text
    assert f"entropy {entropy[0]:.4f} → {entropy[-1]:.4f}" in text
    assert "answer 7 (r = 1), 7 (r = 3)<br>routing keeps the answer" in text
    assert "r = " not in view.effect_label.text()  # the narrow column never wraps inside "r = 3"

    # mark decisive: rings on the mosaic tiles and the receptive fields of the most decisive
    assert len(view.mosaic_marks.data) == 0
    qtbot.mouseClick(view.mark_button, Qt.MouseButton.LeftButton)
    settle(qtbot, window)
    top = decisive[np.argsort(-departure[decisive], kind="stable")][:12]
    t, rest = np.divmod(top, 36)
    y, x = np.divmod(rest, 6)
    fields = np.stack([2 * x + 8.5, 2 * y + 8.5], axis=1)  # 17 x 17 fields, stride 2
    tiles = np.stack([(t % 8) * 7 + x + 0.5, (t // 8) * 7 + y + 0.5], axis=1)  # 4 x 8 tiles of 6 x 6 and a gap
    marks = view.field_marks.data
    np.testing.assert_allclose(np.stack([marks["x"], marks["y"]], axis=1), fields)
    for item in (view.mosaic_marks, view.mosaic_marks_edge):  # a white ring over a black one
        marks = item.data
        np.testing.assert_allclose(np.stack([marks["x"], marks["y"]], axis=1), tiles)


@pytest.mark.skipif(mnist_root() is None, reason="needs CAPSVIZ_DATA with the MNIST test set")
def test_the_test_set_count_is_evals_kept_for_the_model_file(window, qtbot, capsys, shipped_checkpoint):
    view = window.routing_view
    assert view.check_text == ""  # nothing kept for this model file yet
    args = ["eval", "--checkpoint", str(shipped_checkpoint), "--data-root", str(mnist_root()), "--per-iteration", "1"]
    assert main(args) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.strip().startswith("1 |")]
    assert len(rows) == 1
    differ = int(rows[0].split("|")[-1].replace(",", ""))
    right_first = int(rows[0].split("|")[1].split("/")[0].replace(",", ""))
    window.routing_checker.show_kept()  # as a model load does
    assert (
        f"other answers at r = 1 than at r = 3 on {differ:,} of 10,000 ({right_first:,} right at r = 1"
        in view.check_text
    )
    assert view.check_text in view.effect_label.text().replace("\u00a0", " ")
    # counted in the app for another R: a new count, on a worker thread, kept in turn
    view.iterations.setValue(2)
    assert view.check_text == ""
    qtbot.mouseClick(view.check_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "other answers at r = 1 than at r = 2 on" in view.check_text, timeout=240_000)
    counted = view.check_text
    view.iterations.setValue(3)
    view.iterations.setValue(2)
    assert view.check_text == counted  # the count for R = 2 is kept too
