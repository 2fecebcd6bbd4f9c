"""Another program writing the daily log while clawmem retains into it loses nothing.

An editor, an agent keeping its own notes or a script appends to ``memory/<day>.md`` with no
knowledge of clawmem's lock. retain used to read the log, build the new text and rename a copy
over it: at 100 appends a second, about one appended line in six was lost."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time

import pytest

from clawmem.ingest.retain import may_follow

from .conftest import cli

pytestmark = pytest.mark.usefixtures("lexical")

DAY = "2031-01-01"
APPENDER = textwrap.dedent(
    """
    import sys, time
    path, seconds = sys.argv[1], float(sys.argv[2])
    t0, n = time.monotonic(), 0
    while time.monotonic() - t0 < seconds:
        with open(path, "a", encoding="utf-8") as fh:  # as `echo ... >> log` does
            fh.write(f"foreign line {n}\\n")
        n += 1
        time.sleep(0.01)
    print(n)
    """
)


@pytest.mark.parametrize(
    "tail",
    [
        "",  # the Retain section ends the file: the fact is appended in place
        "\n## Notes\nwritten by hand\n",  # a section follows: a new Retain section is appended
    ],
    ids=["retain-last", "section-after"],
)
def test_retain_loses_no_line_another_program_appends(ws, tail):
    log = ws / "memory" / f"{DAY}.md"
    log.write_text(f"# {DAY}\n\n## Retain\n- W: the first fact\n{tail}", encoding="utf-8")
    assert cli("-w", str(ws), "index").code == 0
    writer = subprocess.Popen(
        [sys.executable, "-c", APPENDER, str(log), "4"], stdout=subprocess.PIPE, text=True
    )
    retained = 0
    try:
        while writer.poll() is None:
            r = cli("-w", str(ws), "retain", f"retained fact number {retained}", "--date", DAY)
            assert r.code == 0, r.err
            retained += 1
    finally:
        out, _ = writer.communicate(timeout=30)
    appended = int(out)
    lines = log.read_text(encoding="utf-8").splitlines()
    assert appended > 100 and retained >= 3
    lost = [n for n in range(appended) if lines.count(f"foreign line {n}") != 1]
    assert lost == [], f"{len(lost)} of {appended} appended lines lost or doubled"
    facts = [n for n in range(retained) if lines.count(f"- W: retained fact number {n}") != 1]
    assert facts == [], f"{len(facts)} of {retained} retained facts lost or doubled"
    # Every retained fact is in the Retain section, where the index reads facts.
    found = cli("-w", str(ws), "recall", "retained fact number", "-k", "200", "--json")
    assert found.out.count('"type": "fact"') >= retained


def test_appended_lines_may_follow_a_fact_only_when_they_keep_the_section():
    assert may_follow(b"a note\n- another bullet\n")
    assert not may_follow(b"half a line")  # still being written: wait for its end
    for line in (b"## Next\n", b"```\n", b"~~~\n", b"===\n", b"---\n", b"  # heading\n"):
        assert not may_follow(b"text\n" + line)


def test_a_log_that_keeps_changing_is_refused_not_overwritten(ws, monkeypatch):
    """A writer that rewrites the file faster than retain can merge: retain gives up with the
    reason after its tries, and the file is the other writer's."""
    import clawmem.ingest.retain as retain_mod

    log = ws / "memory" / f"{DAY}.md"
    log.write_text(f"# {DAY}\n\n## Retain\n- W: one\n", encoding="utf-8")
    real = retain_mod.place_fact
    calls = 0

    def place_then_rewrite(existing, fact, day, *where):
        nonlocal calls
        calls += 1
        placed = real(existing, fact, day, *where)
        log.write_text(f"# {DAY}\n\nrewritten {time.monotonic_ns()}\n", encoding="utf-8")
        return placed

    monkeypatch.setattr(retain_mod, "place_fact", place_then_rewrite)
    r = cli("-w", str(ws), "retain", "a fact", "--date", DAY)
    assert r.code != 0 and "kept changing" in r.err and calls == retain_mod.CAS_ATTEMPTS
    assert log.read_text(encoding="utf-8").startswith(f"# {DAY}\n\nrewritten ")


@pytest.mark.parametrize("writer", ["held", "grouped"])
@pytest.mark.parametrize("beside", ["retain", "watch"])
def test_a_program_holding_the_log_open_loses_no_line(tmp_path, writer, beside):
    """Issue 40: a writer that keeps the log open (250 lines a second) and a shell group
    ``{ echo a; sleep 0.03; echo b; } >> log``, beside a retain loop and beside ``clawmem
    watch``, on a log with a section after its Retain section (which retain used to rename a new
    file over): every line is there exactly once, and the log is the same file throughout.
    benchmarks/soak/open_writer.py runs this for 30 s each (docs/reliability.md)."""
    from benchmarks.soak.open_writer import make_workspace, measure

    ws = tmp_path / "ws"
    make_workspace(ws)
    fig = measure(ws, writer, beside, 3.0)
    assert not fig["error"], fig
    # At least 100 lines a second whatever the load (250 asked), and a few dozen groups.
    assert fig["lines_written"] >= (300 if writer == "held" else 40), fig
    assert fig["lines_lost"] == 0, fig
    assert fig["inode_kept"], fig
    if beside == "retain":
        assert fig["retains"] >= 1 and fig["facts_in_log"] == fig["retains"], fig


def test_retain_only_appends_to_a_log(ws):
    """A log whose last section is not Retain gets a new ``## Retain`` section at its end (the
    grammar reads every Retain section); the bytes before it are untouched."""
    log = ws / "memory" / f"{DAY}.md"
    head = f"# {DAY}\n\n## Retain\n- W: one\n\n## Notes\nby hand"
    log.write_text(head, encoding="utf-8")
    ino = log.stat().st_ino
    assert cli("-w", str(ws), "retain", "two", "--date", DAY).code == 0
    assert cli("-w", str(ws), "retain", "three", "--date", DAY).code == 0
    text = log.read_text(encoding="utf-8")
    assert text == head + "\n\n## Retain\n- W: two\n- W: three\n"
    assert log.stat().st_ino == ino
    found = cli("-w", str(ws), "recall", "two", "--json", "--kind", "W")
    assert f"memory/{DAY}.md#L10-L10" in found.out
