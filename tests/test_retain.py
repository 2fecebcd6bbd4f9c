"""Retain as an agent uses it: write a fact, recall it a moment later, by entity and by time."""

import json
from datetime import date

import pytest

from clawmem import open_workspace
from clawmem.ingest.retain import looks_like_secret, place_fact
from clawmem.markdown.facts import make_fact

from .conftest import cli

pytestmark = pytest.mark.usefixtures("lexical")

TODAY = date.today().isoformat()


@pytest.fixture(autouse=True)
def _today():
    """Today, read as each test starts: a suite that runs past midnight once compared a fact
    retained on the new day with the day this module was imported on."""
    global TODAY
    TODAY = date.today().isoformat()


def retain(ws, *args):
    r = cli("-w", str(ws), "retain", *args, "--json")
    return r, (json.loads(r.out) if r.code == 0 else None)


def test_retain_then_recall_immediately(ws):
    r, fact = retain(
        ws,
        "Peter prefers concise replies on WhatsApp",
        "--kind",
        "O",
        "--confidence",
        "0.9",
        "--entity",
        "Peter",
    )
    assert r.code == 0, r.err
    assert fact["stored"] and fact["kind"] == "O" and fact["confidence"] == 0.9
    assert fact["source"] == f"memory/{TODAY}.md#L4-L4"
    text = (ws / "memory" / f"{TODAY}.md").read_text(encoding="utf-8")
    assert (
        text
        == f"# {TODAY}\n\n## Retain\n- O(c=0.9) @Peter: Peter prefers concise replies on WhatsApp\n"
    )
    res = json.loads(
        cli("-w", str(ws), "recall", "how should I reply to Peter?", "--since", "7d", "--json").out
    )
    top = res["results"][0]
    assert top["type"] == "fact" and top["source"] == fact["source"]
    assert set(top) >= {
        "kind",
        "timestamp",
        "valid_from",
        "valid_to",
        "entities",
        "confidence",
        "content",
        "source",
        "score",
    }
    assert top["entities"] == ["Peter"] and top["timestamp"] == TODAY


def test_retain_keeps_existing_bytes_and_appends_to_section(ws):
    log = ws / "memory" / "2025-11-12.md"
    before = log.read_bytes()
    r, fact = retain(
        ws,
        "The refund job finished at 23:10.",
        "--kind",
        "B",
        "--entity",
        "payments-service",
        "--date",
        "2025-11-12",
    )
    assert r.code == 0, r.err
    after = log.read_bytes()
    new_line = b"- B @payments-service: The refund job finished at 23:10.\n"
    i = after.index(new_line)
    assert after[:i] + after[i + len(new_line) :] == before  # only the new line was added
    assert after.startswith(before)  # at the end: a log is only ever appended to
    lines = after.decode().split("\n")
    assert lines[fact["line"] - 1] == new_line.decode().rstrip("\n")
    assert fact["line"] > [n for n, line in enumerate(lines, 1) if line.startswith("## Retain")][0]


def test_retain_creates_section_in_log_without_one(ws):
    log = ws / "memory" / "2025-11-08.md"  # the fixture's one log without a Retain section
    before = log.read_text(encoding="utf-8")
    r, fact = retain(ws, "Quiet Saturday.", "--kind", "S", "--date", "2025-11-08")
    assert r.code == 0, r.err
    after = log.read_text(encoding="utf-8")
    assert after.startswith(before.rstrip("\n"))
    assert after.endswith("\n\n## Retain\n- S: Quiet Saturday.\n")


def test_crlf_file_stays_crlf(ws):
    log = ws / "memory" / "2025-12-05.md"
    log.write_bytes(b"# 2025-12-05\r\n\r\n## Retain\r\n- W @Peter: one\r\n\r\n## Later\r\ntext\r\n")
    r, fact = retain(ws, "two", "--entity", "Peter", "--date", "2025-12-05")
    assert r.code == 0, r.err
    # Appended (a log is never rewritten): a new Retain section after the one that follows.
    assert log.read_bytes() == (
        b"# 2025-12-05\r\n\r\n## Retain\r\n- W @Peter: one\r\n\r\n## Later\r\ntext\r\n"
        b"\r\n## Retain\r\n- W @Peter: two\r\n"
    )
    assert fact["line"] == 10


def test_duplicates_are_not_appended_twice(ws):
    r, first = retain(ws, "Sunny in Vienna.", "--entity", "Peter")
    r, again = retain(ws, "Sunny in Vienna.", "--entity", "Peter")
    assert again["stored"] is False and again["duplicate_of"] == first["source"]
    text = (ws / "memory" / f"{TODAY}.md").read_text(encoding="utf-8")
    assert text.count("Sunny in Vienna.") == 1
    # a fact already in an older log is found through the index
    existing = "The Castle's build server castle-01 runs a nightly restic backup at 03:00 CET"
    line = next(
        x for x in (ws / "memory" / "2025-11-07.md").read_text().splitlines() if existing in x
    )
    content = line.split(": ", 1)[1]
    cli("-w", str(ws), "index")
    r, dup = retain(ws, content, "--entity", "The-Castle")
    assert dup["stored"] is False and dup["duplicate_of"].startswith("memory/2025-11-07.md#L")
    human = cli("-w", str(ws), "retain", content, "--entity", "The-Castle")
    assert "already retained" in human.err


@pytest.mark.parametrize(
    "secret",
    [
        "the key is sk-proj-abcdefghijklmnopqrstuvwx123",
        "AKIAIOSFODNN7EXAMPLE is the deploy user",
        "token ghp_0123456789abcdefghijklmnopqrstuvwxyzAB",
        "here: -----BEGIN OPENSSH PRIVATE KEY----- abc",
        "db password: hunter2hunter2",
    ],
)
def test_secrets_are_refused_unless_allowed(ws, secret):
    r, _ = retain(ws, secret)
    assert r.code == 7 and "looks like" in r.err and "--allow-secret" in r.err
    assert not (ws / "memory" / f"{TODAY}.md").exists()
    r, fact = retain(ws, secret, "--allow-secret")
    assert r.code == 0 and fact["stored"]


def test_not_secret():
    assert looks_like_secret("We picked the sk-learn pipeline and password rules review") is None


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["x", "--kind", "Q"], "unknown fact kind"),
        (["x", "--kind", "O", "--confidence", "1.5"], "0.0–1.0"),
        (["x", "--kind", "W", "--confidence", "0.5"], "only opinions"),
        (["", "--kind", "W"], "empty"),
        (["x", "--entity", "bad name!"], "invalid entity"),
        (["x", "--date", "2025-13-01"], "2025-13-01"),
        (["B @Kate: Kate moved to Porto", "--kind", "W"], "Retain line of kind B"),
        (["O(c=0.8) @Kate: likes fado", "--confidence", "0.5"], "confidence of 0.8"),
        # A Retain line written wrong is said so, not kept as a W fact that begins with it.
        (["O(c=1.5) @Kate: likes fado"], "reads as a Retain line, but confidence must be"),
        (["W @Kate:"], "reads as a Retain line, but empty statement"),
        (["W(c=0.5): the VPN moved"], "reads as a Retain line, but only opinions"),
    ],
)
def test_bad_retain_input_is_one_clear_error(ws, args, fragment):
    r = cli("-w", str(ws), "retain", *args)
    assert r.code in (2, 7), r.err
    assert r.err.startswith("clawmem: error:") and fragment in r.err
    assert not (ws / "memory" / f"{TODAY}.md").exists()


@pytest.mark.parametrize(
    "args, line",
    [
        # Written as the log shows it, the fact is that fact, not a W fact that begins "O(…)".
        (["O(c=0.8) @Peter: prefers short replies"], "- O(c=0.8) @Peter: prefers short replies"),
        (
            ["* B @Kate: Kate starts a pottery class on Tuesdays"],
            "- B @Kate: Kate starts a pottery class on Tuesdays",
        ),
        (["W: the VPN moved to Hetzner", "-e", "ops"], "- W @ops: the VPN moved to Hetzner"),
        (["O @Peter: likes fado", "--kind", "O", "-c", "0.7"], "- O(c=0.7) @Peter: likes fado"),
        # Not a Retain line: the statement itself, of the kind given (W by default).
        (["A: the answer is 42"], "- W: A: the answer is 42"),
        (["w @Kate: lower-case is not the grammar"], "- W: w @Kate: lower-case is not the grammar"),
    ],
)
def test_a_fact_written_as_a_retain_line_is_read_as_one(ws, args, line):
    r, fact = retain(ws, *args)
    assert r.code == 0, r.err
    text = (ws / "memory" / f"{TODAY}.md").read_text(encoding="utf-8")
    assert text.splitlines()[fact["line"] - 1] == line


def test_invalid_utf8_log_is_never_rewritten(ws):
    log = ws / "memory" / "2025-12-06.md"
    log.write_bytes(b"# day\n\xff broken\n")
    r = cli("-w", str(ws), "retain", "x", "--date", "2025-12-06")
    assert r.code == 7 and "memory/2025-12-06.md line 2" in r.err
    assert log.read_bytes() == b"# day\n\xff broken\n"


@pytest.mark.parametrize(
    ("tail", "opens", "closer"),
    [
        ("```python\nprint(1)\n", 6, "```"),
        ("~~~~\n", 6, "~~~~"),
        ("<!-- draft, to finish\n", 6, "-->"),
        ("<script>\n", 6, "</script>"),
    ],
)
def test_a_log_that_ends_inside_an_open_block_is_left_as_it_is(ws, tail, opens, closer):
    """A daily log that ends inside a code fence or an HTML comment never closed (an agent's
    output cut short) took the fact into that block, as code: retain wrote the line, then
    failed ("another program's edit took it out of the Retain section"), and every retry
    appended the fact again. Refused before writing, naming where the block opens."""
    log = ws / "memory" / "2026-01-09.md"
    before = f"# 2026-01-09\n\n## Retain\n- W: first\n\n{tail}".encode()
    log.write_bytes(before)
    for _ in range(2):
        r = cli("-w", str(ws), "retain", "the heron nests by the weir", "--date", "2026-01-09")
        assert r.code == 7, r.err
        assert f"memory/2026-01-09.md line {opens}: the log ends inside" in r.err, r.err
        assert f"add the line {closer} at the end" in r.err, r.err
        assert log.read_bytes() == before
    log.write_bytes(before + f"{closer}\n".encode())
    r = cli("-w", str(ws), "retain", "the heron nests by the weir", "--date", "2026-01-09")
    assert r.code == 0, r.err


def test_a_retain_section_ending_in_an_html_block_gets_a_section_of_its_own(ws):
    """An HTML block that a blank line ends (``<div>``) took in the fact appended right after
    it: the fact goes under a new Retain heading after a blank line, and is recallable."""
    log = ws / "memory" / "2026-01-10.md"
    log.write_text("# 2026-01-10\n\n## Retain\n- W: first\n\n<div>\n", encoding="utf-8")
    r = cli(
        "-w", str(ws), "retain", "the heron nests by the weir", "--date", "2026-01-10", "--json"
    )
    assert r.code == 0, r.err
    assert json.loads(r.out)["line"] == 9
    assert log.read_text(encoding="utf-8").endswith(
        "<div>\n\n## Retain\n- W: the heron nests by the weir\n"
    )


def test_place_fact_in_file_without_final_newline():
    p = place_fact("# d\n\n## Retain\n- W: a", make_fact("W", "b"), date(2025, 1, 1))
    assert p.text == "# d\n\n## Retain\n- W: a\n- W: b\n" and p.line == 5


def test_recall_by_entity_and_kind(ws):
    res = json.loads(
        cli(
            "-w",
            str(ws),
            "recall",
            "WhatsApp",
            "--entity",
            "Peter",
            "--kind",
            "O",
            "--json",
            "-k",
            "20",
        ).out
    )
    facts = [h for h in res["results"] if h["type"] == "fact"]
    assert facts and all(h["kind"] == "O" and "Peter" in h["entities"] for h in facts)
    assert all(h["type"] == "fact" for h in res["results"])
    both = json.loads(
        cli("-w", str(ws), "recall", "WhatsApp", "--entity", "Peter", "--json", "-k", "20").out
    )
    assert both["results"][0]["path"] == "bank/entities/Peter.md"
    assert all(
        h["path"] == "bank/entities/Peter.md" or "Peter" in h["entities"] for h in both["results"]
    )


def test_tell_me_about_entity_surfaces_the_page_first(ws):
    res = json.loads(cli("-w", str(ws), "recall", "tell me about Kenji", "--json").out)
    assert res["results"][0]["path"] == "bank/entities/Kenji.md"


def test_entities_command(ws):
    rows = json.loads(cli("-w", str(ws), "entities", "--json").out)
    by = {r["entity"]: r for r in rows}
    assert by["Peter"]["facts"] >= 10 and by["Peter"]["page"] == "bank/entities/Peter.md"
    assert by["Peter"]["last_mention"] >= "2025-11-27"


def test_filters_apply_before_limits(ws):
    res = json.loads(
        cli(
            "-w",
            str(ws),
            "recall",
            "payments-service",
            "--since",
            "2025-11-24",
            "--until",
            "2025-11-26",
            "-k",
            "50",
            "--json",
            "--mode",
            "lexical",
        ).out
    )
    assert res["results"]
    for h in res["results"]:
        recorded = "2025-11-24" <= h["timestamp"] <= "2025-11-26"
        valid = (
            h.get("valid_from")
            and h["valid_from"] <= "2025-11-26"
            and (h["valid_to"] or "9") >= "2025-11-24"
        )
        assert recorded or valid, h
    mem = open_workspace(ws)
    unfiltered = mem.recall("payments-service", k=3, mode="lexical")
    window = dict(mode="lexical", since="2025-11-12", until="2025-11-13")
    everything = mem.recall("payments-service", k=100, **window)
    filtered = mem.recall("payments-service", k=3, **window)
    assert len(everything.hits) > 3
    assert len(filtered.hits) == 3  # not "top 3 overall, then filtered down to fewer"
    assert filtered.hits == everything.hits[:3]
    assert unfiltered.hits != filtered.hits


def test_time_window_includes_facts_valid_in_it(ws):
    # Written on Nov 27, valid Nov 27–Dec 1: inside a window that starts on Nov 30.
    mem = open_workspace(ws)
    res = mem.recall("Marrakech", since="2025-11-30", until="2025-12-31", mode="lexical")
    assert any(h.kind == "W" and "Marrakech" in h.text for h in res.hits)
    assert all(h.day is None or h.day >= "2025-11-30" or h.valid_to for h in res.hits)


def test_as_of_shows_what_was_true_then(ws):
    mem = open_workspace(ws)
    then = mem.recall("where is Peter staying", entity="Peter", kind="W", as_of="2025-11-10", k=20)
    texts = " ".join(h.text for h in then.hits if h.kind)
    assert "Lisbon" in texts and "Marrakech" not in texts
    later = mem.recall("where is Peter staying", entity="Peter", kind="W", as_of="2025-11-28", k=20)
    lisbon = [h for h in later.hits if h.kind and "Lisbon" in h.text]
    assert not lisbon  # its validity ended on Nov 14
    assert any("Marrakech" in h.text for h in later.hits)


def test_newer_opinion_supersedes_older(ws):
    mem = open_workspace(ws)
    res = mem.recall("Peter Rust warelay CLI opinion", kind="O", entity="Peter", k=20)
    ops = [h for h in res.hits if h.kind == "O" and "Rust" in h.text]
    assert len(ops) >= 2
    newest = max(ops, key=lambda h: h.day)
    assert newest.superseded_by is None
    assert any(h.superseded_by for h in ops if h is not newest)


def test_budget_packs_whole_facts_with_citations(ws):
    res = json.loads(
        cli("-w", str(ws), "recall", "payments-service Hetzner", "--budget", "200", "--json").out
    )
    assert res["budget"]["used"] <= 200 and res["results"]
    for h in res["results"]:
        if h["type"] == "fact":
            line = (ws / h["path"]).read_text(encoding="utf-8").split("\n")[h["start_line"] - 1]
            assert line.endswith(h["content"])  # never cut
        else:
            lines = (ws / h["path"]).read_text(encoding="utf-8").split("\n")
            assert h["snippet"] == "\n".join(lines[h["start_line"] - 1 : h["end_line"]])


def test_check_lists_malformed_facts_and_index_reports_them(ws):
    log = ws / "memory" / "2025-11-05.md"
    log.write_text(
        log.read_text(encoding="utf-8")
        + "\n## Retain\n- O(c=high) @Peter: likes tea\n- W @Peter missing colon\n",
        encoding="utf-8",
    )
    r = cli("-w", str(ws), "check")
    assert r.code == 9
    lines = r.out.strip().splitlines()
    assert len(lines) == 2 and all(x.startswith("memory/2025-11-05.md:") for x in lines)
    assert "O(c=high)" in lines[0]
    idx = cli("-w", str(ws), "index")
    assert idx.code == 0 and "malformed fact" in idx.err
    st = json.loads(cli("-w", str(ws), "status", "--json").out)
    assert len(st["problems"]) == 2
    # the well-formed facts of that file are still indexed
    assert open_workspace(ws).recall("Rust", mode="lexical").hits


def _at_most(gib: int):
    """A child that may allocate at most ``gib`` GiB of address space: one that reads a file of
    more fails at once with MemoryError, rather than filling the machine's memory."""
    import resource

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (gib << 30, gib << 30))

    return limit


def test_a_log_over_max_file_bytes_is_refused_before_it_is_read(ws):
    """retain read today's log whole, then refused it for its size: a log of 64 GiB (sparse
    here, a runaway script's elsewhere) was read into memory first. The size is checked
    first, and the refusal is one line."""
    from .conftest import cli_subprocess

    log = ws / "memory" / "2025-12-06.md"
    with open(log, "wb") as f:
        f.write(b"# 2025-12-06\n")
        f.truncate(64 << 30)
    r = cli_subprocess(
        "-w", str(ws), "retain", "Peter likes tea.", "--date", "2025-12-06",
        preexec_fn=_at_most(3), timeout=120,
    )  # fmt: skip
    assert r.code == 7, r.err
    assert r.err.startswith(
        "clawmem: error: memory/2025-12-06.md: not stored: the index skips this log "
        "(68,719,476,736 bytes is over max_file_bytes=5,000,000)"
    ), r.err
    assert "Traceback" not in r.err and log.stat().st_size == 64 << 30
