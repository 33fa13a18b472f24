"""The views' explanations: the long texts each view shows as its tooltip, and the long
tooltips of their controls and panels, marked for translation
(:func:`~capsviz.texts.QT_TR_NOOP`) and translated where they are shown."""

from __future__ import annotations

from capsviz.texts import QT_TR_NOOP

# the input panel's controls
BRUSH = QT_TR_NOOP(
    "Brush width on the 280 px canvas. The model sees a drawing's strokes at MNIST's stroke width whatever the brush"
)
INK_POLARITY = QT_TR_NOOP(
    "How image files are read: auto-detects dark ink on light paper from the image border; choose to override"
)
MODEL_INPUT = QT_TR_NOOP(
    "The exact 28×28 input the network sees: the ink cropped, fitted into 20×20 and centred by "
    "its centre of mass, as MNIST was made; a drawing's strokes drawn at MNIST's stroke width"
)

LENGTHS = QT_TR_NOOP(
    "Length ‖v_j‖ of each digit capsule after the last routing iteration: the network's "
    "estimate that digit j is present; the longest (MultiMNIST: the two longest) in orange. "
    "Training pushes the true class above m⁺ = 0.9 and "
    "all others below m⁻ = 0.1 (margin loss, Eq. 4). The middle plot shows how each length "
    "changes from one routing iteration to the next. Below: the lengths ‖u_i‖ of the primary "
    "capsules, one map per capsule type (32 types; 6×6 positions for MNIST, 10×10 for "
    "MultiMNIST): which local features fired. Click one to select that primary capsule in "
    "every view (click it again to let it go).\n\n"
    "With a CNN to compare (the shipped baseline, or one trained in the Training panel), its "
    "class probabilities stand to the right of each capsule's bar (purple; its answer, or two answers, in red): "
    "a softmax over the ten digits (MultiMNIST: ten independent sigmoids)."
)

POSE = QT_TR_NOOP(
    "The 16 numbers of a digit capsule's output vector v_j are its pose: how the digit is "
    "drawn (stroke width, slant, scale, local parts). The decoder reconstructs the digit from "
    "this vector alone (the other nine capsules are masked to zero). Drag a slider to add an "
    "offset to one dimension and watch what it encodes. Column 'inferred': the value the "
    "network inferred for this input; column 'offset': the slider and the number added to it. "
    "'length ×' scales the whole vector. "
    "The Fig. 4 grid moves each dimension from -0.25 to +0.25 in steps of 0.05, as in the paper."
)

ROUTING = QT_TR_NOOP(
    "Routing by agreement (Procedure 1 of the paper). Each primary capsule i (1152 on the "
    "6×6 grid of an MNIST model, 3200 on the 10×10 grid of a MultiMNIST model) "
    "splits its output among the 10 digit capsules j with coupling coefficients "
    "c_ij = softmax_j(b_ij), which sum to 1 over j. All start equal (0.1); after each "
    "iteration b_ij grows by the agreement û_j|i · v_j, so a capsule whose prediction agrees "
    "with digit j's output sends more of its vote there.\n\n"
    "Class maps: for each digit j, Σ over the 32 capsule types of ‖u_i‖·c_ij at each "
    "grid position; with the colour scale 'departure from uniform' (the default), "
    "Σ ‖u_i‖·(c_ij − 0.1) instead: how much more (red) or less (blue) each position sends "
    "to digit j than an even split would. Mosaic: c_ij (or c_ij − 0.1) of every capsule for "
    "the selected digit, one tile per type. Overlay: the selected digit's map of "
    "‖u_i‖·c_ij spread over the input pixels each capsule sees. Hover over a map to read "
    "exact values."
)

ROUTING_EFFECT = QT_TR_NOOP(
    "What routing did for this input: the primary capsules whose coupling c_ij to some digit ends more "
    "than half an even share (0.05) away from 0.1 route decisively; the rest keep nearly the even split "
    "they start with. Their share of Σ‖u_i‖ says how much of the primary output they carry; the mean "
    "entropy of c_i falls from ln 10 = 2.3026 nats (even split) as routing decides; r = 1 routes with the "
    "even split alone, so its answer is what the network gives without routing by agreement."
)

# the routing view's controls and panels
ROUTING_SCALE = QT_TR_NOOP(
    "Colours of the class maps and the mosaic: Σ ‖u_i‖ c_ij (and c_ij) scaled to this iteration's "
    "values or to all iterations'; or their departure from uniform routing, Σ ‖u_i‖ (c_ij − 0.1) "
    "(and c_ij − 0.1), blue below 0, red above, on one scale for all iterations"
)
ROUTING_MOSAIC = QT_TR_NOOP(
    "c_ij of every primary capsule i for the selected digit j: one G × G tile per "
    "capsule type, 4 rows of 8 types (type 0 top left). Click a capsule to select it: it is "
    "ringed here, in the primary capsule lengths and among the votes, with its receptive "
    "field on the input (click it again to let it go)"
)
ROUTING_ENTROPY = QT_TR_NOOP(
    "Mean over the primary capsules of -Σ_j c_ij ln c_ij, in nats; "
    "ln 10 = 2.303 when every capsule splits its vote evenly"
)
MARK_DECISIVE = QT_TR_NOOP(
    "Ring the {k} capsules that route most decisively on the mosaic, and their receptive fields on the input"
)

VOTES = QT_TR_NOOP(
    "The votes of routing by agreement. Every primary capsule i predicts the pose of digit "
    "capsule j: u_hat_j|i = W_ij u_i, a 16-D vector. Each dot is one such vote, seen in the "
    "plane of the two directions in which this input's votes for j spread most (fixed for "
    "the input, so stepping the iteration moves the colours and the path, not the axes). "
    "Colour: the coupling c_ij at the iteration shown (one scale for all iterations, from "
    "the 1st to the 99th percentile of this input's couplings); size: the length of u_i. "
    "The path: v_j after each iteration, at the votes' scale (s_j / Σ_i c_ij, the "
    "c-weighted mean vote, which points where v_j points).\n\n"
    "What agreement looks like: where the parts agree on a pose, their votes crowd "
    "together; v_j moves towards the crowd, and the capsules in it (û·v large) gain "
    "coupling, so they turn bright. What it does not show: the other 14 dimensions, and "
    "the other nine digits, which compete for the same capsules (c_i sums to 1 over the "
    "ten). Drag the rectangle over some votes to see which parts of the input sent them."
)

VOTE_FIELDS = QT_TR_NOOP(
    "The input pixels seen by the primary capsules whose votes lie inside the rectangle, each capsule weighted by ‖u_i‖"
)

TRANSFORMS = QT_TR_NOOP(
    "Transform the input and watch the capsules respond. Capsules aim at equivariance: "
    "when the digit turns, moves or gets bolder, some of the 16 pose dimensions of its "
    "digit capsule should change smoothly with it, while the capsule's length (the "
    "probability that the digit is there) stays about the same — invariance of the "
    "classification, equivariance of the pose.\n\n"
    "The plot sweeps one transform over its range (the others stay as set) and shows the "
    "chosen capsule's 16 pose dimensions (thin lines) and its length (thick white line); "
    "with a CNN to compare, the CNN's probability of the same digit along the same sweep "
    "(dashed purple line)."
)

TRAINING = QT_TR_NOOP(
    "Train a CapsNet on {title} in the background with the paper's recipe (Adam, margin loss + "
    "0.0005 × reconstruction loss, 3 routing iterations). Every view keeps working on the "
    "current input with the weights as they are being learned. 'network' trains the baseline "
    "CNN shown beside the capsules instead, with the same data and schedule."
)

FROM_SCRATCH = QT_TR_NOOP(
    "Unchecked: fine-tune the model that is loaded now (or the CNN compared with it), "
    "starting at the learning rate its own training ended with"
)

TEST_IMAGES = QT_TR_NOOP(
    "Test accuracy after each epoch is measured on the first N of the 10,000 test images "
    "(0: all). {n:,} by default: training and the live views wait while the "
    "test images are classified, so a subset keeps that pause short. `capsviz train` "
    "evaluates all 10,000 unless given --test-subset."
)

TEST_PAIRS = QT_TR_NOOP(
    "Test accuracy after each epoch is measured on the first N of the 10,000 fixed test pairs "
    "(0: all). {n:,} by default: training and the live views wait while the "
    "fixed test pairs are classified, so a subset keeps that pause short. `capsviz train` "
    "evaluates all 10,000 unless given --test-subset."
)

# The training form's rows, in order: the setting (a TrainConfig field, or the network to
# train) -> its label and tooltip for single digits (None: a row of the pairs' form only);
# TRAINING_FORM_PAIRS: the rows that read otherwise for pairs of digits (MultiMNIST)
TRAINING_FORM = {
    "network": (QT_TR_NOOP("network"), QT_TR_NOOP("what to train: the CapsNet, or the CNN compared with it")),
    "epochs": (QT_TR_NOOP("epochs"), QT_TR_NOOP("passes over the training images")),
    "batch_size": (QT_TR_NOOP("batch size"), QT_TR_NOOP("images per optimizer step (paper: 128)")),
    "lr": (QT_TR_NOOP("learning rate"), QT_TR_NOOP("Adam learning rate at step 0 (paper: 0.001)")),
    "lr_decay": (
        QT_TR_NOOP("lr decay"),
        QT_TR_NOOP("learning rate factor per 'decay steps' steps (official code: 0.96)"),
    ),
    "lr_decay_steps": (QT_TR_NOOP("decay steps"), QT_TR_NOOP("steps per decay factor (official code: 2000)")),
    "routing_iterations": (
        QT_TR_NOOP("routing iterations"),
        QT_TR_NOOP("routing iterations during training (paper: 3)"),
    ),
    "reconstruction_weight": (
        QT_TR_NOOP("recon. weight"),
        QT_TR_NOOP("weight of the per-image squared error (paper: 0.0005)"),
    ),
    "max_shift": (
        QT_TR_NOOP("max shift"),
        QT_TR_NOOP("random shifts of up to this many pixels, zero padded (paper: 2)"),
    ),
    "seed": (QT_TR_NOOP("seed"), QT_TR_NOOP("seed of the weights, the batch order and the shifts")),
    "device": (QT_TR_NOOP("device"), QT_TR_NOOP("where training runs")),
    "precision": (
        QT_TR_NOOP("precision"),
        QT_TR_NOOP(
            "auto: bfloat16 products where the CPU or GPU runs them fast, else float32; fp16 for GPUs without bfloat16"
        ),
    ),
    "train_subset": (QT_TR_NOOP("training images"), QT_TR_NOOP("use only the first N training images (0: all)")),
    "pairs_per_epoch": None,
    "test_subset": (QT_TR_NOOP("test images"), TEST_IMAGES),
}
TRAINING_FORM_PAIRS = {
    "epochs": (QT_TR_NOOP("epochs"), QT_TR_NOOP("passes over the training pairs")),
    "batch_size": (QT_TR_NOOP("batch size"), QT_TR_NOOP("pairs per optimizer step (paper: 128)")),
    "max_shift": (
        QT_TR_NOOP("max shift"),
        QT_TR_NOOP("MultiMNIST: not used (each digit of a pair is shifted by up to 4 px)"),
    ),
    "train_subset": (
        QT_TR_NOOP("training digits"),
        QT_TR_NOOP("use only the first N training images to draw the pairs from (0: all)"),
    ),
    "pairs_per_epoch": (QT_TR_NOOP("pairs per epoch"), QT_TR_NOOP("MultiMNIST pairs drawn afresh for each epoch")),
    "test_subset": (QT_TR_NOOP("test pairs"), TEST_PAIRS),
}

BROWSER = QT_TR_NOOP(
    "Browse the MNIST test digits (the full test set when MNIST is installed, else the "
    "2,000-digit sample shipped in assets/). Each digit goes to the input exactly as stored. "
    "Once the model has read them all, 'only mistakes' keeps the misclassified digits, and "
    "the confusion matrix counts true digit (row) against prediction (column): click a cell "
    "to browse its digits. With a CNN to compare, each digit also shows the CNN's answer, and "
    "'only where the CNN disagrees' keeps the digits on which the two networks differ."
)

ROBUSTNESS = QT_TR_NOOP(
    "How far the model's recognition carries beyond the poses MNIST shows: accuracy on the "
    "first N MNIST test digits, each rotated, scaled, sheared or moved by +s or −s (a seeded "
    "choice per digit) for growing strengths s, and on an affine-transformed test set in which "
    "every digit has its own random warp (rotation ±{rot:g}°, scale {s0:g}–{s1:g}, shear "
    "±{sh:g}°, ±{move:g} px each way). The same figures as `capsviz robustness`. Strength 0 is "
    "the plain test set. With a CNN to compare, its curves are drawn too (purple, dashed): "
    "the paper's claim is that capsules carry further (affNIST: 79 % against 66 % for a CNN "
    "of the same MNIST accuracy)."
)

PAIRS = QT_TR_NOOP(
    "Two MNIST test digits of different classes, each shifted by up to 4 px, added and clipped "
    "in a 36×36 field (MultiMNIST, Sec. 6 of the paper). The two longest digit capsules are the "
    "model's answer. Fig. 5: the reconstructions from those two capsules in red and green over "
    "each other, and one from a digit you pick; a digit that is not there cannot be "
    "reconstructed. Segmentation by routing: each pixel coloured by how the primary capsules "
    "that see it divide their couplings between digit A (red) and digit B (green), at the "
    "routing iteration chosen in the Routing dock."
)

SEGMENTATION_SCALE = QT_TR_NOOP(
    "The segmentation's colours span the largest departure from an even split over all "
    "iterations of this pair: where routing barely divides the capsules, faint differences "
    "show as full colours. The shares are the couplings themselves."
)
NEXT_WRONG = QT_TR_NOOP(
    "scan the test pairs after this one for the next whose two longest capsules are not its two digits "
    "(click again to cancel)"
)
NEXT_ROUTING_CHANGE = QT_TR_NOOP(
    "scan the test pairs after this one for the next whose two longest capsules after one routing "
    "iteration are other digits than after R (the Routing dock's R; click again to cancel)"
)
# The pair view's panels, by the file name an export gives them: a short title (five panels
# share the middle of the window, about 100 px each) and a tooltip that says the rest.
PAIR_PANELS = {
    "pair_digits": (
        "A + B",
        QT_TR_NOOP("the two digits, each alone in its shifted 36×36 field: A in red, B in green"),
    ),
    "pair_input": (
        QT_TR_NOOP("input"),
        QT_TR_NOOP("the model's {k}×{k} input: the two digits summed and clipped at 1"),
    ),
    "pair_reconstructions": (
        QT_TR_NOOP("decoded"),
        QT_TR_NOOP("the reconstructions from the two longest capsules over each other (paper Fig. 5)"),
    ),
    "pair_absent_digit": (
        QT_TR_NOOP("(*) digit"),
        QT_TR_NOOP("the reconstruction from the capsule picked under (*): a digit that is not there"),
    ),
    "pair_segmentation": (
        QT_TR_NOOP("segmentation"),
        QT_TR_NOOP(
            "segmentation by routing at iteration r: each pixel coloured by how the primary capsules that "
            "see it split their couplings between the two digits (red: to A's capsule, green: to B's)"
        ),
    ),
}
