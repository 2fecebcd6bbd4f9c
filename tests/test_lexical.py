"""Lexical recall in every script, on the real fixture workspace (no model needed)."""

import json

import pytest

from clawmem.text.textnorm import build_query, search_text

from .conftest import cli

pytestmark = pytest.mark.usefixtures("lexical")


def recall(ws, query, *extra):
    r = cli("-w", str(ws), "recall", query, "--json", "--mode", "lexical", *extra)
    assert r.code == 0, r.err
    return json.loads(r.out)


def paths(res):
    return [h["citation"] for h in res["results"]]


def test_normaliser_folds_scripts():
    assert search_text("Hà Nội ĐẶT LỊCH") == "ha noi dat lich"
    assert search_text("東京駅") == " 東京 京駅 "
    assert "ービ" in search_text("サービス")  # kana voicing marks are kept


@pytest.mark.parametrize(
    "query",
    [
        '"',
        "(",
        ")",
        "AND",
        "NOT",
        "*",
        "-",
        ":",
        'a "b" (c) AND NOT d* -e :f',
        "NEAR(x y)",
        "^",
        "{}",
        "OR OR",
    ],
)
def test_fts_syntax_in_queries_is_inert(ws, query):
    res = recall(ws, query)
    assert isinstance(res["results"], list)  # no FTS5 syntax error reached the user


def test_punctuation_only_query_explains(ws):
    res = recall(ws, "?!...")
    assert res["results"] == []
    assert "no searchable terms" in res["empty_reason"]


@pytest.mark.parametrize(
    "query, expected_path",
    [
        ("payment_processor", None),
        ("DEC-0054", None),
        ("src/memory/hybrid.ts", None),
        ("v2.3.1", "memory/2025-11-12.md"),
    ],
)
def test_identifiers_match_as_typed(ws, query, expected_path):
    res = recall(ws, query)
    assert res["results"], query
    top = res["results"][0]
    text = (top["snippet"] + top.get("content", "")).lower()
    assert query.lower() in text
    if expected_path:
        assert any(h["path"] == expected_path for h in res["results"])


def test_vietnamese_with_and_without_diacritics(ws):
    with_marks = recall(ws, "đặt lịch họp Hà Nội")
    without = recall(ws, "dat lich hop ha noi")
    assert with_marks["results"] and without["results"]
    assert paths(with_marks) == paths(without)
    assert with_marks["results"][0]["path"] == "memory/2025-11-18.md"


def test_japanese_matches(ws):
    res = recall(ws, "決済サービス")
    assert res["results"]
    assert all("決済サービス" in (h["snippet"] + h.get("content", "")) for h in res["results"][:2])
    single = recall(ws, "東京")
    assert single["results"]


def test_bm25_scores_are_normalised_and_ordered(ws):
    res = recall(ws, "Hetzner")
    scores = [h["score"] for h in res["results"]]
    assert scores and all(0 < s < 1 for s in scores)
    assert scores == sorted(scores, reverse=True)


def test_relaxed_query_says_so(ws):
    res = recall(ws, "Hetzner zebra-unicorn-nonexistent")
    assert res["relaxed"] is True
    assert res["results"]
    assert any("some of them" in n for n in res["notes"])


def test_ties_break_deterministically(ws):
    first = recall(ws, "Peter")
    for _ in range(3):
        assert paths(recall(ws, "Peter")) == paths(first)


def test_citations_are_exact_line_ranges(ws):
    res = recall(ws, "DEC-0054", "-k", "10")
    for h in res["results"]:
        lines = (ws / h["path"]).read_text(encoding="utf-8").split("\n")
        cited = "\n".join(lines[h["start_line"] - 1 : h["end_line"]])
        if h["type"] == "fact":
            assert h["content"] in cited
        else:
            assert h["snippet"].rstrip("…").lstrip("…")[:80] in cited


def test_build_query_quotes_every_term():
    q = build_query('he said "stop" AND (go) NOT *x* payment_processor')
    for term in q.terms:
        assert term.startswith('"')
    assert '"payment processor"' in q.terms


@pytest.mark.parametrize(
    "query, strong",
    [
        ("DEC-0054", '"dec 0054"'),
        ("payment_processor", '"payment processor"'),
        ("v2.3.1", '"v2 3 1"'),
        ("src/memory/hybrid.ts", '"src memory hybrid ts"'),
        ("p53 in stem cells", '"p53"'),
        ("IL-6 levels", '"il 6"'),
        ("COVID-19 vaccines", '"covid 19"'),
        # A hyphenated compound of letters is a word of the language, not an identifier...
        ("long-term effects", None),
        ("self-renewal of stem cells", None),
        ("payments-service", None),
        # ...unless the user quotes it.
        ('"payments-service"', '"payments service"'),
    ],
)
def test_which_terms_are_identifiers(query, strong):
    assert build_query(query).strong == strong


def _indexed_log(tmp_path, *lines: str):
    """A workspace of one daily log holding ``lines``, indexed through the CLI."""
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    body = "".join(f"{line}\n" for line in lines)
    (ws / "memory" / "2025-01-02.md").write_text(f"# 2025-01-02\n\n{body}", encoding="utf-8")
    assert cli("-w", str(ws), "index").code == 0
    return ws


def test_a_hyphenated_word_does_not_jump_the_queue(tmp_path):
    """Only identifiers and quoted phrases put the units holding them first. A compound such as
    "long-term" is ranked by BM25 like any other word: the unit holding the rarer terms of the
    query wins; quoted, the compound comes first."""
    ws = _indexed_log(
        tmp_path,
        "- The long-term roadmap was shared with the board.",
        "- Backup retention for the archive is ninety days.",
        "- Lunch was at noon.",
    )
    first = recall(ws, "long-term backup retention archive")["results"][0]
    assert "Backup retention" in first["snippet"]
    quoted = recall(ws, '"long-term" backup retention archive')["results"][0]
    assert "long-term roadmap" in quoted["snippet"]


@pytest.mark.parametrize(
    "query, terms",
    [
        ("What are Elise's hobbies?", ('"elise"', '"hobbies"')),
        ("Kate’s dog", ('"kate"', '"dog"')),  # a typographic apostrophe
        # Keys typed for an apostrophe: a backtick, an acute accent, a left quote.
        ("Emi`s travel list", ('"emi"', '"travel"', '"list"')),
        ("Emi´s travel list", ('"emi"', '"travel"', '"list"')),
        ("Emi‘s list", ('"emi"', '"list"')),
        ("Is Elise's?", ('"elise"',)),
        ("we'll meet Bob", ('"meet"', '"bob"')),  # "we" is a stopword
        ("the parents' house", ('"parents"', '"house"')),
        # Not a clitic: the apostrophe joins the word's own parts, which stay one phrase...
        ("O'Brien", ('"o brien"',)),
        ("don't", ('"don t"',)),
        # ...and a quoted phrase is taken as typed.
        ('"Elise\'s"', ('"elise s"',)),
    ],
)
def test_a_possessive_asks_about_the_word(query, terms):
    assert build_query(query).terms == terms


def test_a_possessive_finds_the_person_however_the_note_names_them(tmp_path):
    """ "Elise's" in a question used to become the phrase "elise s", which matches only text
    that also says "Elise's": never the lines Elise wrote, nor those that name her."""
    ws = _indexed_log(
        tmp_path,
        "- Elise: I painted all weekend long, the lake at dawn and the hills at dusk.",
        "- Kevin: Elise said the gallery by the river opens its doors in May.",
        "- Kevin: The water park was closed for the whole of the winter season.",
    )
    found = [h["snippet"] for h in recall(ws, "What are Elise's plans?")["results"]]
    # Both lines that name her first (the third comes in only through its neighbours' text).
    assert sorted(found[:2]) == [
        "- Elise: I painted all weekend long, the lake at dawn and the hills at dusk.",
        "- Kevin: Elise said the gallery by the river opens its doors in May.",
    ]


def test_folding_ascii_takes_a_shortcut_to_the_same_result():
    """fold() skips Unicode normalisation for ASCII text; the result must be what the full path
    gives, for every ASCII character."""
    from hypothesis import given
    from hypothesis import strategies as st

    from clawmem.text.textnorm import _fold_unicode, fold

    everything = "".join(chr(i) for i in range(128))
    assert fold(everything) == _fold_unicode(everything)

    @given(st.text(alphabet=st.characters(max_codepoint=127)))
    def same(text: str) -> None:
        assert fold(text) == _fold_unicode(text)

    same()
    assert fold("Hà Nội ĐÀ") == _fold_unicode("Hà Nội ĐÀ") == "ha noi da"


def _common_word_workspace(tmp_path, n=400):
    """Daily logs where "update" is on every line, "status" on half, "review" on a fifth, and a
    few rarer words are scattered, at different frequencies and line lengths."""
    import random

    rng = random.Random(16)
    ws = tmp_path / "common"
    (ws / "memory").mkdir(parents=True)
    rare = ["quokka", "ibex", "narwhal", "tapir"]
    for day in range(n // 20):
        lines = [f"# Day {day}", ""]
        for i in range(20):
            words = ["update", f"item{day}x{i}"]
            words += ["status"] * (rng.random() < 0.5) + ["review"] * (rng.random() < 0.2)
            words += rng.sample(rare, rng.choice([0, 0, 1, 2]))
            words += ["update"] * rng.choice([0, 1, 2])  # different term frequencies
            words += ["filler"] * rng.choice([0, 0, 3, 8])  # and lengths
            rng.shuffle(words)
            lines.append("- " + " ".join(words))
        (ws / "memory" / f"2025-01-{day + 1:02d}.md").write_text("\n".join(lines) + "\n")
    assert cli("-w", str(ws), "index", "--quiet").code == 0
    return ws


QUERIES = [
    "quokka update",
    "ibex narwhal update",
    "tapir quokka update",
    "status review",
    "review quokka status update",
    "narwhal status",
    "update status",
    "okapi quokka update",  # a word no row holds
]


def test_ranking_only_the_rows_that_can_make_the_list_changes_no_result(tmp_path, monkeypatch):
    """On a large index the lexical leg scores only the rows that can reach the list
    (bm25_topk); its answer is the whole OR query's, exactly: ids, order and scores."""
    from clawmem.memory import open_workspace
    from clawmem.recall import bm25_topk, legs
    from clawmem.store.index import Filters

    ws = _common_word_workspace(tmp_path)
    idx = open_workspace(ws).indexer.open_for_read()
    monkeypatch.setattr(bm25_topk, "MIN_ROWS", 50)  # this small index stands for a large one
    real = bm25_topk.top
    pruned = 0
    for query in QUERIES:
        q = build_query(query)
        for limit in (1, 5, 20, 60):
            for f in (Filters(), Filters(since="2025-01-05")):
                monkeypatch.setattr(bm25_topk, "top", real)
                new = legs.lexical_leg(idx, q, f, limit)
                monkeypatch.setattr(bm25_topk, "top", lambda *a: None)
                old = legs.lexical_leg(idx, q, f, limit)
                assert [(h.chunk_id, h.rank, h.score) for h in new[0]] == [
                    (h.chunk_id, h.rank, h.score) for h in old[0]
                ], (query, limit, f)
                assert new[1] == old[1]
        # How many rows the plan scored, against the rows holding any of the query's terms.
        asked: list[str] = []

        def ranked(match: str, limit: int = 20, asked: list[str] = asked) -> list:
            asked.append(match)
            return idx.conn.execute(
                "SELECT rowid, bm25(chunks_fts) AS r FROM chunks_fts WHERE chunks_fts MATCH ? "
                "ORDER BY r, rowid LIMIT ?",
                (match, limit),
            ).fetchall()

        if real(idx, q.any_terms.split(" OR "), 20, ranked, (1.0, 1.0, 1.0)) is not None:

            def rows(match: str) -> int:
                sql = "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?"
                return idx.conn.execute(sql, (match,)).fetchone()[0]

            pruned += sum(rows(m) for m in asked) < rows(q.any_terms)
    idx.close()
    assert pruned >= 3  # most of these queries leave rows unscored


def test_phrase_counts_are_remembered_only_while_the_index_is_unchanged(tmp_path):
    """bm25_topk.phrase_rows answers a repeated question from memory, until anyone commits: a
    process that keeps its index open sees another process's writes, and its own."""
    from clawmem.memory import open_workspace
    from clawmem.recall import bm25_topk

    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "2025-01-01.md").write_text("# Day\n\n- the quokka smiled\n")
    assert cli("-w", str(ws), "index", "--quiet").code == 0
    idx = open_workspace(ws).indexer.open_for_read()
    try:
        assert bm25_topk.phrase_rows(idx, '"quokka"') == 1
        (ws / "memory" / "2025-01-02.md").write_text("# Day\n\n- another quokka\n")
        assert cli("-w", str(ws), "index", "--quiet").code == 0  # another process commits
        assert bm25_topk.phrase_rows(idx, '"quokka"') == 2
    finally:
        idx.close()


@pytest.mark.parametrize(
    ("query", "terms"),
    [
        # rrf-v18: the closing verb of "how long … take / last" is the question's form, not its
        # topic (the answer says "took fifty minutes"): left out like a stopword...
        ("how long did the rehearsal take?", ('"long"', '"rehearsal"')),
        ("How long does the backup last", ('"long"', '"backup"')),
        # ...unless the word is also the topic, or is not the closing verb.
        ("how long did her last visit to Oslo last?", ('"long"', '"last"', '"visit"', '"oslo"')),
        ("how long to take the pills?", ('"long"', '"take"', '"pills"')),
        ("take the PDF template", ('"take"', '"pdf"', '"template"')),
    ],
)
def test_how_long_did_it_take_does_not_search_take(query, terms):
    assert build_query(query).terms == terms
