"""store/term_lists.py: each term's rows in impact order, kept as rows reach and leave
chunks_fts, and the lexical leg ranked from them (recall/bm25_topk.from_lists): the same rows
and scores as bm25() over the whole OR, on real text and after edits, deletions and appends
(real SQLite files, the CLI's indexing)."""

import random
import shutil

import numpy as np
import pytest

from clawmem.memory import open_workspace
from clawmem.recall import bm25_topk, legs
from clawmem.store import db, term_bounds, term_lists
from clawmem.store.index import Filters
from clawmem.text.textnorm import build_query

from .conftest import FIXTURE, cli
from .test_sessions import OC, _message, sess  # noqa: F401 - sess: a fixture
from .test_term_bounds import _workspace

pytestmark = pytest.mark.usefixtures("lexical")


@pytest.fixture(autouse=True)
def lists_from_the_first_row(monkeypatch):
    """These small indexes stand for large ones: they keep lists from their first rows."""
    monkeypatch.setattr(term_lists, "FROM_ROWS", 0)


def _real_workspace(tmp_path):
    """The fixture workspace's notes (real prose, headings, facts) beside daily logs of
    frequent words, indexed by the CLI."""
    ws = _workspace(tmp_path, days=12)
    shutil.copytree(FIXTURE, ws, dirs_exist_ok=True)
    assert cli("-w", str(ws), "index", "--quiet").code == 0
    return ws


def _open(ws):
    return open_workspace(ws).indexer.open_for_read()


def _truth(conn):
    """{(term, rowid): (tfw in tenths, row length)} as chunks_fts holds it now."""
    conn.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.t_inst USING fts5vocab(main, chunks_fts, instance)"
    )
    tenths = dict(zip(("body", "heading", "context"), term_lists.TENTHS, strict=True))
    tfw: dict[tuple[str, int], int] = {}
    dl: dict[int, int] = {}
    for term, doc, col in conn.execute("SELECT term, doc, col FROM temp.t_inst"):
        tfw[(term, doc)] = tfw.get((term, doc), 0) + tenths[col]
        dl[doc] = dl.get(doc, 0) + 1
    return {k: (v, dl[k[1]]) for k, v in tfw.items()}


def _held(conn):
    """The lists' rows as {(term, rowid): (tfw, length)}, checking each part's shape: rowids
    ascending and within its first/last, its count, its bound, each row in its tier, the parts
    of a tier disjoint."""
    ref = term_lists.reference(conn)
    assert ref is not None and ref["ok"]
    names = dict(conn.execute("SELECT id, term FROM terms"))
    out = {}
    spans: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for term, tier, first, last, n, gmax, docs, tfw, lens in conn.execute(
        "SELECT term, tier, first, last, n, gmax, docs, tfw, dl FROM term_lists"
    ):
        d = np.frombuffer(docs, "<u4").astype(np.int64)
        f = np.frombuffer(tfw, "<u2").astype(np.int64)
        n_ = np.frombuffer(lens, "<u2").astype(np.int64)
        assert len(d) == n == len(f) == len(n_) and 0 < n <= term_lists.PART
        assert (np.diff(d) > 0).all() and d[0] == first and d[-1] == last
        g = term_lists.impact(f, n_, ref["avgdl"])
        assert gmax >= g.max() * (1 - 1e-12)
        assert tier == term_lists.TAIL or (term_lists.tier_of(g) == tier).all()
        spans.setdefault((term, tier), []).append((first, last))
        for doc, w, length in zip(d.tolist(), f.tolist(), n_.tolist(), strict=True):
            assert (names[term], doc) not in out
            out[(names[term], doc)] = (w, length)
    assert all(len(v) == 1 for (_, tier), v in spans.items() if tier == term_lists.TAIL)
    for parts in spans.values():
        parts.sort()
        assert all(a[1] < b[0] for a, b in zip(parts, parts[1:], strict=False))
    return out


def _edit(ws, rng):
    """An edited note (its units change and move), a deleted one, a new one."""
    logs = sorted((ws / "memory").glob("2025-02-*.md"))
    text = logs[0].read_text().splitlines()
    text[6:6] = [f"- kyoto budget cache {' '.join(['deploy'] * rng.randint(1, 4))} edited"]
    del text[10:13]
    logs[0].write_text("\n".join(text) + "\n")
    logs[1].unlink()
    (ws / "memory" / "2025-03-01.md").write_text(
        "# New\n\n## cache\n\n- quota quota budget omar\n- a deploy of the cache to kyoto\n"
    )
    assert cli("-w", str(ws), "index", "--quiet").code == 0


def _assert_same_answer(new, old, what) -> None:
    """The same rows at the same ranks, and the same scores (within 1e-9: summed in another
    order, float digits may differ)."""
    assert [(h.chunk_id, h.rank) for h in new[0]] == [(h.chunk_id, h.rank) for h in old[0]], what
    assert [h.score for h in new[0]] == pytest.approx(
        [h.score for h in old[0]], rel=1e-9, abs=1e-12
    ), what


@pytest.mark.parametrize("part", [1024, 8])
def test_lists_hold_exactly_the_index_after_edits_and_a_rebuild(tmp_path, monkeypatch, part):
    """Every row of chunks_fts is in its terms' lists with its count and length, nothing else,
    after a fresh index and after an edit, a deletion and a new note; and term_lists.rebuild
    makes the same lists from the index alone. With parts of 8 rows, tails go to their tiers
    and parts split and empty as rows come and go."""
    monkeypatch.setattr(term_lists, "PART", part)
    ws = _real_workspace(tmp_path)
    idx = _open(ws)
    assert _held(idx.conn) == _truth(idx.conn)
    idx.close()
    _edit(ws, random.Random(5))
    idx = _open(ws)
    kept = _held(idx.conn)
    assert kept == _truth(idx.conn)
    idx.close()
    conn, _ = db.connect(ws / ".memory" / "index.sqlite")
    assert term_lists.rebuild(conn) > 50
    assert _held(conn) == kept
    conn.close()


def _queries(conn, rng, n=14):
    """Questions of 1-4 words drawn from the index's own words at every frequency, some with a
    phrase of two words and a word no row holds."""
    conn.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.t_row USING fts5vocab(main, chunks_fts, row)"
    )
    vocab = [t for (t, c) in conn.execute("SELECT term, doc FROM temp.t_row") if t.isalpha()]
    vocab.sort()
    out = []
    for i in range(n):
        words = rng.sample(vocab, rng.randint(1, 4))
        if i % 5 == 0:
            words.append(rng.choice(["deploy", "cache", "budget"]))
        if i % 7 == 0:
            words.append('"deploy cache"')
        if i % 11 == 0:
            words.append("okapi")
        out.append(" ".join(words))
    return out


@pytest.mark.parametrize("part", [1024, 16])
def test_ranking_from_the_lists_is_the_whole_or(tmp_path, monkeypatch, part):
    """The lexical leg ranked from the lists gives the ids, ranks and scores (within the last
    bits) of bm25() over the whole OR, at several depths, on real text, before and after edits;
    the lists answer most questions, and read fewer rows than the terms hold."""
    monkeypatch.setattr(term_lists, "PART", part)
    ws = _real_workspace(tmp_path)
    monkeypatch.setattr(bm25_topk, "MIN_ROWS", 30)  # this small index stands for a large one
    real_from_lists, real_read = bm25_topk.from_lists, term_lists.read
    answered, rows_read, rows_held = 0, 0, 0
    asked = 0
    for round_ in range(2):
        if round_:
            _edit(ws, random.Random(9))
        idx = _open(ws)
        for query in _queries(idx.conn, random.Random(43 + round_)) + [
            "deploy cache budget",
            "kyoto deploy",
            "omar kyoto cache quota",
        ]:
            q = build_query(query)
            for limit in (1, 5, 20, 60):
                got: list = []

                def spy(*a, got=got):
                    got.append(real_from_lists(*a))
                    return got[-1]

                monkeypatch.setattr(bm25_topk, "from_lists", spy)
                new = legs.lexical_leg(idx, q, Filters(), limit)
                monkeypatch.setattr(bm25_topk, "from_lists", lambda *a: None)
                monkeypatch.setattr(bm25_topk, "top", lambda *a: None)
                old = legs.lexical_leg(idx, q, Filters(), limit)
                monkeypatch.undo()
                monkeypatch.setattr(bm25_topk, "MIN_ROWS", 30)
                monkeypatch.setattr(term_lists, "PART", part)
                monkeypatch.setattr(term_lists, "FROM_ROWS", 0)
                _assert_same_answer(new, old, (query, limit))
                asked += 1
                answered += bool(got) and got[-1] is not None
            # Rows read from the lists against the rows the question's terms hold.
            counted: list[int] = []

            def counting(conn, t, tier, counted=counted):
                out = real_read(conn, t, tier)
                counted.append(len(out[0]))
                return out

            monkeypatch.setattr(term_lists, "read", counting)
            phrases = q.any_terms.split(" OR ")
            if real_from_lists(idx, phrases, 10) is not None:
                rows_read += sum(counted)
                rows_held += sum(
                    bm25_topk.phrase_rows(idx, p)
                    for p, ts in term_bounds.phrase_tokens(phrases).items()
                    if len(ts) == 1
                )
            monkeypatch.setattr(term_lists, "read", real_read)
        idx.close()
    assert answered >= asked // 4, (answered, asked)  # the rest: too few rows to pay
    assert 0 < rows_read < rows_held * 0.8, (rows_read, rows_held)


def test_coverage_reads_what_the_lists_told_and_gives_fts5s_answer(tmp_path, monkeypatch):
    """The lexical leg ranked from the lists leaves each word's row count (the sum of its parts)
    and which of its rows hold each phrase; the coverage step reads them instead of asking FTS5,
    and gives exactly FTS5's shares, for the leg's rows and others, before and after edits."""
    ws = _real_workspace(tmp_path)
    monkeypatch.setattr(bm25_topk, "MIN_ROWS", 30)
    used = 0
    for round_ in range(2):
        if round_:
            _edit(ws, random.Random(5))
        idx = _open(ws)
        (top,) = idx.conn.execute("SELECT max(id) FROM chunks").fetchone()
        for query in _queries(idx.conn, random.Random(7 + round_)) + ["deploy cache budget"]:
            q = build_query(query)
            if len(q.terms) < 2:
                continue
            idx.read_memo.clear()
            hits, _ = legs.lexical_leg(idx, q, Filters(), 20)
            ids = [h.chunk_id for h in hits] + list(range(1, top + 1, 7))
            for p in q.terms:
                known, held = bm25_topk.known_holders(idx, p)
                used += len(known)
                assert held <= known
                memo = idx.read_memo.get("phrase_rows", {})  # none: the leg counted nothing
                if p in memo:
                    (n,) = idx.conn.execute(
                        "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", (p,)
                    ).fetchone()
                    assert memo[p] == n, p
            got = legs.coverage(idx, q, ids)
            idx.read_memo.clear()
            assert got == legs.coverage(idx, q, ids), query  # FTS5 alone, bit for bit
        idx.close()
    assert used  # the lists answered some questions, and coverage read what they told


def test_filters_and_small_indexes_keep_bm25(tmp_path, monkeypatch):
    """A filtered question and an index under MIN_ROWS rows are never ranked from the lists."""
    ws = _workspace(tmp_path, days=3)
    idx = _open(ws)
    assert bm25_topk.from_lists(idx, ['"deploy"', '"cache"'], 10) is None  # 60 rows < 20,000
    monkeypatch.setattr(bm25_topk, "MIN_ROWS", 10)
    assert bm25_topk.from_lists(idx, ['"deploy"', '"cache"'], 10) is not None
    monkeypatch.setattr(bm25_topk, "from_lists", lambda *a: pytest.fail("filtered"))
    legs.lexical_leg(idx, build_query("deploy cache"), Filters(since="2025-02-02"), 10)
    idx.close()


def test_lists_follow_a_transcript_append(sess, tmp_path, monkeypatch):  # noqa: F811
    """A transcript's append gives its last indexed message new context (its row leaves
    chunks_fts and comes back under the same rowid): the lists still hold exactly the index."""
    path = tmp_path / "transcripts" / "openclaw" / f"{OC}.jsonl"
    mem = open_workspace(sess, environ={"CLAWMEM_VECTORS": "0"})
    mem.index()
    idx = _open(sess)
    assert _held(idx.conn) == _truth(idx.conn)
    idx.close()
    gone: list = []
    real = term_lists.forget

    def forget(conn, tf, dl):
        gone.extend(dl)
        return real(conn, tf, dl)

    monkeypatch.setattr(term_lists, "forget", forget)
    with path.open("a", encoding="utf-8") as f:
        f.write("".join(_message(i, "user" if i % 2 else "assistant") for i in range(6)))
    assert mem.index().transcripts_appended == 1
    assert len(gone) == 1  # the last message, given new context
    idx = _open(sess)
    assert _held(idx.conn) == _truth(idx.conn)
    idx.close()


def test_an_everyday_index_keeps_no_lists_until_it_is_large(tmp_path, monkeypatch):
    """Below FROM_ROWS rows (bm25_topk.MIN_ROWS: no question is ranked from the lists there)
    an index keeps no lists and pays nothing for them; the sync that takes it past makes them
    from the index, and from then on they follow it row by row."""
    assert term_lists.FROM_ROWS == 0  # (this module's fixture)
    monkeypatch.undo()
    assert term_lists.FROM_ROWS == bm25_topk.MIN_ROWS
    ws = _workspace(tmp_path, days=4)
    idx = _open(ws)
    (top,) = idx.conn.execute("SELECT max(id) FROM chunks").fetchone()
    assert term_lists.reference(idx.conn) is None
    assert idx.conn.execute("SELECT count(*) FROM term_lists").fetchone()[0] == 0
    idx.close()
    monkeypatch.setattr(term_lists, "FROM_ROWS", top + 30)
    _edit(ws, random.Random(3))  # a new note of 2 rows, an edited and a deleted one: still under
    (ws / "memory" / "2025-03-02.md").write_text(
        "# More\n\n" + "".join(f"- deploy cache item{i} budget\n" for i in range(60))
    )
    assert cli("-w", str(ws), "index", "--quiet").code == 0
    idx = _open(ws)
    assert term_lists.reference(idx.conn) is not None
    assert _held(idx.conn) == _truth(idx.conn)
    idx.close()
    _edit(ws, random.Random(4))
    idx = _open(ws)
    assert _held(idx.conn) == _truth(idx.conn)
    idx.close()


def _compound_workspace(tmp_path, seed=7):
    """Daily logs where "edge proxy" is written as one phrase in many lines (once, twice, in a
    heading), where its two words stand apart in many others ("the proxy at the edge", "edge
    ... proxy"), and "settlement" and "outage" come and go: the phrase's count in a row is often
    below its words' least count, and in many rows holding both words it is 0."""
    rng = random.Random(seed)
    ws = tmp_path / "compound"
    (ws / "memory").mkdir(parents=True)
    forms = [
        "edge-proxy",
        "edge proxy",
        "edge-proxy and the edge-proxy again",
        "edge proxy edge",
        "proxy edge proxy",
        *["the proxy at the edge", "edge filler proxy", "edge", "proxy", "", ""] * 4,
    ]
    for day in range(14):
        head = rng.choice(["edge-proxy", *["notes"] * 4, "proxy edge"])
        lines = [f"# Day {day}", "", f"## {head}", ""]
        for i in range(24):
            words = [f"item{day}x{i}", rng.choice(forms)]
            words += ["settlement"] * rng.choice([0, 0, 1, 2]) + ["outage"] * (rng.random() < 0.3)
            words += ["filler"] * rng.choice([0, 0, 3, 12])
            rng.shuffle(words)
            lines.append("- " + " ".join(w for w in words if w))
        (ws / "memory" / f"2025-04-{day + 1:02d}.md").write_text("\n".join(lines) + "\n")
    assert cli("-w", str(ws), "index", "--quiet").code == 0
    return ws


def test_a_phrase_in_many_rows_is_bounded_by_its_words_and_ranked_exactly(tmp_path, monkeypatch):
    """A question naming a phrase of several words in many rows ("what did we decide about
    settlement for edge-proxy?": the phrase in 146,000 rows of 1M) is ranked from its words'
    lists (``with_compounds``): its count in a row is at most its words' least, and it is
    counted in the text of the rows that bound can still lift into the list. The same ids,
    ranks and scores (within the last bits) as bm25() over the whole OR, at several depths; the
    bound leaves most rows holding both words uncounted; and an index whose stored text no
    longer gives the lists' counts is ranked by bm25() instead, with the same answer."""
    ws = _compound_workspace(tmp_path)
    monkeypatch.setattr(bm25_topk, "MIN_ROWS", 30)  # this small index stands for a large one
    monkeypatch.setattr(bm25_topk, "LIST_FTS_ROWS", 10)  # and "edge proxy" for a common phrase
    idx = _open(ws)
    real_count, real_with = bm25_topk._ListQuery._count, bm25_topk._ListQuery.with_compounds
    counted: list[int] = []
    answered: list = []

    def counting(self, index, ids, lens, tfw):
        counted.append(len(ids))
        return real_count(self, index, ids, lens, tfw)

    def ranked(self, index, limit):
        answered.append(real_with(self, index, limit))
        return answered[-1]

    both = bm25_topk.phrase_rows(idx, '"edge" AND "proxy"')
    holding = bm25_topk.phrase_rows(idx, '"edge proxy"')
    assert holding > 40 and both > holding + 20  # many rows hold the words apart
    for query in (
        "what did we decide about settlement for edge-proxy?",
        "edge-proxy",
        "outage edge-proxy settlement",
        "proxy-edge settlement",
        "edge-proxy proxy-edge outage",
    ):
        q = build_query(query)
        for limit in (1, 5, 20, 60):
            counted.clear()
            answered.clear()
            monkeypatch.setattr(bm25_topk._ListQuery, "_count", counting)
            monkeypatch.setattr(bm25_topk._ListQuery, "with_compounds", ranked)
            new = legs.lexical_leg(idx, q, Filters(), limit)
            monkeypatch.setattr(bm25_topk._ListQuery, "_count", real_count)
            monkeypatch.setattr(bm25_topk._ListQuery, "with_compounds", real_with)
            old = _whole_or(idx, q, limit, monkeypatch)
            _assert_same_answer(new, old, (query, limit))
            assert answered and answered[-1] is not None, (query, limit)
            assert 0 < sum(counted) < both - 20, (query, limit, counted)  # the bound pruned
    # A bound that would leave more rows to count than the cap: bm25() ranks the question.
    q = build_query("settlement edge-proxy")
    answered.clear()
    with monkeypatch.context() as m:
        m.setattr(bm25_topk, "_COUNTED_MAX", 8)
        m.setattr(bm25_topk._ListQuery, "with_compounds", ranked)
        new = legs.lexical_leg(idx, q, Filters(), 20)
    assert answered == [None]
    old = _whole_or(idx, q, 20, monkeypatch)
    assert [(h.chunk_id, h.score) for h in new[0]] == [(h.chunk_id, h.score) for h in old[0]]
    # The text a unit holds now is not the text its row was indexed with: the counts the lists
    # hold are not found in it, and bm25() ranks the question.
    edge_rows = [
        r[0]
        for r in idx.conn.execute(
            "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH '\"edge proxy\"'"
        )
    ]
    idx.close()
    conn, _ = db.connect(ws / ".memory" / "index.sqlite")
    with conn:
        conn.executemany(
            "UPDATE chunks SET text = text || ' edge proxy' WHERE id = ?",
            [(r,) for r in edge_rows],
        )
    conn.close()
    idx = _open(ws)
    q = build_query("settlement edge-proxy")
    answered.clear()
    monkeypatch.setattr(bm25_topk._ListQuery, "with_compounds", ranked)
    new = legs.lexical_leg(idx, q, Filters(), 20)
    monkeypatch.setattr(bm25_topk._ListQuery, "with_compounds", real_with)
    assert answered == [None]
    old = _whole_or(idx, q, 20, monkeypatch)
    assert [(h.chunk_id, h.score) for h in new[0]] == [(h.chunk_id, h.score) for h in old[0]]
    idx.close()


def _whole_or(idx, q, limit, monkeypatch):
    """The lexical leg as bm25() over the whole OR gives it (no lists, no pruning)."""
    with monkeypatch.context() as m:
        m.setattr(bm25_topk, "from_lists", lambda *a: None)
        m.setattr(bm25_topk, "top", lambda *a: None)
        return legs.lexical_leg(idx, q, Filters(), limit)


def test_a_phrase_is_counted_as_fts5_counts_it(tmp_path):
    """term_bounds.phrase_counts gives each row's count of a phrase in each column as FTS5's
    own phrase query finds it (bm25() of the phrase alone, from its count, is the same), on
    rows where the phrase repeats, overlaps ("proxy edge proxy edge"), and its words stand
    apart."""
    ws = _compound_workspace(tmp_path, seed=11)
    idx = _open(ws)
    conn = idx.conn
    n_rows, avgdl = term_bounds.averages(conn)
    rows = [r[0] for r in conn.execute("SELECT id FROM chunks")]
    values = idx.lexical_rows(rows)
    assert len(values) == len(rows)
    for phrase in ('"edge proxy"', '"proxy edge"', '"edge proxy edge"'):
        seq = term_bounds.phrase_sequences([phrase])
        found, tf, dl = term_bounds.phrase_counts(values, seq)
        holders = bm25_topk.phrase_rows(idx, phrase)
        want = dict(
            conn.execute(
                "SELECT rowid, bm25(chunks_fts, 1.0, 0.4, 0.5) FROM chunks_fts "
                "WHERE chunks_fts MATCH ?",
                (phrase,),
            ).fetchall()
        )
        assert {d for (_, d) in found} == set(want) and holders == len(want) > 10
        idf = bm25_topk.idf(n_rows, holders)
        for (_, d), cols in found.items():
            f = sum(w * n for w, n in zip(term_bounds.WEIGHTS, cols, strict=True))
            norm = bm25_topk.K1 * (1 - term_bounds.B + term_bounds.B * dl[d] / avgdl)
            assert -want[d] == pytest.approx(idf * f * (bm25_topk.K1 + 1) / (f + norm), rel=1e-9)
    idx.close()
