"""The guided tour's steps: what each says, beside which view, and the live example it sets up
(Qt-free; the app's tour, :mod:`capsviz.gui.tour`, shows them and runs the examples).

Texts are English sources marked for Qt's translation tools (:func:`~capsviz.texts.QT_TR_NOOP`: lupdate
files them with the app's other texts, the app translates them where it shows them). A text
may hold ``{name}`` fields: figures of the model and input on screen, from :func:`figures`
(and :func:`follow_figures`), so that what a step says of the loaded model stays true for a
model the user trains.
"""

from __future__ import annotations

from dataclasses import dataclass

from capsviz.texts import QT_TR_NOOP


@dataclass(frozen=True)
class Step:
    """One step of the tour.

    key : names the example the app sets up for it (:mod:`capsviz.gui.tour`)
    view : the dock (a key of the window's docks) or ``"input"`` (the central input source)
        the step stands beside and highlights
    title, text : English sources; ``text`` may hold fields of :func:`figures` (and the follow
        step's of :func:`follow_figures`)
    keep : a dock the text speaks of beside ``view``, which the step's panel leaves visible
        where the window has room for that ("" for none)
    """

    key: str
    view: str
    title: str
    text: str
    keep: str = ""


STEPS = (
    Step(
        "capsule",
        "lengths",
        QT_TR_NOOP("A capsule is a vector"),
        QT_TR_NOOP(
            "A neuron gives one number; a capsule gives a vector. Its length says how sure the network is that "
            "the thing the capsule stands for is present, its direction says how that thing looks. Here a test "
            "digit is loaded: the ten bars are the lengths ‖v_j‖ of the ten digit capsules, and the longest "
            "one ({answer}, length {length}) is the answer."
        ),
    ),
    Step(
        "squash",
        "lengths",
        QT_TR_NOOP("Squash keeps a length below 1"),
        QT_TR_NOOP(
            "A length can only read as a probability if it stays below 1. The squash function shrinks a short "
            "vector almost to nothing and a long one to just under 1, and never turns it: v = ‖s‖² / (1 + ‖s‖²) "
            "· s / ‖s‖. Every bar here has gone through it, so none reaches 1."
        ),
    ),
    Step(
        "primary",
        "lengths",
        QT_TR_NOOP("Primary capsules: 32 types on a grid"),
        QT_TR_NOOP(
            "Below the bars are the {primary} primary capsules, the first capsule layer: 32 types, each a "
            "{grid} × {grid} grid of 8-dimensional capsules computed by a convolution from the pixels. Each "
            "tile is one type; a bright cell is a long capsule, a part that type has found at that place."
        ),
    ),
    Step(
        "votes",
        "votes",
        QT_TR_NOOP("Every primary capsule votes"),
        QT_TR_NOOP(
            "Each primary capsule i predicts every digit capsule j: it multiplies its vector by a learned "
            "matrix, û_j|i = W_ij u_i. The dots are these votes for the digit shown, seen from the two "
            "directions in which they spread most. Votes that land close together agree on what digit {answer} "
            "should look like."
        ),
    ),
    Step(
        "routing_first",
        "routing",
        QT_TR_NOOP("Routing by agreement, iteration 1"),
        QT_TR_NOOP(
            "Which digit should a primary capsule send its vote to? Routing starts undecided: every coupling "
            "coefficient c_ij is 0.1, an even split over the ten digits, and each digit capsule sums the votes "
            "it gets. The slider now shows iteration r = 1, where every map is the same."
        ),
    ),
    Step(
        "routing_last",
        "routing",
        QT_TR_NOOP("Agreement moves the couplings"),
        QT_TR_NOOP(
            "After each iteration, the logit b_ij grows by the agreement û_j|i · v_j between a vote and the "
            "digit's output, and c_ij = softmax_j(b_ij) follows. At r = {iterations} the maps show where "
            "capsules send more than an even split (red) and where less (blue)."
        ),
    ),
    Step(
        "routing_effect",
        "routing",
        QT_TR_NOOP("What routing does here"),
        QT_TR_NOOP(
            "On this digit, {decisive} of the {primary} primary capsules route decisively (some c_ij moves more "
            "than 0.05 away from 0.1); they are ringed on the mosaic and on the input, and carry {share} % of the "
            "primary output. The mean entropy of the couplings goes from {entropy_first} to {entropy_last} nats. "
            "{answers} {test_set} {spread}"
        ),
    ),
    Step(
        "follow",
        "votes",
        QT_TR_NOOP("Follow one capsule"),
        QT_TR_NOOP(
            "The most decisive capsule of this digit is selected: i = {capsule} (type {type}, at y = {y}, "
            "x = {x}, length ‖u_i‖ = {u_length}). It is ringed on the mosaic and among the primary capsule "
            "lengths, the input pixels it sees are framed on the map of {answer} on the input, and its vote is "
            "circled here among the votes for {answer}. At r = 1 it splits its output evenly, 0.1 to each "
            "digit; at r = {iterations} it sends {coupling} to digit {favoured}. Click any primary capsule to "
            "follow it the same way, and click it again to let it go."
        ),
        keep="routing",
    ),
    Step(
        "margin",
        "lengths",
        QT_TR_NOOP("The margin loss"),
        QT_TR_NOOP(
            "Training pushes the capsule of the right digit above m⁺ = 0.9 and every other one below m⁻ = 0.1, "
            "the two dashed lines. A length between them costs loss; the network gets no reward for pushing "
            "further, so the bars of a well-trained model stop near the lines."
        ),
    ),
    Step(
        "pose",
        "pose",
        QT_TR_NOOP("The decoder and the pose"),
        QT_TR_NOOP(
            "A decoder draws the digit again from the answer capsule's 16 numbers alone. Each slider adds an "
            "offset to one dimension; one has just been moved, and the reconstruction changes its stroke "
            "while staying a {answer}. The dimensions were never told what to mean: training made them "
            "stand for thickness, slant, width and the like."
        ),
    ),
    Step(
        "transforms",
        "transforms",
        QT_TR_NOOP("Invariance and equivariance"),
        QT_TR_NOOP(
            "The input is turned step by step and every angle is classified. While the digit is turned a little, "
            "the length of the answer capsule stays high (invariance: the digit is still there) and its pose "
            "dimensions move with the angle (equivariance: the pose follows the rotation); turned further, the "
            "length falls and the digit is lost. The CNN's probability along the same sweep can only say how "
            "sure it is, not how the digit is turned."
        ),
    ),
    Step(
        "cnn",
        "lengths",
        QT_TR_NOOP("A CNN beside the capsules"),
        QT_TR_NOOP(
            "The second bar of each digit is a plain convolutional network's probability for the same input, "
            "trained on the same digits. Both answer {answer} here; the CNN has no lengths, poses or routing to "
            "show, only how sure it is."
        ),
    ),
    Step(
        "pairs",
        "input",
        QT_TR_NOOP("Overlapping digits"),
        QT_TR_NOOP(
            "Two digits drawn on top of each other: a capsule network trained on such pairs answers with its "
            "two longest capsules. The colours show which digit each primary capsule routes to, so routing "
            "splits the picture into the two digits, and each is drawn again from its own capsule."
        ),
        keep="lengths",
    ),
)


def figures(effect, check=None, lengths=None, answer: int | None = None) -> dict[str, str]:
    """The fields the steps' texts hold, as text: from ``effect`` (a
    :class:`~capsviz.model.routing_effect.RoutingEffect` of the input shown), ``check`` (its
    model's :class:`~capsviz.model.routing_effect.RoutingCheck` over the test set, or None),
    ``lengths`` ((10,) final capsule lengths) and ``answer`` (the digit answered). The
    sentences chosen by the figures come from :func:`routing_sentences`."""
    from capsviz.model.analysis import grid_side

    out = {
        "primary": f"{effect.primary:,}",
        "grid": str(grid_side(effect.primary)),
        "decisive": f"{len(effect.decisive):,}",
        "share": f"{100 * effect.mass_share:.1f}",
        "entropy_first": f"{effect.entropy[0]:.4f}",
        "entropy_last": f"{effect.entropy[-1]:.4f}",
        "iterations": str(effect.iterations),
        "answer": "" if answer is None else str(answer),
        "length": "" if lengths is None or answer is None else f"{lengths[answer]:.2f}",
        "first": ", ".join(map(str, effect.first)),
        "last": ", ".join(map(str, effect.last)),
    }
    if check is not None:
        out.update(differ=f"{check.differ:,}", examples=f"{check.examples:,}")
    return out


def most_decisive(c) -> int:
    """The primary capsule whose coupling departs most from an even split at the last
    iteration, ``max_j |c_ij - 1/J|`` (the first of :func:`~capsviz.model.routing_effect.routing_effect`'s
    decisive capsules where there are any): c (R, I, J) couplings -> i."""
    from capsviz.model.routing_effect import departures

    return int(departures(c[-1]).argmax())


def follow_figures(u_lengths, c, i: int) -> dict[str, str]:
    """The fields of the step that follows primary capsule ``i``, as text: its index, type and
    grid position (y, x), its length, and at the last iteration its largest coupling and the
    digit that gets it. u_lengths : (I,) primary capsule lengths; c : (R, I, J) couplings."""
    from capsviz.model.analysis import capsule_position

    t, y, x = capsule_position(i, len(u_lengths))
    favoured = int(c[-1, i].argmax())
    return {
        "capsule": f"{i:,}",
        "type": str(t),
        "y": str(y),
        "x": str(x),
        "u_length": f"{u_lengths[i]:.4f}",
        "coupling": f"{c[-1, i, favoured]:.3f}",
        "favoured": str(favoured),
    }


# the sentences of the routing step, chosen by the figures (routing_sentences)
SAME_ANSWER = QT_TR_NOOP("One iteration, with the even split alone, already answers {last}, as {iterations} do.")
OTHER_ANSWER = QT_TR_NOOP("Here routing changes the answer: {first} at r = 1, {last} at r = {iterations}.")
TEST_SET = QT_TR_NOOP("Over the {examples} test images, r = 1 and r = {iterations} answer differently on {differ}.")
NO_TEST_SET = QT_TR_NOOP("(Count on the test set, in the Routing view, tells how often that happens.)")
LITTLE = QT_TR_NOOP("On this input routing changes little: most capsules keep nearly the even split.")
MUCH = QT_TR_NOOP("On this input a good part of the capsules route decisively.")
# decisive capsules below this share of all: routing changes little
LITTLE_SHARE = 0.1


def routing_sentences(effect, check=None) -> dict[str, str]:
    """The routing step's sentences that the figures choose, as English sources by the field
    they fill (``answers``, ``test_set``, ``spread``); each holds fields of :func:`figures`."""
    return {
        "answers": OTHER_ANSWER if effect.changed else SAME_ANSWER,
        "test_set": TEST_SET if check is not None else NO_TEST_SET,
        "spread": LITTLE if len(effect.decisive) < LITTLE_SHARE * effect.primary else MUCH,
    }


def panel_place(
    target: tuple[int, ...],
    window: tuple[int, int],
    size: tuple[int, int],
    gap: int = 8,
    keep: tuple[int, int, int, int] | None = None,
):
    """(x, y) of the tour's panel of ``size`` (width, height) in a window of ``window`` (width,
    height), beside the view it is about (``target``: its left, top and right edges, and
    optionally its bottom): ``gap`` pixels right of it, else left of it, else over it, ``gap``
    in from its top left corner; never above or left of the window, nor lower than its bottom
    where there is room. With ``keep`` (left, top, right, bottom of a view to leave visible)
    and the target's bottom: the first place right of it, left of it or ``gap`` under it
    that leaves ``keep`` clear; where none does, as without ``keep``."""
    left, top, right = target[:3]
    (window_width, window_height), (width, height) = window, size

    def level(y: int) -> int:
        return max(0, min(y, window_height - height))

    beside = []
    if right + width + gap <= window_width:
        beside.append((right + gap, level(top)))
    if left - width - gap >= 0:
        beside.append((left - width - gap, level(top)))
    if keep is not None and len(target) > 3:
        under = [(max(0, min(left + gap, window_width - width)), target[3] + gap)]
        for x, y in beside + (under if target[3] + gap + height <= window_height else []):
            if x > keep[2] or x + width <= keep[0] or y > keep[3] or y + height <= keep[1]:
                return x, y
    return beside[0] if beside else (max(0, left + gap), level(top + gap))
