"""store/term_bounds.py: each term's most it can add to a row's BM25 score, kept as rows reach
chunks_fts, and the lexical leg's pruning with it (real SQLite files, the CLI's indexing)."""

import random

import pytest

from clawmem.memory import open_workspace
from clawmem.recall import bm25_topk, fusion, legs
from clawmem.store import term_bounds
from clawmem.store.index import Filters
from clawmem.text.textnorm import build_query

from .conftest import cli

pytestmark = pytest.mark.usefixtures("lexical")


def _workspace(tmp_path, days=30, seed=43):
    """Daily logs of frequent words ("deploy" on most lines, "cache" on half, "budget" on a
    fifth) with a few rarer ones, at different counts, headings and lengths."""
    rng = random.Random(seed)
    ws = tmp_path / "freq"
    (ws / "memory").mkdir(parents=True)
    for day in range(days):
        lines = [f"# Day {day}", "", f"## {rng.choice(['deploy', 'cache', 'notes'])}", ""]
        for i in range(20):
            words = [f"item{day}x{i}"]
            words += ["deploy"] * rng.choice([0, 1, 1, 2, 3])
            words += ["cache"] * (rng.random() < 0.5) + ["budget"] * (rng.random() < 0.2)
            words += rng.sample(["kyoto", "omar", "quota", "ibex"], rng.choice([0, 0, 1, 2]))
            words += ["filler"] * rng.choice([0, 0, 3, 12])
            rng.shuffle(words)
            lines.append("- " + " ".join(words))
        (ws / "memory" / f"2025-02-{day % 28 + 1:02d}-{day}.md").write_text("\n".join(lines) + "\n")
    assert cli("-w", str(ws), "index", "--quiet").code == 0
    return ws


def _true_impacts(idx, weights=term_bounds.WEIGHTS):
    """Each term's largest single-term bm25() over the index now, divided by its IDF: what a
    bound must never be below."""
    conn = idx.conn
    n_rows, _ = term_bounds.averages(conn)
    conn.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.v_row USING fts5vocab(main, chunks_fts, row)"
    )
    out = {}
    w = ", ".join(f"{x:g}" for x in weights)
    for term, df in conn.execute("SELECT term, doc FROM temp.v_row").fetchall():
        if [t for t, *_ in term_bounds.tokenize([(1, term, "", "")])] != [term]:
            continue  # the stemmer would cut it again: it cannot be asked for alone
        (r,) = conn.execute(
            f"SELECT {w and 'bm25(chunks_fts, ' + w + ')'} AS r FROM chunks_fts "
            "WHERE chunks_fts MATCH ? ORDER BY r LIMIT 1",
            (f'"{term}"',),
        ).fetchone()
        out[term] = -r / term_bounds.idf(n_rows, df)
    return out


def _bounds_now(idx):
    _, avgdl = term_bounds.averages(idx.conn)
    phrases = [f'"{t}"' for (t,) in idx.conn.execute("SELECT term FROM term_bounds")]
    got = term_bounds.phrase_bounds(idx.conn, phrases, term_bounds.WEIGHTS, avgdl)
    return {p.strip('"'): g for p, g in got.items()}


def test_the_ranking_weights_are_the_bounds_weights():
    r = fusion.Ranking()
    assert (1.0, r.heading_weight, r.context_weight) == term_bounds.WEIGHTS


def test_every_bound_holds_and_is_tight_after_edits_and_appends(tmp_path):
    """Each term's bound is at least its real largest contribution (the index as it stands, by
    bm25() itself), after a fresh index, an edited file, a deleted one and an appended one; and
    on a fresh index no looser than 5% for the terms the logs repeat."""
    ws = _workspace(tmp_path)
    idx = open_workspace(ws).indexer.open_for_read()
    true, bound = _true_impacts(idx), _bounds_now(idx)
    idx.close()
    assert set(true) <= set(bound) | {"2025"}  # every term a query can name is bounded
    for term, g in true.items():
        if term in bound:
            assert bound[term] >= g * (1 - 1e-9), term
    for term, *_ in term_bounds.tokenize([(1, "deploy cache budget kyoto", "", "")]):
        assert bound[term] <= true[term] * 1.05, term
        assert bound[term] < (term_bounds.K1 + 1) * 0.9  # far below the generic bound

    day = ws / "memory" / "2025-02-01-0.md"
    day.write_text(day.read_text() + "- deploy deploy deploy deploy deploy kyoto\n- ok\n")
    (ws / "memory" / "2025-02-02-1.md").unlink()
    (ws / "memory" / "2025-03-01.md").write_text("# Mar\n\n- budget budget budget\n")
    assert cli("-w", str(ws), "index", "--quiet").code == 0
    idx = open_workspace(ws).indexer.open_for_read()
    true, bound = _true_impacts(idx), _bounds_now(idx)
    idx.close()
    for term, g in true.items():
        if term in bound:
            assert bound[term] >= g * (1 - 1e-9), term


def test_rebuild_gives_the_bounds_note_kept(tmp_path):
    """term_bounds.rebuild (the migration of an index made before the table) recomputes, from
    the index alone, what note kept row by row (the same reference length: a fresh index)."""
    ws = _workspace(tmp_path, days=10)
    idx = open_workspace(ws).indexer.open_for_read()
    kept = dict(idx.conn.execute("SELECT term, gmax FROM term_bounds"))
    ref = term_bounds.reference(idx.conn)
    idx.close()
    from clawmem.store import db

    conn, _ = db.connect(ws / ".memory" / "index.sqlite")
    n = term_bounds.rebuild(conn)
    again = dict(conn.execute("SELECT term, gmax FROM term_bounds"))
    new_ref = term_bounds.reference(conn)
    conn.close()
    assert n == len(again) and n > 20
    assert new_ref["weights"] == ref["weights"]
    # note's reference is the first rows' average length, rebuild's the whole index's: compare
    # at one length through the drift rule, for the terms both hold.
    for term, g in again.items():
        if term in kept:
            drift = max(1.0, new_ref["avgdl"] / ref["avgdl"])
            assert min(term_bounds.K1 + 1, kept[term] * drift) >= g * (1 - 1e-6), term


QUERIES = [
    "kyoto deploy",
    "omar kyoto cache",
    "deploy cache budget",
    "quota budget deploy cache",
    "cache",
    "ibex omar",
    "budget deploy",
    "okapi deploy cache",  # a word no row holds
]


def test_pruned_lexical_leg_returns_exactly_the_full_ranking(tmp_path, monkeypatch):
    """With the bounds, the lexical leg on an index of frequent terms gives exactly the whole OR
    query's answer (ids, ranks, scores), under filters and at several depths; and it scores
    fewer rows than the generic bound lets it (the bounds are what prune)."""
    ws = _workspace(tmp_path)
    idx = open_workspace(ws).indexer.open_for_read()
    monkeypatch.setattr(bm25_topk, "MIN_ROWS", 50)  # this small index stands for a large one
    real = bm25_topk.top
    for query in QUERIES:
        q = build_query(query)
        for limit in (1, 5, 20, 60):
            for f in (Filters(), Filters(since="2025-02-10")):
                monkeypatch.setattr(bm25_topk, "top", real)
                new = legs.lexical_leg(idx, q, f, limit)
                monkeypatch.setattr(bm25_topk, "top", lambda *a: None)
                old = legs.lexical_leg(idx, q, f, limit)
                # Scores within a tolerance: the plan's queries name the phrases in another
                # order, so bm25() adds the same terms in another order (the last bit may
                # differ, and rounding could split two such values at a boundary).
                assert [(h.chunk_id, h.rank) for h in new[0]] == [
                    (h.chunk_id, h.rank) for h in old[0]
                ], (query, limit, f)
                assert [h.score for h in new[0]] == pytest.approx(
                    [h.score for h in old[0]], rel=1e-9, abs=1e-12
                ), (query, limit, f)
    monkeypatch.setattr(bm25_topk, "top", real)

    bm25 = "bm25(chunks_fts, 1, 0.4, 0.5)"

    def scored(generic: bool) -> int:
        rows = 0
        for query in QUERIES:
            asked: list[str] = []

            def ranked(match: str, asked: list[str] = asked) -> list:
                asked.append(match)
                return idx.conn.execute(
                    f"SELECT rowid, {bm25} AS r FROM chunks_fts WHERE chunks_fts MATCH ? "
                    "ORDER BY r, rowid LIMIT 20",
                    (match,),
                ).fetchall()

            if generic:
                monkeypatch.setattr(term_bounds, "phrase_bounds", lambda *a: {})
            got = real(idx, build_query(query).any_terms.split(" OR "), 20, ranked)
            monkeypatch.undo()
            monkeypatch.setattr(bm25_topk, "MIN_ROWS", 50)
            count = "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?"
            if got is None:
                asked = [build_query(query).any_terms]
            rows += sum(idx.conn.execute(count, (m,)).fetchone()[0] for m in asked)
        return rows

    assert scored(generic=False) < scored(generic=True)
    idx.close()


def test_other_weights_get_the_generic_bound(tmp_path):
    ws = _workspace(tmp_path, days=5)
    idx = open_workspace(ws).indexer.open_for_read()
    _, avgdl = term_bounds.averages(idx.conn)
    assert term_bounds.phrase_bounds(idx.conn, ['"deploy"'], term_bounds.WEIGHTS, avgdl)
    assert term_bounds.phrase_bounds(idx.conn, ['"deploy"'], (1.0, 1.0, 1.0), avgdl) == {}
    idx.close()


def test_phrases_are_cut_as_the_index_cuts_them():
    """'"migrations"' is looked up as the index's stem; a phrase of several words by each."""
    rows = term_bounds.tokenize([(1, "migrations", "", ""), (2, "edge proxy", "", "")])
    assert sorted((t, d) for t, d, _c, _n in rows) == [("edg", 2), ("migrat", 1), ("proxi", 2)]
