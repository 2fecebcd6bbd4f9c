"""Units holding the identifiers a question asks about come first (ranking.rank), when the question
is about them: a short question, or a quoted phrase. A long question that names an identifier in
passing ("IL-6 signalling is required for ...") is ranked as fused (rrf-v7 on)."""

from __future__ import annotations

import pytest

from clawmem import open_workspace
from clawmem.recall.fusion import Ranking

LONG = (
    "IL-6 signalling is required for helper T cell development through the interleukin"
    " receptor in mice"
)


@pytest.fixture(scope="module")
def mem(tmp_path_factory):
    ws = tmp_path_factory.mktemp("exact") / "ws"
    (ws / "bank").mkdir(parents=True)
    (ws / "bank" / "serum.md").write_text(
        "# Serum\n\nIL-6 was measured in the serum of every patient at admission.\n"
    )
    (ws / "bank" / "helper.md").write_text(
        "# Helper T cells\n\nHelper T cell development requires interleukin receptor signalling"
        " in mice.\n"
    )
    (ws / "bank" / "cold.md").write_text(
        "# Cold\n\nMice kept in the cold lost weight over three weeks.\n"
    )
    m = open_workspace(ws, environ={"CLAWMEM_MIN_RELEVANCE": "0"})
    m.index()
    yield m
    m.close()


@pytest.mark.parametrize("mode", ["hybrid", "lexical"])
@pytest.mark.parametrize(
    ("question", "first"),
    [
        ("IL-6 in serum", "bank/serum.md"),  # short: the identifier is what is asked about
        (LONG, "bank/helper.md"),  # long: IL-6 named in passing, the answer ranks first
        ('"IL-6"' + LONG.removeprefix("IL-6"), "bank/serum.md"),  # quoted: asked for as written
    ],
)
def test_identifier_units_come_first_when_the_question_is_about_them(mem, mode, question, first):
    assert mem.recall(question, k=3, mode=mode).hits[0].path == first


def test_without_the_limit_every_question_puts_identifier_units_first(mem):
    always = Ranking(exact_first_max_terms=10**6)
    assert mem.recall(LONG, k=3, ranking=always).hits[0].path == "bank/serum.md"


def test_the_fact_an_identifier_opens_comes_before_one_naming_it_in_passing(tmp_path):
    """rrf-v10: among the Retain facts holding an identifier asked about, the one whose subject it
    is ("DEC-0054: …") comes first, before the fact that names it in passing."""
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "2025-11-13.md").write_text(
        "# 2025-11-13\n\n## Retain\n"
        "- B @Marta: I wrote DEC-0054 and a Helm chart for the move.\n"
        "- W: DEC-00541 is the follow-up ticket for the Helm chart.\n"
        "- W: DEC-0054: payments-service deploys to the Hetzner cluster from Nov 20.\n"
    )
    m = open_workspace(ws)
    m.index()
    hits = m.recall("DEC-0054", k=3, mode="lexical").hits
    assert hits[0].text.startswith("DEC-0054: payments-service"), [h.text for h in hits]


def test_a_fact_opens_with_an_identifier_in_whole_words_only():
    from clawmem.recall.ranking import _opens_with

    assert _opens_with("DEC-0054: payments-service deploys …", ("dec 0054",))
    assert _opens_with("v2.3.1 fixes the reconnect loop", ("v2 3 1",))
    assert not _opens_with("DEC-00541 is the follow-up ticket", ("dec 0054",))
    assert not _opens_with("I wrote DEC-0054 and a Helm chart", ("dec 0054",))
