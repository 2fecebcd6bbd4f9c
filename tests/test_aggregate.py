"""Questions that ask for all of something (recall/aggregate.py), told apart by their form, and
what recall does with them: the lines and facts of the person asked about come first."""

from __future__ import annotations

import pytest

from clawmem import open_workspace
from clawmem.recall.aggregate import speaker, without_names
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


def test_tell_me_about_peter_shows_his_page_then_facts_about_him(indexed):
    mem = open_workspace(indexed, environ={})
    res = mem.recall("tell me about Peter", k=6)
    assert res.hits[0].path == "bank/entities/Peter.md"
    direct = [h for h in res.hits[1:4] if h.via is None]
    assert direct and all(h.kind is not None and "Peter" in h.entities for h in direct)
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
        ("What did we decide about DEC-0054?", "What did we decide about DEC-0054?"),
        ("what are kate's hobbies?", "what are kate's hobbies?"),  # no capital: no name read
    ],
)
def test_a_question_without_its_names(question, content):
    q = Query.parse(question, None)
    assert without_names(q.text, q.names) == content


def test_a_question_asking_for_all_about_someone_is_also_ranked_without_the_name(indexed):
    """The third leg (rrf-v5): it runs for such a question only, on the vector leg, and says so."""
    mem = open_workspace(indexed, environ={"CLAWMEM_MIN_RELEVANCE": "0"})
    res = mem.recall("Which trips has Peter taken?", k=6)
    assert "asks for all of something: also ranked as 'Which trips has taken?'" in res.notes
    assert res.ranking == "rrf-v5"
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
