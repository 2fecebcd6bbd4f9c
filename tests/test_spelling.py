"""A name written another way is a name the memory knows (text/spelling.py), in relevance and in
the ranking's person boost; a name it never saw still is not."""

from __future__ import annotations

from datetime import date

import pytest

from clawmem import open_workspace
from clawmem.text.query import names
from clawmem.text.spelling import names_in, same_name, spelled_as

TODAY = date(2025, 3, 1)


@pytest.mark.parametrize(
    ("asked", "written"),
    [
        ("muhammad", "mohammed"),  # sounds alike (Metaphone MHMT)
        ("mohamad", "muhammad"),
        ("steven", "stephen"),
        ("nikolas", "nicolas"),
        ("petr", "peter"),  # one slip
        ("sara", "sarah"),
        ("katrina", "katarina"),
        ("nerlaa", "nelraa"),  # two letters swapped
    ],
)
def test_another_spelling_of_a_known_name_matches(asked, written):
    assert same_name(asked, written)


@pytest.mark.parametrize(
    ("asked", "written"),
    [
        ("mohammed", "monday"),  # Soundex would say M530 for both
        ("christopher", "christmas"),
        ("galveston", "globes"),
        ("moon", "money"),  # a sound key of two sounds says too little
        ("paola", "pool"),
        ("kevin", "keeping"),
        ("catherine", "katherine"),  # another first letter: left out on purpose
        ("leo", "lea"),  # under four letters
        ("dec0054", "dec0055"),  # identifiers are exact
    ],
)
def test_other_names_and_words_do_not(asked, written):
    assert not same_name(asked, written)


def test_the_names_a_note_writes_are_inner_capitals_and_mentions():
    text = "Met Akib and @Sarah at the Louvre. Then we left with Élodie, NASA and Bob"
    assert names_in(text) == {"akib", "sarah", "louvre", "elodie"}  # not "Met", "Then", NASA, Bob
    assert spelled_as("muhammad", {"mohammed", "mark", "mohamad"}) == "mohamad"  # fewest edits
    assert spelled_as("kevin", {"kate", "keeping"}) is None


def test_the_proper_names_of_a_question_are_its_people_and_places():
    q = "Did Kevin fly to Crete with @linh on the A380 via the USA, for IL-10 or Africa-based work?"
    assert names(q) == ["kevin", "crete", "linh", "a380", "usa", "il 10", "africa based"]
    assert names(q, proper_only=True) == ["kevin", "crete", "linh"]


@pytest.fixture
def chat(tmp_path, lexical, abstaining):
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    days = {
        "2025-02-18": [
            "- Lena: How was the first week at the new job?",
            "- Mohammed: Tiring. The warehouse opens at seven so the alarm rings at six.",
            "- Lena: Ouch. I start at nine and I still complain.",
            "- Mohammed: The bus takes forty minutes, I read on the way.",
            "- Lena: What are you reading?",
            "- Mohammed: A history of the Silk Road, slowly.",
        ],
        "2025-02-20": [
            "- Mohammed: I wake up at six every weekday now, even my cat gave up on me.",
            "- Lena: Do you sleep in on Sundays at least?",
            "- Mohammed: Until nine, then football with my cousins in the park.",
            "- Lena: My alarm is at eight and I still wake up tired.",
            "- Lena: I baked bread yesterday, it came out flat again.",
            "- Mohammed: Maybe the yeast was old?",
        ],
        "2025-02-24": [
            "- Lena: The concert on Friday was amazing, the violinist was nineteen!",
            "- Mohammed: I missed it, my shift ran late.",
            "- Lena: Next time. They play again in April.",
            "- Mohammed: Put me down for April then.",
        ],
    }
    for day, lines in days.items():
        (ws / "memory" / f"{day}.md").write_text(f"# {day}\n\n" + "\n".join(lines) + "\n")
    mem = open_workspace(ws)
    mem.index()
    yield mem
    mem.close()


def test_a_question_spelling_a_speaker_another_way_is_answered_with_their_lines(chat):
    res = chat.recall("When does Muhammad wake up?", today=TODAY, min_relevance=0)
    assert res.hits[0].features.unknown_names == res.hits[0].features.unknown_proper == 0.0
    assert "- Mohammed: I wake up at six" in res.hits[0].text
    stranger = chat.recall("When does Kevin wake up?", today=TODAY, min_relevance=0)
    assert stranger.hits[0].features.unknown_proper == 1.0
    assert res.relevance["best"] > 5 * stranger.relevance["best"]

    # The person boost follows the notes' spelling: Mohammed's line scores twice what it scores
    # when the question names a stranger (fusion.Ranking.person_boost = 1), Lena's the same.
    def score(question: str, line: str) -> float:
        hits = chat.recall(question, today=TODAY, min_relevance=0, k=20).hits
        return next(h.score for h in hits if line in h.text)

    mo, lena = "- Mohammed: Until nine", "- Lena: Do you sleep in"
    known, stranger = "Does Muhammad sleep in on Sundays?", "Does Kevin sleep in on Sundays?"
    assert score(known, mo) == pytest.approx(2 * score(stranger, mo))
    assert score(known, lena) == pytest.approx(score(stranger, lena))


def test_a_name_the_memory_never_saw_is_still_refused(chat):
    res = chat.recall("When does Kevin wake up?", today=TODAY)
    assert res.hits == [] and res.empty_reason
    assert res.weak_hits[0].features.unknown_names == 1.0


def test_a_person_or_place_the_memory_never_heard_of_refuses_the_question(chat):
    """A question that also names a stranger or an unknown place cannot be answered by notes that
    know only the rest; an acronym or a code the notes do not write is a weaker sign (a claim may
    write a gene's name otherwise than its answer does)."""
    known = chat.recall("What is Mohammed reading on the bus?", today=TODAY)
    assert known.hits and known.hits[0].features.unknown_proper == 0.0
    place = chat.recall("What is Mohammed reading on the bus in Tashkent?", today=TODAY)
    assert (place.hits or place.weak_hits)[0].features.unknown_proper == 1.0
    assert place.relevance["best"] < known.relevance["best"] / 5
    acronym = chat.recall("What is Mohammed reading on the BRT?", today=TODAY, min_relevance=0)
    assert acronym.hits[0].features.unknown_proper == 0.0
    assert acronym.hits[0].features.unknown_names > 0.0


def test_over_notes_that_speak_of_no_one_an_unknown_capitalised_term_is_no_stranger(tmp_path):
    """Paper abstracts have no chat lines and no @mentions: a claim's "Passeriformes" that no
    abstract writes is a term they write another way ("passerine birds"), not a stranger's name.
    A structured abstract's "Background: ..." is no one speaking."""
    ws = tmp_path / "ws"
    (ws / "bank").mkdir(parents=True)
    (ws / "bank" / "birds.md").write_text(
        "# Song learning\n\n"
        "Background: passerine birds learn their songs from adult tutors during a sensitive"
        " period, and zebra finches raised without a tutor sing abnormal songs.\n"
    )
    (ws / "bank" / "mice.md").write_text(
        "# Maze\n\nMice trained in the water maze remembered the platform for weeks.\n"
    )
    mem = open_workspace(ws)
    mem.index()
    try:
        claim = "Young Passeriformes learn their songs from adult tutors."
        res = mem.recall(claim, min_relevance=0)
        assert "passerine birds" in res.hits[0].text
        assert res.hits[0].features.unknown_names > 0.0  # still a name no note writes
        assert res.hits[0].features.unknown_proper == 0.0
        assert mem.recall(claim).hits  # answered by default

        # The same notes with someone speaking in them: the unknown name may be a stranger.
        (ws / "memory").mkdir()
        (ws / "memory" / "2025-03-01.md").write_text(
            "# 2025-03-01\n\n- Lena: the finches in the lab sing every morning.\n"
        )
        mem.index()
        res = mem.recall(claim, min_relevance=0)
        assert res.hits[0].features.unknown_proper == 1.0
    finally:
        mem.close()
