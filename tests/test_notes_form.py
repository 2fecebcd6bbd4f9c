"""rrf-v21: the words that say what form the answer takes (issue 45, item 2). "What went wrong
with / what broke / what happened to X" asks for a cause, as "why" does; "due", "deadline" and
"by when" ask for a day, as "when" does; and such a word that no unit holds is no word the memory
lacks (it neither shrinks the lexical leg's weight nor counts as ``unseen`` in relevance)."""

from __future__ import annotations

from datetime import date

import pytest

from clawmem import open_workspace
from clawmem.recall import legs
from clawmem.text.query import Query, asks_for

from .test_notes_first import DAY, LATER

TODAY = date(2026, 3, 12)


@pytest.mark.parametrize(
    ("question", "form"),
    [
        ("what went wrong with the billing API?", "why"),
        ("What's wrong with the nightly build?", "why"),
        ("what broke in the billing API?", "why"),
        ("what happened to the billing API?", "why"),
        ("What is the deadline for the capacity review?", "when"),
        ("what’s the due date of the capacity review?", "when"),
        ("by when is the capacity review due?", "when"),
        ("What happened at the offsite?", None),  # an event, not a cause
        ("What happened to Marit in Graz?", None),  # what befell a person: an event
        ("what is the capacity review?", None),
    ],
)
def test_what_a_question_asks_for_by_its_form(question, form):
    assert asks_for(question) == form


def test_a_form_word_is_a_term_but_names_no_topic():
    """The form words are still searched ("the deadline is Friday" matches "deadline"); they are
    marked, for the one asked by the question's form only, and a quoted one is a topic."""
    q = Query.parse("when is the capacity review due?", TODAY)
    assert q.lex.terms == ('"capacity"', '"review"', '"due"') and q.form_terms == ('"due"',)
    assert Query.parse("what went wrong with the API?", TODAY).form_terms == ('"wrong"',)
    assert Query.parse("why is the review due?", TODAY).form_terms == ()  # "why": not a day
    assert Query.parse('when is "due" said?', TODAY).form_terms == ()


# The day's standup, incident and Retain facts, and a later day, of test_notes_first's notes
# (names made up): no line says "due", "deadline", "wrong" or "broke".


def _workspace(tmp_path):
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "2026-03-09.md").write_text(DAY, "utf-8")
    (ws / "memory" / "2026-03-11.md").write_text(LATER, "utf-8")
    return ws


def test_a_form_word_no_unit_holds_is_left_out_of_the_search(tmp_path):
    """Held by no unit, "due" is left out of the lexical query (it matched nothing), so every
    other part of ranking reads the question as the memory's words; held, it stays."""
    ws = _workspace(tmp_path)
    (ws / "memory" / "2026-03-10.md").write_text(
        "- Deadline for the snapshot audit: April.\n", "utf-8"
    )
    mem = open_workspace(ws)
    mem.index(embed=False)
    index = mem.open_index()
    asked = Query.parse("when is the capacity review due?", TODAY)
    due = legs.without_unheld_form_terms(index, asked)
    assert due.lex.terms == ('"capacity"', '"review"') and '"due"' in due.lex.dropped
    assert due.lex.any_terms == '"capacity" OR "review"'
    assert legs.seen_share(index, due.lex) == 1.0
    held = Query.parse("what is the deadline for the audit?", TODAY)  # a note says it
    assert held.form_terms == ('"deadline"',)
    assert legs.without_unheld_form_terms(index, held) is held
    index.close()
    mem.close()


def test_form_words_in_hand_written_notes(tmp_path, shared_model):
    """With the real model: "what went wrong with the billing API?" gets the incident paragraph
    that states its root cause first (before: the to-do that names the API), and "when is the
    capacity review due?" the Retain fact stating the day, its relevance not cut by "due", which
    no note says (before: the lexical leg weighed ×0.57, relevance 0.17 on such notes)."""
    mem = open_workspace(_workspace(tmp_path), environ={"CLAWMEM_MIN_RELEVANCE": "0"})
    mem.index()
    wrong = mem.recall("what went wrong with the billing API?", k=5, today=TODAY, sync=False)
    assert "Root cause" in wrong.hits[0].text, [h.text for h in wrong.hits]
    due = mem.recall("when is the capacity review due?", k=5, today=TODAY, sync=False)
    assert due.hits[0].kind == "W" and "2026-03-16" in due.hits[0].text
    assert not due.relaxed  # "capacity" and "review" are all the question's words it searched
    plain = mem.recall("when is the capacity review?", k=5, today=TODAY, sync=False)
    assert due.hits[0].relevance > 0.8 * plain.hits[0].relevance, (due.hits, plain.hits)
    mem.close()
