"""Questions that ask for all of something (recall/aggregate.py), told apart by their form, and
what recall does with them: the lines and facts of the person asked about come first."""

from __future__ import annotations

import pytest

from clawmem import open_workspace
from clawmem.recall.aggregate import speaker
from clawmem.text.query import asks_for_all


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
