"""Losses of Sabour et al. (2017): margin loss (Eq. 4) and the reconstruction loss (Sec. 4.1)."""

from __future__ import annotations

import torch
from torch import Tensor

M_PLUS = 0.9
M_MINUS = 0.1
LAMBDA = 0.5
RECONSTRUCTION_WEIGHT = 0.0005
# A digit capsule counts as present (the digit is recognised) when its length is at least
# halfway between the margin loss's two targets: nearer m+ (trained for a digit that is
# there) than m- (trained for every digit that is not).
RECOGNITION_THRESHOLD = (M_PLUS + M_MINUS) / 2


def margin_loss(
    lengths: Tensor, target: Tensor, m_plus: float = M_PLUS, m_minus: float = M_MINUS, lam: float = LAMBDA
) -> Tensor:
    """Margin loss, Eq. 4, summed over the classes and averaged over the batch.

    L_k = T_k max(0, m+ - ||v_k||)^2 + lambda (1 - T_k) max(0, ||v_k|| - m-)^2

    Parameters
    ----------
    lengths : Tensor, float, shape (B, 10), the capsule lengths ||v_k|| (no softmax)
    target : LongTensor, shape (B,), class indices; or (B, K): the K classes present in
        each example (T_k = 1 for each of them; MultiMNIST, Sec. 6, has K = 2)

    Returns
    -------
    Tensor, scalar
    """
    lengths = lengths.float()  # float32 also under mixed precision
    t = torch.nn.functional.one_hot(target, lengths.shape[1]).to(lengths.dtype)
    if target.dim() == 2:
        t = t.amax(dim=1)  # (B, K, 10) -> (B, 10): every class present
    present = t * torch.clamp(m_plus - lengths, min=0.0) ** 2
    absent = lam * (1.0 - t) * torch.clamp(lengths - m_minus, min=0.0) ** 2
    return (present + absent).sum(dim=1).mean()


def reconstruction_loss(reconstruction: Tensor, images: Tensor) -> Tensor:
    """Sum of squared pixel errors per image, averaged over the batch (unweighted).

    reconstruction, images : (B, 1, H, H) in [0, 1] -> scalar. Multiply by
    :data:`RECONSTRUCTION_WEIGHT` (0.0005) for the training objective.
    """
    return ((reconstruction.float() - images.float()) ** 2).flatten(1).sum(dim=1).mean()


def total_loss(
    lengths: Tensor, reconstruction: Tensor, images: Tensor, target: Tensor, weight: float = RECONSTRUCTION_WEIGHT
) -> tuple[Tensor, Tensor, Tensor]:
    """Return (total, margin, reconstruction SSE) with total = margin + weight * SSE."""
    m = margin_loss(lengths, target)
    r = reconstruction_loss(reconstruction, images)
    return m + weight * r, m, r


def two_digit_loss(
    lengths: Tensor, reconstructions: Tensor, parts: Tensor, labels: Tensor, weight: float = RECONSTRUCTION_WEIGHT
) -> tuple[Tensor, Tensor, Tensor]:
    """The MultiMNIST objective (Sec. 6): the margin loss with both classes present, plus for
    each digit ``weight`` x the SSE of the decoder's reconstruction from that digit's
    capsule against that digit's own shifted image.

    lengths : (B, 10); reconstructions, parts : (B, 2, 1, H, W) in [0, 1], digit d of each
    pair reconstructed from the capsule of ``labels[:, d]`` and its image alone;
    labels : (B, 2) LongTensor. Returns (total, margin, SSE of both digits).
    """
    m = margin_loss(lengths, labels)
    r = reconstruction_loss(reconstructions[:, 0], parts[:, 0]) + reconstruction_loss(
        reconstructions[:, 1], parts[:, 1]
    )
    return m + weight * r, m, r
