"""Links between notes: the grammar (hypothesis), resolution order, the links table under
incremental sync, renames and deletes, and the commands that read it (links, check, recall)."""

from __future__ import annotations

import json
import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clawmem.markdown.links import KNOWN_RELATIONS, Resolver, extract_links, format_wikilink

from .conftest import cli

# ------------------------------------------------------------------------------ grammar

# What a person may write as a target, heading or label: anything but the characters that
# delimit a wikilink, with no space at either end (the grammar strips it).
_piece = st.text(
    st.characters(blacklist_characters="[]|#\n\r`\\\x00", blacklist_categories=("Cs", "Cc")),
    min_size=1,
    max_size=20,
).filter(lambda s: s.strip() == s and s != "")
_relation = st.one_of(
    st.none(),
    st.sampled_from(KNOWN_RELATIONS),
    st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True),
)
# Prose around a link: no brackets, backticks or @ (which would be links or code themselves).
_prose = st.text(
    st.characters(blacklist_characters="[]`@\n\r\\!", blacklist_categories=("Cs", "Cc")),
    max_size=30,
)


@settings(max_examples=300, deadline=None)
@given(target=_piece, anchor=st.none() | _piece, label=st.none() | _piece, relation=_relation)
def test_a_written_wikilink_reads_back(target, anchor, label, relation):
    link = format_wikilink(target, anchor=anchor, label=label, relation=relation)
    text = f"# Note\n\n{link} trailing words\n"
    (found,) = extract_links(text)
    assert (found.target, found.anchor, found.label) == (target, anchor, label)
    assert found.type == (relation or "wikilink")
    assert found.syntax == "wiki" and found.line == 3


@settings(max_examples=300, deadline=None)
@given(before=_prose, target=_piece, after=_prose, label=st.none() | _piece)
def test_a_link_anywhere_in_a_line_keeps_its_line_column_and_context(before, target, after, label):
    link = format_wikilink(target, label=label)
    line = f"{before}{link}{after}"
    text = f"first line\n\n{line}\n"
    (found,) = extract_links(text)
    assert found.line == 3
    assert line[found.col : found.col + len(found.text)] == found.text == link
    # The context is the link with up to 25 characters of its line either side.
    assert link in found.context
    core = found.context.strip("…")
    assert len(core) <= len(link) + 50
    assert found.type == "wikilink"  # prose before it is not a relation bullet


@settings(max_examples=200, deadline=None)
@given(target=_piece, fence=st.sampled_from(["```", "~~~"]), ticks=st.integers(1, 3))
def test_links_in_code_are_not_links(target, fence, ticks):
    link = format_wikilink(target)
    tick = "`" * ticks
    text = (
        f"# N\n\nsome {tick}{link}{tick} code span\n\n{fence}\n{link}\n{fence}\n\n"
        f"    {link} indented code\n\n<!-- {link} -->\n"
    )
    assert extract_links(text) == []


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_any_text_parses_and_every_link_points_at_itself(text):
    lines = text.split("\n")
    for lk in extract_links(text):
        assert lines[lk.line - 1][lk.col : lk.col + len(lk.text)] == lk.text
        assert lk.target.strip() == lk.target and lk.target
        assert lk.syntax in ("wiki", "markdown", "mention")


def test_markdown_links_mentions_and_relations():
    text = (
        "# Peter\n"
        'Desk at [The Castle](The-Castle.md), see [spec](<docs/a b.md#Top> "t") and '
        "[x](https://example.com/y.md), ![logo](logo.md), [pdf](a.pdf), [here](#top).\n"
        "- depends_on [[payments-service]] and also [[Linh|her]]\n"
        "- related [Andy](Andy.md)\n"
        "1. supersedes [[memory/2025-11-03.md#Retain]]\n"
        "- W @Peter @The-Castle: met @Andy; mail peter@example.com, `@code`\n"
        "- [ ] [[Task]] is not typed; - Related [[Upper]] neither\n"
        "A [label with [brackets]](My%20Note.md) link.\n"
    )
    got = [
        (lk.line, lk.syntax, lk.type, lk.target, lk.anchor, lk.label) for lk in extract_links(text)
    ]
    assert got == [
        (2, "markdown", "wikilink", "The-Castle.md", None, "The Castle"),
        (2, "markdown", "wikilink", "docs/a b.md", "Top", "spec"),
        (3, "wiki", "depends_on", "payments-service", None, None),
        (3, "wiki", "wikilink", "Linh", None, "her"),
        (4, "markdown", "related", "Andy.md", None, "Andy"),
        (5, "wiki", "supersedes", "memory/2025-11-03.md", "Retain", None),
        (6, "mention", "mention", "Peter", None, None),
        (6, "mention", "mention", "The-Castle", None, None),
        (6, "mention", "mention", "Andy", None, None),
        (7, "wiki", "wikilink", "Task", None, None),
        (7, "wiki", "wikilink", "Upper", None, None),
        (8, "markdown", "wikilink", "My Note.md", None, "label with [brackets]"),
    ]


def test_hostile_lines_stay_fast():
    import time

    text = "[" * 5000 + "](" * 5000 + "[[" * 5000 + "`" * 3001 + "@a" * 5000
    t0 = time.process_time()
    extract_links(text)
    assert time.process_time() - t0 < 2.0


# ------------------------------------------------------------------------------ resolution

PATHS = [
    "MEMORY.md",
    "bank/world.md",
    "bank/entities/Peter.md",
    "bank/entities/The-Castle.md",
    "memory/2025-11-03.md",
    "memory/people/Peter.md",
    "notes/world",  # not Markdown, but a path: the exact-path step finds it first
    "notes/world.md",
    "a/Dup.md",
    "b/dup.md",
    "bank/Case.md",
    "bank/case.md",
]


@pytest.mark.parametrize(
    ("syntax", "target", "src", "want"),
    [
        # 1. the exact workspace path, before the path + .md
        ("wiki", "notes/world", "MEMORY.md", "notes/world"),
        # 2. the path + .md
        ("wiki", "bank/world", "MEMORY.md", "bank/world.md"),
        # 3. the base name, any folder (and a tail of a path)
        ("wiki", "world.md", "MEMORY.md", None),  # bank/world.md and notes/world.md: ambiguous
        ("wiki", "2025-11-03.md", "MEMORY.md", "memory/2025-11-03.md"),
        ("wiki", "people/Peter.md", "MEMORY.md", "memory/people/Peter.md"),
        # 4. the base name + .md; a tie goes to the entity page
        ("wiki", "2025-11-03", "MEMORY.md", "memory/2025-11-03.md"),
        ("wiki", "Peter", "MEMORY.md", "bank/entities/Peter.md"),
        ("wiki", "the-castle", "MEMORY.md", "bank/entities/The-Castle.md"),  # any case
        ("mention", "Peter", "memory/2025-11-03.md", "bank/entities/Peter.md"),
        ("mention", "peter", "memory/2025-11-03.md", "bank/entities/Peter.md"),
        ("mention", "Nobody", "memory/2025-11-03.md", None),
        # a Markdown link is read relative to its file first, then like a wikilink
        ("markdown", "The-Castle.md", "bank/entities/Peter.md", "bank/entities/The-Castle.md"),
        ("markdown", "../world.md", "bank/entities/Peter.md", "bank/world.md"),
        ("markdown", "/bank/world.md", "memory/2025-11-03.md", "bank/world.md"),
        ("markdown", "../../../etc/x.md", "bank/entities/Peter.md", None),
        # exact case wins over a case-insensitive match; otherwise two spellings are ambiguous
        ("wiki", "bank/Case.md", "MEMORY.md", "bank/Case.md"),
        ("wiki", "bank/CASE.md", "MEMORY.md", None),
        ("wiki", "Dup", "MEMORY.md", "a/Dup.md"),
        ("wiki", "DUP", "MEMORY.md", None),
        ("wiki", "nothing-here", "MEMORY.md", None),
    ],
)
def test_resolution_order(syntax, target, src, want):
    res = Resolver(PATHS).resolve_target(syntax, target, src)
    assert res.path == want
    assert res.status == ("ok" if want else res.status)


def test_ambiguous_and_unresolved_say_so():
    r = Resolver(PATHS)
    amb = r.resolve_target("wiki", "DUP", "MEMORY.md")
    assert amb.status == "ambiguous" and amb.candidates == ("a/Dup.md", "b/dup.md")
    assert r.resolve_target("wiki", "world.md", "x").candidates == (
        "bank/world.md",
        "notes/world.md",
    )
    assert r.resolve_target("wiki", "zzz", "x").status == "unresolved"


# ------------------------------------------------------------------------------ the index


def _index(ws, *args):
    r = cli("-w", str(ws), "index", "--json", *args)
    assert r.code == 0, r.err
    return json.loads(r.out)


def _links_table(ws):
    conn = sqlite3.connect(ws / ".memory" / "index.sqlite")
    try:
        return sorted(
            conn.execute(
                "SELECT src, line, col, syntax, type, target, anchor, label, text, context, "
                "dst, status, candidates FROM links"
            ).fetchall()
        )
    finally:
        conn.close()


def _links(ws, note):
    r = cli("-w", str(ws), "links", note, "--json")
    assert r.code == 0, r.err
    return json.loads(r.out)


@pytest.mark.usefixtures("lexical")
def test_backlinks_of_peter_list_every_note_that_links_to_him(ws):
    _index(ws)
    data = _links(ws, "bank/entities/Peter.md")
    assert data["path"] == "bank/entities/Peter.md"
    back = {(b["from"], b["line"], b["type"]) for b in data["backlinks"]}
    # The hand-written links of the fixture, each with its type.
    assert ("bank/entities/payments-service.md", 5, "wikilink") in back
    assert ("bank/entities/Linh.md", 9, "works_with") in back
    assert ("memory/2025-11-24.md", 69, "wikilink") in back
    # Every line of the workspace that links to him, found by grep, is a backlink: a fact about
    # @Peter mentions him, and a mention is a link to his page.
    grep = set()
    for p in sorted(ws.rglob("*.md")):
        for n, line in enumerate(p.read_text(encoding="utf-8").split("\n"), 1):
            if any(s in line for s in ("@Peter", "[[Peter", "(Peter.md)")):
                grep.add((p.relative_to(ws).as_posix(), n))
    assert {(f, n) for f, n, _ in back} == grep
    assert any(t == "mention" for _, _, t in back)
    # Outgoing: the Markdown links of his page, resolved next to it.
    out = {(o["line"], o["to"]) for o in data["outgoing"]}
    assert (3, "bank/entities/The-Castle.md") in out and (9, "bank/entities/Andy.md") in out
    # The same note by the names a link may use.
    assert _links(ws, "Peter")["path"] == _links(ws, "@peter")["path"] == data["path"]
    human = cli("-w", str(ws), "links", "Peter")
    assert human.code == 0 and "bank/entities/Linh.md:9 works_with [[Peter]]" in human.out


@pytest.mark.usefixtures("lexical")
def test_links_of_an_unknown_note_is_a_one_line_error(ws):
    _index(ws)
    r = cli("-w", str(ws), "links", "Nobody")
    assert r.code != 0 and r.out == ""
    assert r.err.startswith("clawmem: error: Nobody: no note of that name in the index")
    r = cli("-w", str(ws), "links", "memory/2099-01-01.md")
    assert r.err.startswith("clawmem: error: memory/2099-01-01.md: no such note in the index")
    assert "hint:" in r.err


@pytest.mark.usefixtures("lexical")
def test_incremental_sync_of_links_equals_a_rebuild_through_renames_and_deletes(ws):
    _index(ws)
    mem = ws / "memory"
    # A link to a note that does not exist yet, then the note appears: it resolves.
    (mem / "2025-12-01.md").write_text(
        "# 2025-12-01\n\n- depends_on [[Zanzibar trip]] and [[Peter]]\n", encoding="utf-8"
    )
    _index(ws)
    first = [r for r in _links_table(ws) if r[0] == "memory/2025-12-01.md"]
    assert [(r[5], r[11]) for r in first] == [("Zanzibar trip", "unresolved"), ("Peter", "ok")]
    (ws / "bank" / "Zanzibar trip.md").write_text("# Zanzibar\n\n[[Andy]] comes too.\n")
    _index(ws)
    row = next(r for r in _links_table(ws) if r[5] == "Zanzibar trip")
    assert (row[10], row[11]) == ("bank/Zanzibar trip.md", "ok")
    # A rename: links to the old name break (check says so), links to the new one resolve.
    (ws / "bank" / "entities" / "Kenji.md").rename(ws / "bank" / "entities" / "Kenji-Sato.md")
    (mem / "2025-11-20.md").unlink()
    _index(ws)
    kenji = _links(ws, "bank/entities/Kenji-Sato.md")
    assert kenji["backlinks"] == []  # every link says "Kenji", which no longer exists
    table = _links_table(ws)
    assert not any(r[10] == "bank/entities/Kenji.md" for r in table)
    assert any(r[5] == "Kenji" and r[11] == "unresolved" and r[3] == "wiki" for r in table)
    assert not any(r[0] == "memory/2025-11-20.md" for r in table)  # its links went with it
    # The 2025-11-24 log's "extends" link pointed at the deleted log: now unresolved.
    ext = next(r for r in table if r[4] == "extends")
    assert (ext[10], ext[11]) == (None, "unresolved")
    (mem / "2025-11-24.md").write_text(
        (mem / "2025-11-24.md").read_text(encoding="utf-8").replace("[[Kenji]]", "[[Kenji-Sato]]"),
        encoding="utf-8",
    )
    _index(ws)
    assert [b["from"] for b in _links(ws, "Kenji-Sato")["backlinks"]] == ["memory/2025-11-24.md"]
    incremental = _links_table(ws)
    _index(ws, "--force")
    assert _links_table(ws) == incremental


@pytest.mark.usefixtures("lexical")
def test_check_names_a_broken_link_by_file_and_line(ws):
    assert cli("-w", str(ws), "check").code == 0  # the fixture's links all resolve
    log = ws / "memory" / "2025-11-30.md"
    n = log.read_text(encoding="utf-8").count("\n")
    with open(log, "a", encoding="utf-8") as fh:
        fh.write("\nSee [[DEC-0099]], `[[not a link]]` and [[Peter]].\n")
    (ws / "bank" / "a").mkdir()
    (ws / "bank" / "b").mkdir()
    (ws / "bank" / "a" / "Notes.md").write_text("# a\n")
    (ws / "bank" / "b" / "Notes.md").write_text("# b\n\n- related [[Notes]]\n")
    r = cli("-w", str(ws), "check")
    assert r.code == 9
    assert r.out.splitlines() == [
        "bank/b/Notes.md:3: ambiguous link [[Notes]]: it matches bank/a/Notes.md, "
        "bank/b/Notes.md; write the path, e.g. [[bank/a/Notes.md]]",
        f"memory/2025-11-30.md:{n + 2}: broken link [[DEC-0099]]: no memory file matches it; "
        "fix the name or create the note",
    ]
    assert "clawmem: error: 2 broken link(s) in the workspace" in r.err
    # status counts what check lists, from the index (synced first).
    _index(ws)
    status = json.loads(cli("-w", str(ws), "status", "--json").out)
    assert status["links"]["broken"] == 1 and status["links"]["ambiguous"] == 1
    assert status["links"]["resolved"] == status["links"]["total"] - 2
    assert "1 broken, 1 ambiguous" in cli("-w", str(ws), "status").out
    data = json.loads(cli("-w", str(ws), "check", "--json").out)
    assert {d["problem"] for d in data} == {"link"}


# ------------------------------------------------------------------------------ recall


@pytest.mark.usefixtures("lexical")
def test_recall_expand_adds_linked_notes_below_direct_hits(ws):
    plain = json.loads(cli("-w", str(ws), "recall", "payments", "--json").out)
    r = cli("-w", str(ws), "recall", "payments", "--expand", "--json")
    assert r.code == 0, r.err
    res = json.loads(r.out)
    direct = [h for h in res["results"] if "via" not in h]
    linked = [h for h in res["results"] if "via" in h]
    assert [h["citation"] for h in direct] == [h["citation"] for h in plain["results"]]
    assert linked, "the fixture's links reach notes from the best hits"
    assert res["results"][: len(direct)] == direct  # below every direct hit
    assert max(h["score"] for h in linked) < min(h["score"] for h in direct)
    seeds = {h["citation"] for h in direct[:3]}
    shown = {h["path"] for h in direct}
    for h in linked:
        v = h["via"]
        assert v["direction"] in ("outgoing", "backlink") and v["from"] in seeds
        assert h["path"] not in shown
        src, line = v["link"].rsplit("#L", 1)
        text = (ws / src).read_text(encoding="utf-8").split("\n")[int(line) - 1]
        assert v["text"] in text
    human = cli("-w", str(ws), "recall", "payments", "--expand")
    assert "↳ via link:" in human.out


@pytest.mark.usefixtures("lexical")
def test_entity_recall_includes_pages_that_link_to_the_entity(ws):
    res = json.loads(cli("-w", str(ws), "recall", "tell me about Peter", "--json").out)
    assert res["results"][0]["path"] == "bank/entities/Peter.md"
    linked = {h["path"]: h["via"] for h in res["results"] if "via" in h}
    assert {"bank/entities/Linh.md", "bank/entities/payments-service.md"} <= set(linked)
    assert all(v["direction"] == "backlink" and v["type"] != "mention" for v in linked.values())


def test_queries_file_accepts_expand(ws, lexical, tmp_path):
    q = tmp_path / "q.jsonl"
    q.write_text('{"query": "payments", "expand": true}\n{"query": "x", "expand": "yes"}\n')
    r = cli("-w", str(ws), "recall", "--queries", str(q))
    first = json.loads(r.out.splitlines()[0])
    assert any("via" in h for h in first["results"])
    assert r.code != 0 and "'expand' must be true or false" in r.err


def test_mcp_search_validates_expand():
    from clawmem.cli.mcp.arguments import validate_arguments
    from clawmem.cli.mcp.catalogue import TOOLS
    from clawmem.errors import UsageError

    spec = next(t for t in TOOLS if t.name == "memory_search")
    assert validate_arguments(spec, {"query": "x", "expand": True}) == {
        "query": "x",
        "expand": True,
    }
    with pytest.raises(UsageError, match="'expand' must be true or false"):
        validate_arguments(spec, {"query": "x", "expand": 1})


# ------------------------------------------------------------------------------ reflect


@pytest.mark.usefixtures("lexical")
def test_reflect_links_the_entities_it_names_and_keeps_hand_text(ws):
    page = ws / "bank" / "entities" / "Andy.md"
    hand = page.read_text(encoding="utf-8")
    r = cli("-w", str(ws), "reflect", "--today", "2025-12-01", "-q")
    assert r.code == 0, r.err
    text = page.read_text(encoding="utf-8")
    assert text.startswith(hand)  # the person's text, byte for byte
    generated = text[len(hand) :]
    assert "also about [[Peter]]" in generated
    out = _links(ws, "Andy")["outgoing"]
    made = [o for o in out if o["line"] > hand.count("\n")]
    assert made and all(o["to"] == "bank/entities/Peter.md" for o in made)
    # Every link reflect wrote resolves: check stays clean.
    assert cli("-w", str(ws), "check").code == 0


def test_a_long_paragraph_of_links_is_read_in_linear_time():
    """Each link's line was found by walking from its paragraph's first line: a paragraph of
    20,000 lines each holding a link took 4 s to read, and a 5 MB note a clone commits held
    `clawmem index` for some twenty minutes. The line is searched for now."""
    import time

    n = 40_000
    text = "# x\n\n" + "".join(f"see [[n{i}]] and @p{i}\n" for i in range(n))
    t0 = time.process_time()
    links = extract_links(text)
    assert time.process_time() - t0 < 3.0
    assert len(links) == 2 * n
    assert (links[-1].line, links[-1].col, links[-1].target) == (n + 2, 19, f"p{n - 1}")


@pytest.mark.usefixtures("lexical")
def test_a_note_of_repeated_links_makes_one_row_a_line_and_at_most_the_cap(ws):
    """1 MB of "@a @a …" in one note (a clone can commit it) made 330,000 identical link rows,
    an 87 MB index and 8 s to build. A link repeated on one line is one row, a note keeps at
    most MAX_LINKS_PER_NOTE rows, and what the cap leaves out is reported with the note."""
    from clawmem.markdown.links import MAX_LINKS_PER_NOTE

    over = 1_500
    lines = ["# many", "", "@a " * 100_000, "", "see [[Peter]] and [[Peter]], [[Peter#Work]]", ""]
    lines += [f"- @p{i}" for i in range(MAX_LINKS_PER_NOTE + over)]
    (ws / "memory" / "many.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = _index(ws)
    conn = sqlite3.connect(ws / ".memory" / "index.sqlite")
    try:
        rows = conn.execute(
            "SELECT line, target, anchor FROM links WHERE src = 'memory/many.md' ORDER BY line, col"
        ).fetchall()
    finally:
        conn.close()
    assert len(rows) == MAX_LINKS_PER_NOTE
    assert rows[:4] == [(3, "a", None), (5, "Peter", None), (5, "Peter", "Work"), (7, "p0", None)]
    first_out = 7 + MAX_LINKS_PER_NOTE - 3
    (problem,) = [p for p in report["problems"] if p["path"] == "memory/many.md"]
    assert problem["line"] == first_out and f"{over + 3:,} link(s)" in problem["message"]
    # Said where a person looks: the index run, status and doctor; not as a malformed fact.
    r = cli("-w", str(ws), "index")
    assert r.code == 0 and "malformed" not in r.err
    r = cli("-w", str(ws), "status")
    assert f"memory/many.md:{first_out}: too many links" in r.out
    r = cli("-w", str(ws), "doctor", "--json")
    found = [f for f in json.loads(r.out)["findings"] if f["check"] == "links"]
    assert found and "memory/many.md" in found[0]["detail"]
