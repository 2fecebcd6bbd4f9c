"""rrf-v20: the right memory first on hand-written notes (issue 45, item 2). A question's light
verb in a phrasal verb ("go down", "come up") is no topic word; a "why" question gets the note
line that states a cause before other lines; among the lines holding what is asked, the Retain
fact that states it comes before the narrative around it."""

from __future__ import annotations

from datetime import date

from clawmem import open_workspace
from clawmem.recall import answer_match
from clawmem.text.query import Query
from clawmem.text.textnorm import build_query, light_verbs
from tests.test_answer_match import _hit

TODAY = date(2026, 3, 12)


def test_a_questions_light_verb_in_a_phrasal_verb_is_no_search_term():
    """Typed in lower case in a question, said once, right before a particle ("go down", "come
    up", "took over", "went wrong"), a light verb is left out like a stopword; in its own sense
    ("go to", "went ice fishing") it is searched (the answer says "going"), and so is a capital
    (a name), a repeat (the topic) and a query that is no question."""
    q = build_query("why did the billing API go down?")
    assert q.terms == ('"billing"', '"api"') and '"go"' in q.dropped
    assert light_verbs("when did the idea come up?") == {"come"}
    assert light_verbs("who took over the team?") == {"took"}
    assert light_verbs("what went wrong with the deploy?") == {"went"}
    assert light_verbs("when did Ana go to the lake?") == set()
    assert light_verbs("when did Ana last go ice fishing?") == set()
    assert light_verbs("how long to take the pills?") == set()
    assert '"go"' in build_query("does Go down-cast interfaces?").terms  # the language: a name
    assert '"go"' in build_query("where did the go bag go down?").terms  # also the topic
    assert '"go"' in build_query("go down the list").terms  # no question
    assert build_query("go down?").terms == ('"go"', '"down"')  # nothing else to search


def test_a_line_stating_a_cause_comes_first_for_why():
    """``form_first`` for "why": the units no one said that state a cause outright ("root
    cause", "because", "due to", …) and hold some of the question's words move first; "since"
    alone is no cause (it is a time as often)."""
    q = Query.parse("Why did the billing API fall over?", TODAY)
    hits = [
        _hit("- [ ] Write the latency report for the billing API", 0.10),
        _hit("- The billing API has been up since Monday.", 0.09),
        _hit("The billing API fell over at 09:40. Root cause: the disk filled up.", 0.08),
        _hit("- Lunch was late because of the fire drill.", 0.07),  # a cause, not the topic
    ]
    assert answer_match.form_first(q, hits, depth=4) == [hits[i] for i in (2, 0, 1, 3)]
    assert answer_match.form_first(Query.parse("What is the billing API?", TODAY), hits, 4) == hits
    # a clock time a line states is a "when" answer too ("fell over at 09:40")
    when = Query.parse("When did the billing API go down?", TODAY)
    two = [hits[0], hits[2]]
    assert answer_match.form_first(when, two, depth=2) == two[::-1]


def test_a_retain_fact_holding_the_asked_day_comes_before_the_lines_around_it():
    """Among the units holding what is asked, a Retain fact comes before a note's line."""
    q = Query.parse("When is the capacity review due?", TODAY)
    hits = [
        _hit("- Marit asked for the capacity review by Monday.", 0.10),
        _hit("- [ ] Draft the capacity review slides", 0.09),
        _hit("wants the capacity review by Monday 2026-03-16.", 0.08, kind="W"),
    ]
    assert answer_match.form_first(q, hits, depth=3) == [hits[i] for i in (2, 0, 1)]


# Hand-written notes (names made up for this test): a project page whose lead names its stack, a
# day's standup, an incident paragraph stating its root cause, and the Retain facts of that day.
PROJECT = """# Billing API

Owner: me. Stack: Go, Redis, Kafka.

## Decisions
- DEC-0012: keep Redis for the rate limiter (latency).
"""

DAY = """# 2026-03-09

## Standup
- Marit asked for the capacity review by Monday.
- [ ] Draft the capacity review slides (p95 for the billing API)
- Waiting on the load-test cluster; Oskar will ask ops.

## Incident
The billing API fell over at 09:40. Root cause: the Redis disk filled up with old snapshots
and writes were refused. Cleared the snapshots and added a retention job.

## Retain
- W @Marit: wants the capacity review by Monday 2026-03-16.
- B @Oskar: approved the retention job for Redis snapshots.
"""

LATER = """# 2026-03-11

Coffee with Liesel from the search team. She is moving to Graz in May and
recommends the bakery on the corner. We talked about the index rebuild.

- [x] Sent the capacity review to Marit (p95 120 ms).
- Retro for the billing launch took 40 minutes.
"""


def test_the_right_line_first_in_hand_written_notes(tmp_path, shared_model):
    """With the real model, on a workspace a person might keep: "why did the billing API go
    down?" gets the incident paragraph that states its root cause first (before: the project
    page's lead, on its heading and the language "Go" matching the verb "go"), and "when is the
    capacity review due?" the Retain fact stating the day (before: the standup line next to the
    to-do, lifted by its neighbours)."""
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "bank" / "projects").mkdir(parents=True)
    (ws / "bank" / "projects" / "billing.md").write_text(PROJECT, "utf-8")
    (ws / "memory" / "2026-03-09.md").write_text(DAY, "utf-8")
    (ws / "memory" / "2026-03-11.md").write_text(LATER, "utf-8")
    mem = open_workspace(ws, environ={"CLAWMEM_MIN_RELEVANCE": "0"})
    mem.index()
    why = mem.recall("why did the billing API go down?", k=5, today=TODAY, sync=False).hits
    assert "Root cause" in why[0].text, [h.text for h in why]
    due = mem.recall("when is the capacity review due?", k=5, today=TODAY, sync=False).hits
    assert due[0].kind == "W" and "2026-03-16" in due[0].text, [h.text for h in due]
    mem.close()
