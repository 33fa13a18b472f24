"""Single-image inference for the explorer: numpy in, numpy out (safe across threads)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from capsviz.evaluate import batched, top_two
from capsviz.model.capsnet import CapsNet
from capsviz.model.losses import RECOGNITION_THRESHOLD


@dataclass
class Inference:
    """Everything the views show for one input. H is the model's input size (28 for MNIST,
    36 for MultiMNIST), I its number of primary capsules (1152, 3200).

    input : (H, H) float32 in [0, 1]
    u : (I, 8); u_lengths : (I,) in [0, 1)
    b, c : (R, I, 10) routing logits and couplings per iteration (c sums to 1 over 10)
    v : (R, 10, 16); lengths : (R, 10) in [0, 1)
    prediction : int, argmax of the final lengths
    reconstruction : (H, H) float32 in (0, 1), from the predicted capsule, or None
        unless asked for (the pose view decodes its own, with the user's offsets)
    u_hat : (I, 10, 16) the votes u_hat_{j|i} = W_ij u_i that routing weighs (the same for
        every iteration)
    baseline : (10,) float32 in [0, 1], the class probabilities of a baseline CNN for the
        same input (:mod:`capsviz.model.baseline`), or None when none is compared
    reading : what the explorer reads from the trace for its kind of input: a
        :class:`capsviz.model.pairs.PairReading` for a pair of overlapping digits, else None
    """

    input: np.ndarray
    u: np.ndarray
    u_lengths: np.ndarray
    b: np.ndarray
    c: np.ndarray
    v: np.ndarray
    lengths: np.ndarray
    prediction: int
    reconstruction: np.ndarray | None = None
    u_hat: np.ndarray | None = None
    baseline: np.ndarray | None = None
    reading: object | None = None

    @property
    def iterations(self) -> int:
        return int(self.c.shape[0])

    @property
    def recognised(self) -> bool:
        """Whether the predicted capsule is long enough to count as a digit (:func:`recognised`)."""
        return recognised(self.lengths[-1])


def recognised(lengths: np.ndarray) -> np.ndarray | bool:
    """Whether the longest digit capsule counts as present: ``max_j ||v_j|| >= 0.5``, halfway
    between the margin loss's targets m+ = 0.9 and m- = 0.1 (Eq. 4; ``RECOGNITION_THRESHOLD``).

    lengths : (..., 10) capsule lengths in [0, 1). Returns a bool, or a bool array of shape (...).
    On the MNIST test set the shipped model leaves 18 of 10,000 digits below it.
    """
    result = np.asarray(lengths).max(axis=-1) >= RECOGNITION_THRESHOLD
    return bool(result) if result.ndim == 0 else result


def two_longest(lengths: np.ndarray) -> list[int]:
    """The two digit capsules with the longest outputs, longest first (a tie: the lower
    class first): lengths (10,) -> [j1, j2]. A MultiMNIST model's answer (Sec. 6), by
    :func:`capsviz.evaluate.top_two`."""
    return top_two(torch.tensor(np.asarray(lengths)).reshape(1, -1))[0].tolist()


def longest(lengths: np.ndarray, n: int = 1) -> list[int]:
    """The ``n`` digit capsules with the longest outputs (a CNN's scores: its most probable
    classes), longest first, a tie the lower class first: lengths (J,) -> n ints (for n = 2
    the order of :func:`two_longest`)."""
    return [int(j) for j in np.argsort(-np.asarray(lengths), kind="stable")[:n]]


def _device(model: CapsNet) -> torch.device:
    return next(model.parameters()).device


@torch.inference_mode()
def infer(
    model: CapsNet, image: np.ndarray, routing_iterations: int | None = None, reconstruct: bool = False
) -> Inference:
    """Run one image through ``model`` with a routing trace.

    Parameters
    ----------
    image : ndarray, float, shape (H, H), values in [0, 1]; H = ``model.cfg.image_size``
    routing_iterations : int >= 1, default the model's (3)
    reconstruct : bool
        Also run the decoder on the predicted capsule.

    Raises
    ------
    ValueError
        If ``image`` is not H x H.
    """
    image = np.asarray(image, dtype=np.float32)
    size = model.cfg.image_size
    if image.shape != (size, size):
        raise ValueError(f"expected a {size}x{size} image, got shape {image.shape}")
    if model.training:  # eval() walks every module, some 45 us of a pass of 3 ms
        model.eval()
    x = torch.tensor(image, device=_device(model)).reshape(1, 1, size, size)  # a copy: the image may be read-only
    out = model(x, routing_iterations=routing_iterations, reconstruct=reconstruct, trace=True)
    tr = out.trace.to_numpy(0, keys=("u", "u_lengths", "u_hat", "b", "c", "v", "lengths"))
    return Inference(
        input=image.copy(),
        u=tr["u"],
        u_lengths=tr["u_lengths"],
        b=tr["b"],
        c=tr["c"],
        v=tr["v"],
        lengths=tr["lengths"],
        prediction=int(tr["lengths"][-1].argmax()),
        reconstruction=None if out.reconstruction is None else out.reconstruction[0, 0].float().cpu().numpy().copy(),
        u_hat=tr["u_hat"],
    )


def digit_capsules(
    model: CapsNet, images: np.ndarray, routing_iterations: int | None = None, batch_size: int = 256
) -> np.ndarray:
    """Digit-capsule outputs v_j for a stack of inputs, without traces (in batches, by
    :func:`capsviz.evaluate.batched`).

    images : (N, H, H) float in [0, 1] (or uint8 in 0..255), H = ``model.cfg.image_size``.
    Returns (N, 10, 16) float32; each capsule's length ||v_j|| is in [0, 1).

    Raises
    ------
    ValueError
        If ``images`` is not (N, H, H).
    """
    cfg = model.cfg

    def poses(x: torch.Tensor) -> torch.Tensor:
        return model(x, routing_iterations=routing_iterations, reconstruct=False).v

    return batched(model, images, poses, (cfg.num_classes, cfg.digit_dim), batch_size)


def capsule_lengths(
    model: CapsNet, images: np.ndarray, routing_iterations: int | None = None, batch_size: int = 256
) -> np.ndarray:
    """Digit-capsule lengths ||v_j||: (N, H, H) in [0, 1] -> (N, 10) float32 in [0, 1);
    the prediction is the argmax over the 10."""
    return np.linalg.norm(digit_capsules(model, images, routing_iterations, batch_size), axis=-1)


@torch.inference_mode()
def reconstruct(model: CapsNet, pose: np.ndarray, digit: int) -> np.ndarray:
    """Decoder output for a 16-D ``pose`` placed in digit capsule ``digit``: (H, H) float32 in (0, 1)."""
    p = torch.as_tensor(np.asarray(pose, dtype=np.float32), device=_device(model)).reshape(1, -1)
    cls = torch.tensor([int(digit)], device=p.device)
    return model.decoder.decode_pose(p, cls)[0, 0].float().cpu().numpy().copy()


def save_trace(inference: Inference, path, answers: int = 1) -> None:
    """Write a routing trace as ``.npz``.

    Keys: ``u`` (I, 8), ``u_lengths`` (I,), ``u_hat`` (I, 10, 16) where the trace has the
    votes, ``b`` (R, I, 10), ``c`` (R, I, 10), ``v`` (R, 10, 16), ``lengths`` (R, 10),
    ``input`` (H, H), all float32, and ``prediction`` (), int64 (the longest capsule); with
    ``answers`` 2 (a pair model) also ``predictions`` (2,), int64: the two longest capsules
    after the last iteration, longest first (paper Sec. 6).
    """
    votes = {} if inference.u_hat is None else {"u_hat": inference.u_hat}
    if answers == 2:
        votes["predictions"] = np.asarray(two_longest(inference.lengths[-1]), dtype=np.int64)
    np.savez(
        path,
        **votes,
        u=inference.u,
        u_lengths=inference.u_lengths,
        b=inference.b,
        c=inference.c,
        v=inference.v,
        lengths=inference.lengths,
        input=inference.input.astype(np.float32),
        prediction=np.int64(inference.prediction),
    )


@dataclass
class Gallery:
    """Test examples and a model's reconstructions of them from its answer, as in the
    paper's Fig. 3 (digits) and Fig. 5 (pairs). K examples of size H x H.

    images : (K, H, H) float32 in [0, 1], the inputs
    labels : (K,) int64, the digits' classes, or (K, 2) the two digits of each pair
    answers : as ``labels``: the longest capsule, or the two longest (in the order of the
        pair's digits where an answer is one of them, else longest first)
    reconstructions : (K, H, H) float32 in (0, 1), the decoder on each answer's capsule, or
        (K, 2, H, H) for pairs, in the order of ``answers``
    """

    images: np.ndarray
    labels: np.ndarray
    answers: np.ndarray
    reconstructions: np.ndarray

    @property
    def pairs(self) -> bool:
        return self.labels.ndim == 2

    @property
    def right(self) -> np.ndarray:
        """(K,) bool: the answer is the label (pairs: the two longest capsules are the two digits)."""
        if self.pairs:
            return (np.sort(self.answers, axis=1) == np.sort(self.labels, axis=1)).all(axis=1)
        return self.answers == self.labels


@torch.inference_mode()
def reconstruction_gallery(
    model: CapsNet, images: np.ndarray, labels: np.ndarray, routing_iterations: int | None = None
) -> Gallery:
    """The :class:`Gallery` of ``images`` ((K, H, H) float in [0, 1], H = ``model.cfg.image_size``)
    with ``labels`` ((K,) for digits, (K, 2) for pairs): one batch through ``model`` with
    ``routing_iterations`` (default the model's), each example decoded from its longest capsule
    (Sec. 4.1 at test time) or, for pairs, from its two longest (Sec. 6).

    Raises ``ValueError`` when the images are not (K, H, H) or the labels not (K,) or (K, 2).
    """
    images = np.asarray(images, dtype=np.float32)
    labels = np.asarray(labels, dtype=np.int64)
    size = model.cfg.image_size
    if images.ndim != 3 or images.shape[1:] != (size, size):
        raise ValueError(f"expected images of shape (K, {size}, {size}), got {images.shape}")
    if labels.shape[:1] != images.shape[:1] or labels.ndim not in (1, 2) or labels.shape[1:] not in ((), (2,)):
        raise ValueError(f"expected labels of shape ({len(images)},) or ({len(images)}, 2), got {labels.shape}")
    if model.training:
        model.eval()
    x = torch.from_numpy(images).to(_device(model)).unsqueeze(1)
    out = model(x, routing_iterations=routing_iterations, reconstruct=False)
    if labels.ndim == 2:
        answers = top_two(out.lengths)  # (K, 2), longest first
        given = torch.from_numpy(labels).to(answers.device)
        crossed = (answers[:, 0] == given[:, 1]) | (answers[:, 1] == given[:, 0])
        answers = torch.where(crossed[:, None], answers.flip(1), answers)  # each digit's capsule in its place
    else:
        answers = out.lengths.argmax(dim=1)
    recon = model.decoder(out.v, answers).float().cpu().numpy().reshape(*answers.shape, size, size)
    return Gallery(images, labels, answers.cpu().numpy(), recon)


PERTURBATION_OFFSETS = np.linspace(-0.25, 0.25, 11, dtype=np.float32)


@torch.inference_mode()
def perturbation_grid(
    model: CapsNet, pose: np.ndarray, digit: int, offsets: np.ndarray = PERTURBATION_OFFSETS
) -> np.ndarray:
    """Reconstructions with one pose dimension moved at a time (the paper's Fig. 4).

    pose : (16,) the digit capsule's output; offsets : (K,), default 11 steps of 0.05
    in [-0.25, 0.25]. Returns (16, K, H, H) float32 in (0, 1); row d moves dimension d,
    and a column whose offset is 0 is the unperturbed reconstruction.
    """
    pose = np.asarray(pose, dtype=np.float32)
    dims, k = pose.shape[0], len(offsets)
    batch = np.repeat(pose[None, None, :], dims * k, axis=0).reshape(dims, k, dims)
    for d in range(dims):
        batch[d, :, d] += offsets
    p = torch.from_numpy(batch.reshape(dims * k, dims)).to(_device(model))
    classes = torch.full((dims * k,), int(digit), device=p.device, dtype=torch.long)
    images = model.decoder.decode_pose(p, classes)[:, 0]
    size = model.cfg.image_size
    return images.float().cpu().numpy().reshape(dims, k, size, size)


def tile_grid(grid: np.ndarray, gap: int = 2, margin: int = 0) -> np.ndarray:
    """(rows, cols, H, W, ...) images (grey, or with trailing channels such as RGB) -> one
    (rows*(H+gap)-gap+2*margin, cols*(W+gap)-gap+2*margin, ...) float32 image, tile (r, c) at
    (margin + r*(H+gap), margin + c*(W+gap)); gaps and margin 0."""
    rows, cols, h, w = grid.shape[:4]
    out = np.zeros(
        (rows * (h + gap) - gap + 2 * margin, cols * (w + gap) - gap + 2 * margin, *grid.shape[4:]), np.float32
    )
    for r in range(rows):
        for c in range(cols):
            y, x = margin + r * (h + gap), margin + c * (w + gap)
            out[y : y + h, x : x + w] = grid[r, c]
    return out
