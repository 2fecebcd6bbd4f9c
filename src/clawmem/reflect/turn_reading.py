"""What the embedder reads of a turn: whether it has the shape of something that happened to the
speaker or that they plan ("I moved into a new apartment last week"), or of talk around it
("haha that's so funny", "how was your day?"). Fact proposals (fact_proposals.selected) use it
for one choice only: a speaker's third-best turn in a stretch of talk, which the budget of two
leaves out, is proposed when this reading says it is an event.

The reading is the turn's embedding (clawmem's own model, as a document) compared with two sets
of prototypes written here, generic sentences of both shapes on many subjects: the mean cosine to
the event-shaped ones minus the mean cosine to the small-talk ones. Nothing is fitted on a
conversation: the prototypes are fixed text and the threshold one number, chosen on REALTALK's
tuning chats 1-5 (benchmarks/analysis.md). A cosine is a model's own scale, so the threshold is
used only with the model it was chosen with (THRESHOLD_MODEL); with another model there is no
reading and proposals are chosen as without it.

Why not more: a probe fitted on the 384 coordinates (or on a centroid of the tuning chats' event
turns) learns which subjects those chats' people talk about, and did not carry over to other
people; the prototypes' reading is weaker on all turns (an AUROC near 0.7 against the fitted
model's 0.83) but the same on a chat of new people, and among a stretch's third-best turns, the
fitted model's ranking no longer tells events apart while the reading does (17 of 35 third turns
above its median were events, 10 of 35 below).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from clawmem.embedders.base import EmbedResult

# Generic sentences of the two shapes, on subjects of everyday life (work, study, family, health,
# travel, home, sport, hobbies), written for this reading: no evaluation conversation's words.
EVENT_SHAPED = (
    "I'm starting a new job next month.",
    "I just got back from a trip to the mountains with my family.",
    "I signed up for a pottery class on Tuesdays.",
    "My sister is getting married in June.",
    "I moved into a new apartment last week.",
    "I finally finished my thesis and submitted it.",
    "I've been going to the gym every morning this week.",
    "I stayed home from work yesterday because I had a fever.",
    "We adopted a puppy over the weekend.",
    "I have an exam on Friday so I'm studying all week.",
    "I'm flying home to see my parents for the holidays.",
    "I started learning to play the guitar.",
    "My mom had surgery and she's recovering now.",
    "I got promoted at work today.",
    "I cooked dinner for my friends last night.",
    "I'm planning to visit my grandparents this summer.",
    "I went hiking with my roommate on Saturday.",
    "I lost my phone at the concert.",
    "I applied for a scholarship to study abroad.",
    "I'm taking my driving test next week.",
    "I joined a basketball team at my college.",
    "I had a job interview this morning and I think it went well.",
    "My brother and I are painting the living room this weekend.",
    "I bought a new bike to ride to work.",
    "I volunteered at the animal shelter on Sunday.",
    "I'm working on a research project for my internship.",
)
SMALL_TALK = (
    "Haha that's so funny!",
    "That sounds amazing, I'm glad you had fun.",
    "How are you doing today?",
    "Nice! Good luck with that.",
    "Oh no, I'm sorry to hear that.",
    "Yeah I totally agree with you.",
    "Hey! Long time no see.",
    "That's awesome, congrats!",
    "Thanks for asking, I'm good.",
    "Lol same here.",
    "I hope you feel better soon.",
    "What do you think about it?",
    "That makes sense.",
    "Wow, that's really interesting.",
    "Good morning! How was your day?",
    "I know right, it's crazy.",
    "Talk to you later, have a good night!",
    "Sounds like a plan.",
    "Honestly I don't know what to say.",
    "That's so sweet of you.",
    "It was nice chatting with you.",
    "Oh really? Tell me more.",
    "I feel you, it's tough sometimes.",
    "Yes definitely, I would love that.",
    "That's a good question.",
    "I think it depends on the person.",
)
# A third turn is proposed when its reading is at least THRESHOLD. Chosen on REALTALK chats 1-5
# leaving one chat out (the fitted model's weights from the other four; the reading itself is
# fitted on nothing): from -0.04 to -0.02, recall 0.633-0.637 at precision 0.510-0.522, against
# the budget of two's R 0.605 at P 0.518 (a third turn for everyone: P 0.506, R 0.637); -0.03, the
# middle: P 0.515, R 0.633; -0.015 lost recall. The tuning chats' turns read -0.033 at the
# median, -0.027 at the 70th percentile.
THRESHOLD = -0.03
# The model THRESHOLD was chosen with (EmbedderIdentity.model): clawmem's default.
THRESHOLD_MODEL = "multilingual-e5-small-q4_0"


class TurnReading:
    """``reading(texts)``: each text's reading (higher: more like an event), from ``source``,
    which gives an embedder for that many documents (``embed_documents`` and ``identity``), or
    None when there is none. The prototypes are embedded once, at the first call."""

    def __init__(self, source: Callable[[int], object | None]) -> None:
        self._source = source
        self._prototypes: tuple[np.ndarray, np.ndarray] | None = None
        # Why a call had no reading (None: none was refused): reflect reports it as a degraded
        # mode, since the proposals are then chosen as without it.
        self.skipped: str | None = None

    def __call__(self, texts: Sequence[str]) -> list[float] | None:
        """The readings of ``texts`` in order (a text the model gives no vector reads as
        -inf: never an event), or None when there is no model, or not the one THRESHOLD was
        chosen with."""
        import numpy as np

        if not texts:
            return []
        todo = len(texts) + (0 if self._prototypes else len(EVENT_SHAPED) + len(SMALL_TALK))
        emb = self._source(todo)
        identity = getattr(emb, "identity", None)
        if emb is None or getattr(identity, "model", None) != THRESHOLD_MODEL:
            self.skipped = (
                "no embedding model to read turns with (vectors off or unavailable)"
                if emb is None
                else f"the embedding model is {getattr(identity, 'model', None) or 'another'}, "
                f"not {THRESHOLD_MODEL}, whose scale its threshold was chosen on"
            )
            return None
        embed: Callable[[Sequence[str]], EmbedResult] = emb.embed_documents  # type: ignore[attr-defined]
        if self._prototypes is None:
            res = embed([*EVENT_SHAPED, *SMALL_TALK])
            if any(v is None for v in res.vectors):
                return None
            both = np.array(res.vectors, dtype=np.float32)
            self._prototypes = (both[: len(EVENT_SHAPED)], both[len(EVENT_SHAPED) :])
        event, small = self._prototypes
        out = []
        for v in embed(list(texts)).vectors:
            if v is None:
                out.append(float("-inf"))
                continue
            v = np.asarray(v, dtype=np.float32)
            v = v / (float(np.linalg.norm(v)) or 1.0)
            out.append(float((event @ v).mean() - (small @ v).mean()))
        return out


def is_event(reading: float) -> bool:
    """Whether a turn's reading says it is an event (THRESHOLD)."""
    return reading >= THRESHOLD
