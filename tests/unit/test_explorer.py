"""The explorer's Qt-free parts: what a training run starts from and writes, the models read
for a dataset, and a weight snapshot's comparison with the CNN of the moment."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
import torch

import capsviz.explorer as explorer
from capsviz.data.mnist import MnistSplit, load_sample
from capsviz.evaluate import evaluate_model
from capsviz.explorer import (
    ExplorerInput,
    InferenceRequest,
    RedrawQueue,
    Redraws,
    RequestThread,
    TrainingRun,
    WeightsSnapshot,
    browsed,
    browser_digit,
    browser_filter,
    browser_score,
    classify_in_chunks,
    confusion_cells,
    initial_model,
    prediction_line,
    read_models,
    request_for,
    step_through,
    untrained_model,
)
from capsviz.model import CapsNet, CapsNetConfig
from capsviz.model.baseline import BaselineCNN, baseline_probabilities, preset
from capsviz.paths import user_checkpoint_dir
from capsviz.train.checkpoint import CheckpointError, best_path, save_checkpoint
from capsviz.train.config import TrainConfig

NET = CapsNetConfig(conv1_channels=16, primary_types=4, decoder_hidden=(32, 64))  # a small CapsNet


def same_weights(a: torch.nn.Module, b: torch.nn.Module) -> bool:
    return all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values()))


def test_a_capsnet_run_starts_from_fresh_seeded_weights_or_a_copy_of_the_model():
    torch.manual_seed(1)
    model = CapsNet(NET)
    fresh = initial_model(TrainConfig(seed=3), model, None, from_scratch=True)
    assert isinstance(fresh, CapsNet) and fresh.cfg == NET and not same_weights(fresh, model)
    assert same_weights(fresh, initial_model(TrainConfig(seed=3), model, None, from_scratch=True))  # the seed's
    further = initial_model(TrainConfig(), model, None, from_scratch=False)
    assert further is not model and same_weights(further, model)
    assert next(further.parameters()).device.type == "cpu"


def test_a_cnn_run_continues_only_the_cnn_of_its_preset():
    config = TrainConfig(model="baseline-small", seed=0)
    cnn = BaselineCNN(preset("baseline-small", 28))
    further = initial_model(config, CapsNet(NET), cnn, from_scratch=False)
    assert isinstance(further, BaselineCNN) and further is not cnn and same_weights(further, cnn)
    other = initial_model(TrainConfig(model="baseline"), CapsNet(NET), cnn, from_scratch=False)
    assert other.cfg == preset("baseline", 28) and not isinstance(other, CapsNet)  # another preset: fresh
    assert initial_model(config, CapsNet(NET), None, from_scratch=False).cfg == preset("baseline-small", 28)


def test_a_training_run_writes_a_new_file_and_builds_its_trainer(tmp_path):
    folder = user_checkpoint_dir()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "gui-training.safetensors").write_bytes(b"an earlier run")
    run = TrainingRun(TrainConfig(epochs=1), CapsNet(NET))
    assert run.checkpoint == folder / "gui-training-2.safetensors" and not best_path(run.checkpoint).exists()
    assert TrainingRun(TrainConfig(model="baseline"), None).checkpoint == folder / "gui-baseline.safetensors"
    assert not run.stop.is_set() and not run.pause.is_set()
    with pytest.raises(Exception, match="MNIST"):  # no MNIST in the data root: the thread's first step fails
        TrainingRun(TrainConfig(epochs=1), CapsNet(NET), data_root=tmp_path).trainer()


def test_read_models_reads_the_cnn_only_where_there_is_one(tmp_path):
    capsnet = save_checkpoint(tmp_path / "caps.safetensors", CapsNet(NET))
    cnn_file = save_checkpoint(
        tmp_path / "cnn.safetensors", BaselineCNN(preset("baseline-small", 28)), extra_metadata={"dataset": "mnist"}
    )
    (model, info), (cnn, cnn_info) = read_models(capsnet, cnn_file, "mnist", "cpu")
    assert isinstance(model, CapsNet) and model.cfg == NET and info.path == capsnet
    assert isinstance(cnn, BaselineCNN) and cnn_info.kind == "baseline"
    missing = tmp_path / "none.safetensors"
    assert read_models(capsnet, missing, "mnist", "cpu")[1] == (None, None)
    with pytest.raises(CheckpointError):
        read_models(capsnet, missing, "mnist", "cpu", cnn_required=True)
    with pytest.raises(CheckpointError, match="MNIST"):  # an MNIST model is no MultiMNIST one
        read_models(capsnet, missing, "multimnist", "cpu")


def test_the_untrained_model_is_the_papers_capsnet_from_the_default_seed():
    mnist, pairs = untrained_model("mnist"), untrained_model("multimnist")
    assert (mnist.cfg.image_size, pairs.cfg.image_size) == (28, 36)
    assert mnist.cfg == CapsNetConfig(image_size=28) and same_weights(mnist, untrained_model("mnist"))


def test_a_snapshot_takes_the_probabilities_of_the_cnn_compared_now():
    torch.manual_seed(0)
    model, cnn, other = CapsNet(NET).eval(), BaselineCNN(preset("baseline-small", 28)), None
    source = ExplorerInput(np.random.default_rng(0).random((28, 28), dtype=np.float32))
    snapshot = WeightsSnapshot(model, request_for(0, model, source, cnn).run(), source, cnn)
    made = snapshot.inference.baseline.copy()
    snapshot.compare_with(cnn)  # the same CNN: its probabilities stay
    np.testing.assert_array_equal(snapshot.inference.baseline, made)
    snapshot.compare_with(other)
    assert snapshot.inference.baseline is None
    snapshot = WeightsSnapshot(model, request_for(0, model, source).run(), source)
    snapshot.compare_with(cnn)
    np.testing.assert_allclose(snapshot.inference.baseline, baseline_probabilities(cnn, source.model_image))
    WeightsSnapshot(model, None, source).compare_with(cnn)  # no inference: nothing to compare


def test_the_browser_classifies_in_chunks_with_the_cnn_beside():
    torch.manual_seed(0)
    model, cnn = CapsNet(NET).eval(), BaselineCNN(preset("baseline-small", 28)).eval()
    sample = load_sample()
    data = MnistSplit(sample.images[:30], sample.labels[:30])
    events = list(classify_in_chunks(model, cnn, data, chunk=12))
    assert [ev[:3] for ev in events[:-1]] == [("progress", 12, 30), ("progress", 24, 30), ("progress", 30, 30)]
    done, predictions, cnn_predictions = events[-1]
    assert done == "done" and predictions.dtype == np.int64 and predictions.shape == (30,)
    np.testing.assert_array_equal(predictions, evaluate_model(model, data))
    np.testing.assert_array_equal(cnn_predictions, evaluate_model(cnn, data))
    assert list(classify_in_chunks(model, None, data, chunk=250))[-1][2] is None


def test_the_browser_keeps_mistakes_disagreements_and_a_confusion_cell():
    labels = np.array([0, 1, 2, 3, 1, 1])
    predictions = np.array([0, 7, 2, 5, 1, 7])
    cnn = np.array([0, 7, 3, 3, 1, 1])
    assert browsed(labels).tolist() == [0, 1, 2, 3, 4, 5]
    assert browsed(labels, None, cnn, mistakes=True).tolist() == [0, 1, 2, 3, 4, 5]  # no predictions: all
    assert browsed(labels, predictions, mistakes=True).tolist() == [1, 3, 5]
    assert browsed(labels, predictions, cnn, disagreements=True).tolist() == [2, 3, 5]
    assert browsed(labels, predictions, None, disagreements=True).tolist() == [0, 1, 2, 3, 4, 5]
    assert browsed(labels, predictions, cnn, True, True, None).tolist() == [3, 5]
    assert browsed(labels, predictions, cell=(1, 7)).tolist() == [1, 5]
    assert browsed(labels, predictions, cnn, disagreements=True, cell=(1, 7)).dtype == np.int64


def test_the_browser_says_its_filter_its_digit_and_the_mistakes():
    assert browser_filter(6, None, False, False) == "browsing all digits"
    filtered = "browsing 2 digits (true 1, predicted 7; mistakes only; CNN disagrees)"
    assert browser_filter(2, (1, 7), True, True) == filtered
    assert browser_digit(4, 1) == "test image 4: label 1"
    assert browser_digit(4, 1, 7) == "test image 4: label 1, predicted 7  ✗"
    assert browser_digit(4, 1, 1, 3) == "test image 4: label 1, predicted 1; CNN 3  ✗"
    labels, predictions, cnn = np.array([0, 1, 2, 3]), np.array([0, 7, 2, 3]), np.array([0, 1, 5, 5])
    assert browser_score(labels, predictions) == "1 mistakes (75.00 % correct)"
    assert browser_score(labels, predictions, cnn) == (
        "1 mistakes (75.00 % correct); the CNN 2 mistakes (50.00 % correct); they disagree on 3"
    )


def test_the_prediction_line_names_the_digit_or_says_that_nothing_reaches_the_threshold():
    assert prediction_line(None) == "no digit"
    assert prediction_line(7, 0.934) == "7   (0.93)"
    line = prediction_line(7, 0.3125, recognised=False)
    assert "nothing recognised" in line and line.endswith("longest: 7 (0.31 &lt; 0.5)</span>")
    assert prediction_line(9, 0.4987, recognised=False).endswith("longest: 9 (0.49 &lt; 0.5)</span>")


def test_the_confusion_matrix_shows_counts_blanks_empty_mistakes_and_shades_by_the_log_count():
    cm = np.array([[3, 0, 1], [0, 0, 0], [7, 0, 2]])
    cells = confusion_cells(cm, 3)
    assert cells[0, 0] == ("3", pytest.approx(0.15 + 0.75 * np.log(4) / np.log(8)))
    assert cells[2, 0] == ("7", pytest.approx(0.9))  # the largest count: the full shade
    assert cells[0, 1] == ("", 0.0) and cells[1, 1] == ("0", 0.0)  # an empty mistake blank, the diagonal not
    assert len(cells) == 9 and set(confusion_cells(None).values()) == {("", 0.0)}
    assert confusion_cells(np.array([[12345]]), 1)[0, 0][0] == "12,345"


def test_stepping_goes_round_the_kept_digits():
    kept = np.array([3, 8, 20])
    assert [step_through(kept, i, 1) for i in (0, 3, 5, 20, 99)] == [3, 8, 8, 3, 3]
    assert [step_through(kept, i, -1) for i in (0, 3, 9, 20, 99)] == [20, 20, 8, 8, 20]
    assert step_through(np.zeros(0, np.int64), 4, 1) is None


def test_the_request_thread_runs_the_newest_request_and_ends_when_delivery_fails(monkeypatch):
    gate, started = threading.Event(), threading.Event()

    def held(model, image, iterations):
        started.set()
        gate.wait(10)
        if iterations == 5:
            raise RuntimeError("no pass")
        return ("pass", iterations)

    monkeypatch.setattr(explorer, "infer", held)
    delivered = []

    def deliver(request, result) -> bool:
        delivered.append((request.serial, result, threading.current_thread().name))
        return len(delivered) != 2  # the receiver is gone after the second

    thread, image = RequestThread(deliver), np.zeros((28, 28), np.float32)
    thread.submit(InferenceRequest(1, None, image, 3))
    assert started.wait(5) and thread.busy and thread.running
    thread.submit(InferenceRequest(2, None, image, 2))  # replaced before it starts
    thread.submit(InferenceRequest(3, None, image, 1))
    gate.set()
    for _ in range(500):  # the second delivery ends the thread
        if not thread.running:
            break
        time.sleep(0.01)
    assert not thread.running and not thread.busy
    assert delivered == [(1, ("pass", 3), "capsviz-inference"), (3, ("pass", 1), "capsviz-inference")]
    thread.submit(InferenceRequest(4, None, image, 5))  # a new thread; a failed pass delivers its exception
    for _ in range(500):
        if len(delivered) == 3:
            break
        time.sleep(0.01)
    assert delivered[2][0] == 4 and isinstance(delivered[2][1], RuntimeError)
    thread.stop()
    thread.submit(InferenceRequest(5, None, image, 3))  # after stop: ignored, no thread started
    assert not thread.running and not thread.busy and len(delivered) == 3
    with pytest.raises(TypeError, match="not a request"):
        thread.submit(object())


def test_the_redraw_queue_merges_requests_draws_the_urgent_parts_together_and_the_others_round_the_list():
    drawn, queue = [], RedrawQueue()
    for name, urgent in (("a", False), ("bars", True), ("b", False), ("c", False)):
        queue.register(name, lambda name=name: drawn.append(name), urgent=urgent)
    assert queue.parts == ["bars", "a", "b", "c"]
    with pytest.raises(ValueError, match="'a' is registered already"):
        queue.register("a", print)
    with pytest.raises(KeyError, match="no redraw part 'd'"):
        queue.mark(["a", "d"])
    assert queue.mark(["c", "bars", "c"]) == {True, False} and queue.mark(["a"], keep=False) == {False}
    assert queue.requested == {"bars", "c"}
    queue.draw_urgent()
    assert drawn == ["bars"] and queue.requested == {"c"}
    assert queue.draw_next() is False and drawn == ["bars", "c"]  # c once: the two requests merged
    queue.mark(["a", "b", "c"])
    assert queue.draw_next() is True and drawn[-1] == "a"
    queue.mark(["a"])  # the turn goes on after a: b, then c, then a again
    assert [queue.draw_next() for _ in range(3)] == [True, True, False] and drawn[-3:] == ["b", "c", "a"]


def test_a_views_redraws_draw_at_once_or_through_the_queue_under_the_views_prefix():
    drawn, queue = [], RedrawQueue()
    queue.request = lambda *names: queue.mark(names)  # a queue's requests are drawn in the scheduler's turns
    redraws = Redraws("view", {"one": lambda: drawn.append(1), "two": lambda: drawn.append(2)}, urgent=("two",))
    redraws.request("two")
    assert drawn == [2]  # no scheduler yet: at once
    redraws.register(queue)
    assert queue.parts == ["view/two", "view/one"]
    redraws.request()
    assert drawn == [2] and queue.requested == {"view/one", "view/two"}


def test_the_gallery_takes_the_first_test_digit_of_each_class_or_the_first_test_pairs():
    from capsviz.data.multimnist import fixed_test_pairs
    from capsviz.explorer import GALLERY_PAIRS, gallery_examples

    sample = load_sample()
    images, labels = gallery_examples("mnist", sample)
    assert labels.tolist() == list(range(10)) and images.dtype == np.float32 and images.shape == (10, 28, 28)
    for k in range(10):
        first = int(np.flatnonzero(sample.labels == k)[0])
        np.testing.assert_array_equal(images[k], sample.images[first] / np.float32(255))
    # a split without some class: the classes it has, in order
    no_fives = MnistSplit(sample.images[sample.labels != 5], sample.labels[sample.labels != 5])
    assert gallery_examples("mnist", no_fives)[1].tolist() == [0, 1, 2, 3, 4, 6, 7, 8, 9]
    images, labels = gallery_examples("multimnist", sample)
    pairs = fixed_test_pairs(sample, GALLERY_PAIRS)
    assert images.shape == (GALLERY_PAIRS, 36, 36) and labels.shape == (GALLERY_PAIRS, 2)
    np.testing.assert_array_equal(labels, pairs.labels)
    np.testing.assert_array_equal(images, pairs.images / np.float32(255))
    with pytest.raises(ValueError, match="mnist or multimnist"):
        gallery_examples("cifar", sample)


def test_a_gallery_is_the_decoder_on_each_answer_and_says_which_are_right(shipped_checkpoint):
    from capsviz.explorer import GalleryRequest, gallery_examples
    from capsviz.model.inference import reconstruction_gallery
    from capsviz.train.checkpoint import load_checkpoint

    model, _, _ = load_checkpoint(shipped_checkpoint)
    images, labels = gallery_examples("mnist", load_sample())
    wrong = labels.copy()
    wrong[4] = 9  # a label the model does not answer
    g = GalleryRequest(model, "mnist", lambda dataset: (images, wrong)).run()
    assert g.answers.tolist() == list(range(10)) and not g.pairs
    assert g.right.tolist() == [k != 4 for k in range(10)]
    with torch.no_grad():
        out = model(torch.from_numpy(images)[:, None], target=torch.arange(10))
    np.testing.assert_allclose(g.reconstructions, out.reconstruction[:, 0].numpy(), atol=1e-5)
    assert g.reconstructions.dtype == np.float32 and 0 < g.reconstructions.min() and g.reconstructions.max() < 1
    with pytest.raises(ValueError, match=r"expected images of shape \(K, 28, 28\)"):
        reconstruction_gallery(model, images[:, :27], labels)
    with pytest.raises(ValueError, match=r"expected labels of shape \(10,\) or \(10, 2\)"):
        reconstruction_gallery(model, images, labels[:9])


def test_a_pair_gallery_puts_each_digits_capsule_in_its_place():
    from capsviz.model.inference import reconstruction_gallery

    torch.manual_seed(0)
    model = CapsNet(CapsNetConfig(image_size=36)).eval()
    images = torch.rand(4, 36, 36).numpy()
    with torch.no_grad():
        lengths = model(torch.from_numpy(images)[:, None], reconstruct=False).lengths
    top = torch.argsort(-lengths, dim=1, stable=True)[:, :2].numpy()  # longest first
    # pair 0 labelled longest first, pair 1 the other way round, pair 2 half right, pair 3 wrong
    spare = [[j for j in range(10) if j not in top[k]] for k in range(4)]
    labels = np.array([top[0], top[1][::-1], [spare[2][0], top[2][0]], spare[3][:2]])
    g = reconstruction_gallery(model, images, labels)
    assert g.pairs and g.right.tolist() == [True, True, False, False]
    assert g.answers[0].tolist() == top[0].tolist() and g.answers[1].tolist() == top[1][::-1].tolist()
    assert g.answers[2].tolist() == top[2][::-1].tolist()  # the right digit in its place, second
    assert g.answers[3].tolist() == top[3].tolist()  # neither: longest first
    with torch.no_grad():
        out = model(torch.from_numpy(images)[:, None], target=torch.from_numpy(g.answers))
    np.testing.assert_allclose(g.reconstructions, out.reconstruction[:, :, 0].numpy(), atol=1e-5)
