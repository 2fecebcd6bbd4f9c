"""Questions that ask for all of something (recall/aggregate.py), told apart by their form, and
what recall does with them: the lines and facts of the person asked about come first."""

from __future__ import annotations

import pytest

from clawmem import open_workspace
from clawmem.recall import fusion, legs
from clawmem.recall.aggregate import only_asks, open_question, speaker, spread_out
from clawmem.text.query import Query, asks_for_all


@pytest.mark.parametrize(
    "question",
    [
        "What authors has Tim read?",
        "What gifts has Calvin received?",
        "What are Kate's hobbies?",
        "Which beauty treatments has Emi done?",
        "What types of recreation on water bodies does Elise like?",
        "What famous people are Nicolas and Nebraas discussing?",
        "How many times did Nicolas call?",
        "tell me about Peter",
        "Tell me everything about the payments service",
        "In which countries did Kate relax on the beach?",  # a preposition leads
        "What are some tips that Kate gave Elise?",
    ],
)
def test_a_question_asking_for_all_of_something(question):
    assert asks_for_all(question)


@pytest.mark.parametrize(
    "question",
    [
        "What is the capital of Australia?",
        "What does DEC-0054 decide?",
        "When was v2.3.1 deployed to production?",
        "How long should messages to Peter be?",
        "What did Kate make on 29 Dec 2023?",
        "Where is Peter?",
        "What time does the bus leave?",  # "does" is a verb, not a plural
        "In what year did Kate move?",
        "",
    ],
)
def test_a_question_asking_for_one_thing(question):
    assert not asks_for_all(question)


def test_the_speaker_of_a_chat_line():
    assert speaker("- Kate: I went hiking again") == "kate"
    assert speaker("- **Elise**: hi") == "elise"
    assert speaker("plain prose, no speaker") is None
    # rrf-v11: a task, a link to the person's page, a chat line quoted in a transcript
    assert speaker("- [ ] Paola: book the lounge") == "paola"
    assert speaker("- [x] Paola: booked") == "paola"
    assert speaker("- [[Kevin]]: Hello how are you?") == "kevin"
    assert speaker("- [[people/Kevin|Kevin]]: Hello") == "kevin"
    assert speaker("Assistant: elise: I took this photo today") == "elise"
    assert speaker("User: can you look at this: now") == "user"  # no quoted turn


def test_a_section_or_field_label_is_no_speaker():
    """aggregate.speaker read any label before a colon as a speaker's name: a structured
    abstract's "Background: … / Methods: …" was two people's lines, its line a message to
    re-order and boost. A speaker's label is a name (text/speakers.py)."""
    from clawmem.recall.aggregate import speakers

    for line in (
        "Background: we studied 40 patients for a year.",
        "Summary: the migration is done",
        "- Next steps: book the venue",
        "- Action Items: email Ben",
        "last_updated: 2025-11-20",
        "payments-service: runs on Hetzner",
        "Pottery class: Tuesdays at 6",
        "TypeError: undefined is not a function",
        "Monday: gym, then the dentist",
    ):
        assert speaker(line) is None, line
    assert speakers("Background: we studied 40 patients.\nMethods: a survey.\nResults: none.") == 0
    # Names: one word, or a few capitalised ones; a role; a linked name.
    assert speaker("- John Zhang: the venue is booked") == "john zhang"
    assert speaker("- Ana de Souza: hi") == "ana de souza"
    assert speaker("Speaker 2: can you hear me?") == "speaker 2"
    assert speaker("User: Summary: what we decided") == "user"  # the role, not the label


def test_chunking_and_recall_read_one_speaker_rule():
    """Chunking's talk detection and recall's speaker read one rule: a talk kept as "**Kate:** …"
    or "[10:32] Kate: …" lines was cut into one unit per message, and recall found no speaker in
    any of them; a paragraph of "Note: …" lines was cut as a talk, its label a speaker."""
    from clawmem.markdown.chunking import chunk_markdown

    talk = "**Kate:** the venue is booked\n**Ben:** for Saturday?\n**Kate:** yes, 7 pm\n"
    stamped = "[10:32] Kate: shall we go with Hetzner?\n[10:33] Ben: yes\n[10:34] Kate: done\n"
    notes = "Note: the venue is booked\nNote: for Saturday\n"
    for text, people in ((talk, ["kate", "ben", "kate"]), (stamped, ["kate", "ben", "kate"])):
        units = chunk_markdown(text)
        assert [u.start_line for u in units] == [1, 2, 3]
        assert [speaker(u.text) for u in units] == people
    (unit,) = chunk_markdown(notes)
    assert (unit.start_line, unit.end_line) == (1, 2) and speaker(unit.text) is None


def test_tell_me_about_peter_shows_his_page_then_facts_about_him(indexed):
    mem = open_workspace(indexed, environ={})
    res = mem.recall("tell me about Peter", k=6)
    assert res.hits[0].path == "bank/entities/Peter.md"
    direct = [h for h in res.hits[1:4] if h.via is None]
    assert direct and all(h.kind is not None and "Peter" in h.entities for h in direct)
    mem.close()


@pytest.mark.usefixtures("lexical")
def test_a_question_asking_something_of_an_entity_is_not_led_by_its_page(ws):
    """The page leads when the question is about the entity as a whole; a question that asks
    something of it is answered by a line, first (rrf-v9)."""
    mem = open_workspace(ws, environ={"CLAWMEM_VECTORS": "0"})
    mem.index()
    assert mem.recall("tell me about Peter", k=3).hits[0].path == "bank/entities/Peter.md"
    res = mem.recall("When did Peter book flights to Marrakech?", k=3)
    assert not any(n.startswith("entity:") for n in res.notes)
    assert (res.hits[0].path, res.hits[0].start_line) == ("memory/2025-11-16.md", 12)
    assert mem.recall("flights", k=3, entity="Peter").hits[0].path == "bank/entities/Peter.md"
    mem.close()


@pytest.mark.parametrize(
    ("question", "content"),
    [
        ("What are Kate's hobbies?", "What are hobbies?"),
        ("What are Emi`s hobbies?", "What are hobbies?"),  # a possessive typed with a backtick
        ("Which dishes did Nebraas' mother cook?", "Which dishes did mother cook?"),
        (
            "What games are both Kate and Elise interested in?",
            "What games are both and interested in?",
        ),
        ("What did we decide about DEC-0054?", None),  # asks for one thing
        ("what are kate's hobbies?", None),  # no capital: no name read
        ("Tell me about Peter", None),  # nothing but the name was asked
    ],
)
def test_a_question_without_its_names(question, content):
    assert Query.parse(question, None).unnamed == content


def test_a_question_asking_for_all_about_someone_is_also_ranked_without_the_name(indexed):
    """The third leg (since rrf-v5): it runs for such a question only, on the vector leg, and says so."""
    mem = open_workspace(indexed, environ={"CLAWMEM_MIN_RELEVANCE": "0"})
    res = mem.recall("Which trips has Peter taken?", k=6)
    assert "asks for all of something: also ranked as 'Which trips has taken?'" in res.notes
    assert res.ranking == "rrf-v20"
    # Both texts are embedded on the vector leg's thread: the NumPy query path's vocabulary is
    # a SQLite connection of the thread that opened it (a second thread once broke it, and the
    # process then embedded with llama.cpp, whose last bits differ: -k 1 and -k 2 disagreed).
    assert "failed" not in res.vectors["query_by"], res.vectors["query_by"]
    for question, mode in (
        ("Which trips has Peter taken?", "lexical"),  # no vectors, no vector leg to add
        ("tell me about Peter", "hybrid"),  # nothing but the name was asked
        ("Where is Peter?", "hybrid"),  # asks for one thing
        ("Which trips were taken?", "hybrid"),  # names no one: it would repeat the vector leg
    ):
        notes = mem.recall(question, k=6, mode=mode).notes
        assert not any(n.startswith("asks for all") for n in notes), (question, notes)
    mem.close()


@pytest.mark.parametrize(
    ("text", "asks"),
    [
        ("- elise: How are you doing today Kate?", True),
        ("- elise: Hello Kate. How are you?", True),  # a greeting states nothing
        ("- a: Do you come to Miami often? [photo: a bar. with stools]", True),
        ("- 田中: 会議はいつですか？", True),
        ("Should we move the NAS to The Castle?", False),  # a note's open question: no one said it
        ("- [ ] reproduce the crash locally (kill wifi during reconnect?)", False),
        ("- Kate: I love skiing, it's my favourite sport! What about you?", False),
        ("- Kate: I went hiking in Zion last week.", False),
        ("- Kate: Why? Because I like it.", False),
    ],
)
def test_a_line_that_only_asks(text, asks):
    assert only_asks(text) is asks


@pytest.mark.parametrize(
    ("text", "open_"),
    [
        ("- [ ] who signs off the rounding?", True),
        ("- [x] When do we freeze the schema?", True),
        ("Should we move the NAS to The Castle?", True),
        ("- is the VPN still needed? who pays for it?", True),
        ("- [ ] reproduce the crash locally (kill wifi during reconnect?)", False),  # a task
        ("- Ingrid signed off the rounding change on Tuesday.", False),
        ("- who knows. The vendor never answered?", False),  # states something too
        ("- elise: How are you doing today Kate?", False),  # a message: only_asks's
    ],
)
def test_a_notes_own_open_question(text, open_):
    assert open_question(text) is open_


# Hand-written notes (no speaker on the lines; names made up for this test): a to-do that asks
# the very question, and the line under another heading that answers it.
_ROUNDING_NOTES = """# 2026-03-04

## Rehearsal for the launch demo
- Zofia: it took fifty minutes end to end, ten over plan.
- Ingrid: I can take the PDF template.
- Bartholomew: the slides still need the new logo.
- Zofia: next one on Friday at nine, same room.

## Tasks
- [ ] who signs off the rounding?
- [ ] book the room for Friday
- [x] send Teodor the budget sheet

## Finance review
- Ingrid signed off the rounding change after the finance review on Tuesday.
- Bartholomew wants the rounding documented in the wiki.
"""


def test_an_open_question_in_the_notes_does_not_outrank_the_line_that_answers_it(
    tmp_path, shared_model
):
    """rrf-v18: "who signed off the rounding?" gets the line saying who did, not the to-do asking
    it (first before: the to-do holds the question's own words and meaning); the to-do is
    counted less, not dropped."""
    ws = tmp_path / "notes"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "2026-03-04.md").write_text(_ROUNDING_NOTES, encoding="utf-8")
    mem = open_workspace(ws, environ={"CLAWMEM_MIN_RELEVANCE": "0"})
    mem.index()
    hits = mem.recall("who signed off the rounding?", k=3).hits
    assert hits[0].start_line == 15, [(h.start_line, h.text) for h in hits]
    assert "Ingrid signed off" in hits[0].text
    # counted less, not dropped: the to-do is the next hit
    assert hits[1].start_line == 10, [(h.start_line, h.text) for h in hits]
    mem.close()


def _unit(*xs: float):
    import numpy as np

    v = np.asarray(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_maximal_marginal_relevance_lets_a_distinct_item_up():
    """Three near-identical lines on chess and one on tennis: the tennis line, fourth by score,
    comes second; with no weight the order is the scores'."""
    ordered = [1, 2, 3, 4]
    score = {1: 1.0, 2: 0.95, 3: 0.9, 4: 0.85}
    chess, tennis = _unit(1, 0.05, 0), _unit(0.2, 1, 0)
    vectors = {1: chess, 2: _unit(1, 0.06, 0.01), 3: _unit(1, 0.04, 0.02), 4: tennis}
    assert spread_out(ordered, score, vectors, 0.65) == [1, 4, 2, 3]
    assert spread_out(ordered, score, vectors, 0.0) == ordered
    # A unit without a vector is like no other: never held back, never holding others back.
    assert spread_out(ordered, score, {1: chess, 2: chess, 4: tennis}, 0.65) == [1, 3, 4, 2]
    assert spread_out([], {}, {}, 0.65) == [] and spread_out([7], {7: 1.0}, {}, 0.65) == [7]


ASKING_FOR_ALL = (
    "Which trips has Peter taken?",
    "What decisions were made about payments-service?",
    "Which releases of payments-service were deployed?",
    "What are Peter's preferences?",
)


def test_a_question_asking_for_all_is_spread_out_on_the_real_index(indexed):
    """rrf-v6 on real SQLite files: the pool's stored vectors are read back (vec0 or the plain
    table), the order is spread out, and -k n is still the first n of -k 20."""
    from datetime import date

    today = date(2025, 11, 28)
    mem = open_workspace(indexed, environ={"CLAWMEM_MIN_RELEVANCE": "0"})
    off = fusion.Ranking(question_factor=1.0, aggregate_spread_weight=0.0)
    moved = 0
    for question in ASKING_FOR_ALL:
        res = mem.recall(question, k=20, today=today, sync=False)
        assert res.ranking == "rrf-v20"
        plain = mem.recall(question, k=20, today=today, sync=False, ranking=off)
        # The same pool (cut by k, it may keep other units), another order.
        moved += [h.citation for h in res.hits] != [h.citation for h in plain.hits]
        for n in (1, 3, 7):
            small = mem.recall(question, k=n, today=today, sync=False)
            assert [h.citation for h in small.hits] == [h.citation for h in res.hits[:n]]
            assert [h.score for h in small.hits] == [h.score for h in res.hits[:n]]
    assert moved, "the spread changed no order on the fixture"
    ix = mem.indexer
    idx = ix.open_for_read()
    try:
        ids = [r[0] for r in idx.conn.execute("SELECT id FROM chunks WHERE embedded = 1 LIMIT 5")]
        got = legs.vectors_of(idx, [*ids, -1])
        assert sorted(got) == sorted(ids)  # a unit with no vector is left out
        assert all(len(v) == len(next(iter(got.values()))) > 0 for v in got.values())
    finally:
        ix.release(idx)
    mem.close()
