"""The inference thread: newest request first, results delivered on the GUI thread."""

from __future__ import annotations

import threading

import numpy as np
from PySide6.QtCore import Qt

import capsviz.explorer as explorer
from capsviz.data.mnist import load_sample
from capsviz.data.transforms import InputTransform
from capsviz.explorer import InferenceRequest, SweepRequest
from capsviz.gui.inference_thread import InferenceThread
from capsviz.model import CapsNet
from capsviz.model.inference import infer
from tests.conftest import forward_scores


def test_requests_not_started_are_replaced_and_passes_go_before_sweeps(qtbot, monkeypatch):
    gate, started = threading.Event(), threading.Event()
    real_infer = explorer.infer
    monkeypatch.setattr(explorer, "infer", lambda *a: (started.set(), gate.wait(10), real_infer(*a))[-1])
    model = CapsNet().eval()
    sample = load_sample()
    images = [sample.images[k].astype(np.float32) / 255 for k in range(3)]
    worker = InferenceThread()
    got = []
    worker.finished.connect(
        lambda request, result: got.append((request, result, threading.current_thread())),
        Qt.ConnectionType.QueuedConnection,
    )
    first = InferenceRequest(1, model, images[0], 3)
    worker.submit(first)
    assert started.wait(5) and worker.running and worker.busy  # the first pass has started (it waits on the gate)
    rotations = [InputTransform(rotation=a) for a in (-30.0, 0.0, 30.0)]
    sweep = SweepRequest(1, model, images[2], 3, rotations, "rotation", np.array([-30.0, 0.0, 30.0], np.float32))
    worker.submit(sweep)
    worker.submit(InferenceRequest(2, model, images[1], 3))  # replaced before it starts
    last = InferenceRequest(3, model, images[2], 2)
    worker.submit(last)
    gate.set()
    qtbot.waitUntil(lambda: len(got) == 3, timeout=10000)
    assert [r for r, _, _ in got] == [first, last, sweep]
    assert all(t is threading.main_thread() for _, _, t in got)  # delivered on the GUI thread
    np.testing.assert_array_equal(got[1][1].input, images[2])
    # after iteration r of the 2 asked for: the lengths of a forward pass with r iterations
    expected = [forward_scores(model, images[2][None], routing_iterations=r)[0] for r in (1, 2)]
    np.testing.assert_allclose(got[1][1].lengths, expected, atol=1e-5)
    v, cnn = got[2][1]
    assert cnn is None
    assert v.shape == (3, 10, 16) and (np.linalg.norm(v, axis=-1) < 1).all()
    np.testing.assert_allclose(v[1], infer(model, images[2], 3).v[-1], atol=1e-5)  # rotation 0: the input itself
    worker.stop()
    assert not worker.running and not worker.busy
    worker.submit(InferenceRequest(4, model, images[0], 3))  # after stop: ignored, no thread started
    assert not worker.running and not worker.busy and len(got) == 3


def test_the_thread_leaves_a_core_to_the_gui_and_the_default_as_it_was(qtbot, monkeypatch):
    import os
    import sys

    import torch

    def count_in_new_thread() -> int:
        seen = []
        t = threading.Thread(target=lambda: seen.append(torch.get_num_threads()))
        t.start()
        t.join()
        return seen[0]

    default = torch.get_num_threads()  # the GUI (main) thread's count
    assert count_in_new_thread() == default  # what a thread that starts now gets
    counts, nice = [], []
    real_infer = explorer.infer

    def infer_and_note(*a):
        counts.append(torch.get_num_threads())
        if sys.platform.startswith("linux"):
            nice.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))
        return real_infer(*a)

    from capsviz.runtime import INFERENCE_NICENESS

    monkeypatch.setattr(explorer, "infer", infer_and_note)
    worker = InferenceThread()
    got = []
    worker.finished.connect(lambda request, result: got.append(result), Qt.ConnectionType.QueuedConnection)
    worker.submit(InferenceRequest(1, CapsNet().eval(), load_sample().images[0].astype(np.float32) / 255, 3))
    qtbot.waitUntil(lambda: len(got) == 1, timeout=10000)
    worker.stop()
    assert counts == [max(1, default - 1)]
    assert count_in_new_thread() == default  # threads that start later still get the default
    if sys.platform.startswith("linux"):  # the GUI thread has the higher priority (lower nice value)
        gui_nice = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        assert nice == [min(19, gui_nice + INFERENCE_NICENESS)]
