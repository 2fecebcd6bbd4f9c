"""Named, versioned ways of combining the lexical and vector legs.

The name (with its version) is reported in every result so a change to ranking is visible in
results and benchmarks.
"""

from __future__ import annotations

from dataclasses import dataclass

RRF = "rrf-v20"
WEIGHTED = "weighted-v16"


@dataclass(frozen=True)
class Ranking:
    """Every number that decides an order, in one place. The defaults were chosen on the tuning
    half of the REALTALK benchmark (chats 1-5) and checked on the other benchmarks; see
    docs/benchmarks.md. Changing one is a new version of the ranking: bump ``RRF``/``WEIGHTED``."""

    rrf_k: int = 20
    lexical_weight: float = 1.0  # RRF weight of the lexical leg
    # A lexical hit counts in proportion to coverage**coverage_power: the IDF-weighted share of
    # the query's terms it matches (0 = every lexical hit counts fully).
    coverage_power: float = 0.25
    vector_weight: float = 1.0  # RRF weight of the vector leg
    # bm25() column weights: the unit's own text, its heading path (+ entities), its neighbours.
    heading_weight: float = 0.4
    context_weight: float = 0.5
    # A unit whose neighbour in the same section is also a candidate gains this share of the
    # neighbour's fused score: the section informs ranking without being the hit.
    neighbour_boost: float = 0.15
    # Diversity: each further hit from a section already shown has its score multiplied by this
    # (1.0: off; 0.85 lost evidence on the tuning split: a conversation's answer is often two
    # messages of one session).
    same_section_factor: float = 1.0
    # A hit shorter than this many characters takes in the units on the lines right next to it
    # (ranking._grow): "Yes, loved it!" comes with the message it answers. 0 = single units only.
    hit_min_chars: int = 50
    # Units holding every identifier of the query come first ("DEC-0054", "When was v2.3.1
    # deployed?") when it has at most this many terms; in a longer question an identifier is
    # named in passing ("IL-6 signalling in T cells is required for ... in mice"), and its units
    # rank as fused (rrf-v7). A quoted phrase always comes first. On SciFact's training claims
    # (289 of 809 name an identifier) nDCG@10 went from 0.7185 to 0.7242 (limits of 3 to 7 terms:
    # 0.7228-0.7243; never first: 0.7224).
    exact_first_max_terms: int = 6
    # A time named in the question: its window, widened by this many days each side, is searched
    # too, and that ranking is fused (with this weight) with the unrestricted one.
    time_slack_days: int = 1
    time_weight: float = 1.0
    # A transcript's message is evidence of what was said; a curated note is what was kept. A unit
    # from a transcript (sessions/…) has its score multiplied by this, so when a note and a
    # conversation say the same thing (adjacent ranks in both legs), the note ranks first.
    transcript_factor: float = 0.9
    # A question naming a person: the lines that person said ("- Kate: …", a chat's daily log) and
    # the facts about them (@Kate) have their score multiplied by 1 + person_boost.
    person_boost: float = 1.0
    # A question that asks for all of something (aggregate.py: "What are Peter's hobbies?"): its
    # hits are diversified across sections with this factor and grown only to this many
    # characters. Neither helped on the tuning chats (0.8 and 0 both lost evidence), so they are
    # the ordinary numbers; they stay here for the next experiment.
    aggregate_section_factor: float = 1.0
    aggregate_min_chars: int = 50
    # Such a question that names someone ("What are Peter's hobbies?") is also embedded without
    # the names ("What are hobbies?"), and that vector ranking joins the RRF as a third leg with
    # this weight (rrf-v5; 0 = off). With the name, the question's vector sits near every line
    # that greets or mentions the person; without it, near the thing asked for, and the person's
    # own lines are preferred by ``person_boost`` anyway. On the tuning chats "facts spread over
    # messages" rose from 0.437 to 0.461 ER@2k; weights 0.7 to 2.0 scored the same (0.458-0.464).
    aggregate_content_weight: float = 1.0
    # A message that only asks ("- Kate: How are you doing today?", "- [ ] Ben: Where do you
    # live?", aggregate.only_asks) has its score multiplied by this (hybrid, with vectors): a
    # question put to someone is rarely one of their answers. rrf-v6 did it for a question asking
    # for all of something; rrf-v11 for every question: on the mixed workspaces' tuning part R@1
    # went from 0.300 to 0.321 (ER@2k 0.521 either way), on REALTALK's tuning chats ER@2k from
    # 0.658 to 0.665; 0.2 to 0.5 scored the same on both, 0.7 less (benchmarks/analysis.md).
    question_factor: float = 0.5
    # A note's own open question that no one said ("- [ ] who signs off the rounding?",
    # aggregate.open_question) has its score multiplied by this when the question asks who, when,
    # where, how many or why (``Query.asks``): it restates what is open and cannot say it
    # (rrf-v18; 1.0 = off). The same number as ``question_factor``, not tuned: it ranked the
    # to-do above the line that answers it on a hand-written note (tests/test_aggregate.py).
    open_question_factor: float = 0.5
    # Then the first ``aggregate_spread_depth`` units are re-ordered by maximal marginal
    # relevance (aggregate.spread_out): each next hit is the one with the best
    # (1 - w) * score / best score - w * its highest cosine to a hit already picked, with
    # w = aggregate_spread_weight (0 = off), so a fifth line on the chess club gives way to the
    # one line on tennis. On the tuning chats "facts spread over messages" rose from 0.461 to
    # 0.494 ER@2k with both (weights 0.6-0.7 x factors 0.4-0.6: 0.487-0.494; either alone
    # 0.470-0.481).
    aggregate_spread_weight: float = 0.65
    aggregate_spread_depth: int = 60
    # rrf-v8: the lexical leg's RRF weight is multiplied by seen ** unseen_power, where seen is
    # the IDF-weighted share of the question's terms that the memory holds at all
    # (legs.seen_share), and a unit's coverage is counted over those terms. "a feline resting on
    # a rug" in notes that never wrote "feline" or "rug": the one line matching "rest" of the
    # evening no longer outranks Miso the cat on the doormat, the vector leg's first. A question
    # whose every word the memory holds is ranked as before. 0 = off. On REALTALK's tuning chat
    # 4, 1.0 lost 0.014 ER@2k (0.6680 -> 0.6537); 0.5 lost nothing (0.6680), as did applying
    # 1.0 only below a seen share of 0.35; on chat 2, 0.5 gained 0.007 (0.7712 -> 0.7781) and
    # 1.0 nothing (benchmarks/analysis.md).
    unseen_power: float = 0.5
    # rrf-v8: among the units holding every identifier of a short question (exact_first), the
    # Retain facts come first: "what did we decide in DEC-0054?" gets the fact that states the
    # decision before the checklist that mentions it.
    exact_facts_first: bool = True
    # rrf-v8: a page line that restates one fact (it cites it: reflect's entity pages) never
    # comes before that fact; the fact is shown right before it (copies.py). False: off.
    sources_first: bool = True
    # rrf-v13: such a copy, shown after its source, is no hit of its own but a citation on the
    # source's hit (``copies``): an agent reads each fact once within its budget. False: the
    # copy is a hit of its own, as in rrf-v11. (rrf-v12 was tried and reverted, analysis.md.)
    # rrf-v14 (weighted-v12): an episode page's line quoting one message of a transcript is that
    # message's copy too (copies.PAGES); a message whose proposal was accepted counts as the fact
    # it was kept as (ranking._ProposalFold). (An answer-type re-ranker measured under the name
    # rrf-v14 on branch rank-answer-match never shipped: analysis.md.)
    fold_copies: bool = True
    # A question naming an entity that has a page ("Tell me about Peter", "What are Kate's
    # hobbies?") has the page lead the hits when it asks at most this many words besides its
    # names and dates; a longer one ("Where was Peter on 3 Dec 2025?") asks for a line, and the
    # page ranks as any note (rrf-v9).
    entity_page_max_terms: int = 1
    # rrf-v15: among the first this many hits, lines next to each other in one section (no line
    # between, the same heading; notes' lines, not facts) are one hit at the better one's place
    # (passages.py): a message and the reply to it read as the exchange they are; not for a
    # question asking for all of something (its hits are spread over distinct items). 0 = off.
    join_depth: int = 5
    # rrf-v16: the messages among the first this many hits (lines one person said: "- Kate: …",
    # a transcript's) trade places by whether each can answer what the question asks (a time
    # for "when", a place for "where", a number, a name, a cause) and whether the person asked
    # about said it, beside its place and fused score (answer_match.py; hybrid rank fusion only,
    # after the joining above). Every other hit keeps its place (the entity's page, facts, pages,
    # notes), and a short question with an identifier is left as exact-first put it. 0 = off.
    answer_depth: int = 5
    # rrf-v19: among the first this many hits, for a question asking when or how many / how
    # long, the units no one said (Retain facts, notes' lines; not messages, pages or hits reached
    # through a link) that hold what is asked (a time, a number) and some of the question's words
    # or names come before those that do not, in the places those units hold
    # (answer_match.form_first): the fact "wants the report by Friday 2026-11-27." before a
    # narrative line next to the question's words that says no date. rrf-v20: "why" too (a
    # cause stated outright: "root cause", "because", "due to"), a clock time counts for "when",
    # and among the units holding what is asked the Retain facts come first. 0 = off.
    form_depth: int = 5


@dataclass(frozen=True)
class LegHit:
    chunk_id: int
    rank: int  # 1-based within its leg
    score: float  # lexical: normalised BM25 in (0, 1); vector: cosine similarity in [-1, 1]
    exact: bool = False  # lexical: holds every identifier and quoted phrase of the query
    coverage: float = 1.0  # lexical: IDF-weighted share of the query's terms it matches


def bm25_to_unit(bm25: float) -> float:
    """FTS5's bm25() is *negative* (more negative = better). Map it to (0, 1), monotonically.

    OpenClaw mapped rank r to 1/(1+max(0, r)); r is always negative, so every hit scored 1.0 and
    keyword-only hits could never pass its minimum score. Here x = -bm25 >= 0 and x/(1+x) keeps
    the order and never saturates at a constant.
    """
    x = max(0.0, -bm25)
    return x / (1.0 + x)


def rrf(
    lexical: list[LegHit],
    vector: list[LegHit],
    k: int = 60,
    lexical_weight: float = 1.0,
    vector_weight: float = 1.0,
    coverage_power: float = 0.0,
) -> dict[int, float]:
    """Weighted reciprocal rank fusion (Cormack et al., 2009): sum of w/(k + rank) over the legs."""
    scores: dict[int, float] = {}
    for h in lexical:
        share = h.coverage**coverage_power if coverage_power else 1.0
        scores[h.chunk_id] = scores.get(h.chunk_id, 0.0) + lexical_weight * share / (k + h.rank)
    for h in vector:
        scores[h.chunk_id] = scores.get(h.chunk_id, 0.0) + vector_weight / (k + h.rank)
    return scores


def weighted(
    lexical: list[LegHit], vector: list[LegHit], w_vector: float = 0.7, w_text: float = 0.3
) -> dict[int, float]:
    """OpenClaw's classic 0.7·vector + 0.3·text sum, kept for comparison (with a correct text score)."""
    scores: dict[int, float] = {}
    for h in vector:
        scores[h.chunk_id] = scores.get(h.chunk_id, 0.0) + w_vector * max(0.0, h.score)
    for h in lexical:
        scores[h.chunk_id] = scores.get(h.chunk_id, 0.0) + w_text * h.score
    return scores
