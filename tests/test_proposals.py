"""Facts proposed from conversations and daily notes (issue 44): proposed at flush and reflect,
never written as facts until a person accepts them; accepted ones reach the facts and reflect's
entity pages with the citation of what was said; rejected ones are never proposed again; a second
run proposes nothing new; what is proposed is redacted. Through the CLI, as users run it."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import uuid
from datetime import date
from pathlib import Path

import anyio

from clawmem.memory import open_workspace
from clawmem.recall import bm25_topk, legs
from clawmem.reflect.fact_proposals import Said, candidates, propose, scored
from clawmem.store.index import Filters
from clawmem.text.textnorm import build_query

from .conftest import REPO, approve, cli
from .test_flush import TOKEN, Transcript

OPENCLAW = (
    REPO / "fixtures" / "sessions" / "openclaw" / "3b8f0c2e-6d1a-4e7b-9a51-0c2d7e4f9a13.jsonl"
)
OC = f"sessions/{OPENCLAW.name}"


def _configured(ws: Path, tmp_path: Path) -> Path:
    """The fixture transcript in a sessions folder that clawmem.toml names, approved."""
    folder = tmp_path / "oc-sessions"
    folder.mkdir()
    shutil.copy(OPENCLAW, folder / OPENCLAW.name)
    (ws / "clawmem.toml").write_text(f'[sessions]\npaths = ["{folder}"]\n', encoding="utf-8")
    approve(ws)
    return folder / OPENCLAW.name


def _page_of(ws: Path, pid: str) -> str:
    """The citation of proposal ``pid`` on its page (``proposals list --json``'s ``page``)."""
    return next(p["page"] for p in _list(ws) if p["id"] == pid)


def _list(ws: Path, status: str = "pending") -> list[dict]:
    r = cli("-w", str(ws), "proposals", "list", "--status", status, "--json")
    assert r.code == 0, r.err
    return json.loads(r.out)


def _flush(ws: Path, path: Path) -> dict:
    r = cli("-w", str(ws), "flush", str(path), "--json")
    assert r.code == 0, r.err
    return json.loads(r.out)


def test_rules_read_plans_preferences_decisions_and_dated_events():
    day = date(2026, 3, 2)

    def one(text: str, speaker: str | None = "Kate"):
        found = candidates(Said(text, "sessions/x.jsonl#L12-L12", day, speaker), ["Elise"])
        assert len(found) == 1, (text, found)
        return found[0]

    plan = one("I'm starting a pottery class on Tuesdays with Elise.")
    assert plan.kind == "W" and plan.entities == ("Kate", "Elise")
    assert plan.line == "- W @Kate @Elise: I'm starting a pottery class on Tuesdays with Elise."
    assert plan.source == "sessions/x.jsonl#L12-L12" and plan.day == "2026-03-02"
    assert one("I can't stand long replies in the morning.").kind == "O"
    assert one("Ok, let's go with Hetzner for the staging cluster.").text.startswith("Let's go")
    surgery = one("Mom's surgery is on the 14th, I'll drive her.")
    assert (
        surgery.kind == "W" and surgery.confidence > one("Let's go with Hetzner for it.").confidence
    )
    # A plan's bare weekday is the next one; what was done on one, the last one.
    thursday = date(2025, 11, 13)
    plan = candidates(Said("We agreed on a dry run on Monday.", "x#L1-L1", thursday))[0]
    did = candidates(Said("I went hiking on Monday with my dad.", "x#L1-L1", thursday))[0]
    assert (plan.day, did.day) == ("2025-11-17", "2025-11-10")
    # Questions and chatter are not candidates; a statement the model scores low is not proposed.
    for text in ("Are you going to the party tonight?", "Haha yes"):
        assert candidates(Said(text, "x#L1-L1", day, "Kate")) == []
    assert propose([Said("The weather is nice.", "x#L1-L1", day, "Kate")]) == []
    assert [p.text for p in propose([Said("I'm starting a pottery class.", "x#L1-L1", day)])]
    # The same line said twice is one proposal.
    twice = [Said("I'm starting a pottery class.", f"x#L{n}-L{n}", day, "Kate") for n in (1, 2)]
    assert [p.source for p in propose(twice)] == ["x#L1-L1"]


def test_each_speaker_gets_a_budget_per_stretch_of_talk():
    """A message is one proposal (its statements joined, its questions left out); in a stretch
    of talk each speaker's BUDGET best messages are proposed, and notes and decisions besides;
    a pause of STRETCH_PAUSE starts the next stretch, with a budget of its own."""
    from clawmem.reflect.fact_proposals import BUDGET, STRETCH_PAUSE

    day = date(2026, 3, 2)
    plans = [
        "I'm starting a pottery class on Tuesdays.",
        "I went hiking at the Grand Canyon with my dad last weekend.",
        "I'm going to visit my sister in Lisbon next month.",
        "I just finished my first half marathon this morning!",
        "I'm taking Italian lessons online this winter.",
    ]

    def at(n: int) -> str:  # a quarter of an hour apart: each message is a turn (TURN_GAP)
        return f"2026-03-02T{9 + n // 4:02d}:{15 * (n % 4):02d}"

    talk = [
        Said(f"{t} How about you?", f"c#L{n}-L{n}", day, "Kate", at(n))
        for n, t in enumerate(plans, 1)
    ]
    asked = (
        "Let's go with the early train on Friday.",
        "Before I forget: the spare key is at Ana's.",
    )
    talk += [Said(t, f"c#L{n}-L{n}", day, "Kate", at(n)) for n, t in enumerate(asked, 6)]
    every = scored(talk)
    assert len(every) == 7 and every[0].text == plans[0]  # the question is left out
    picked = {p.source for p in propose(talk)}
    assert {"c#L6-L6", "c#L7-L7"} <= picked  # a decision and a note, outside the budget
    assert len(picked) == BUDGET + 2
    best = sorted(every[:5], key=lambda p: -p.confidence)[:BUDGET]
    assert picked - {"c#L6-L6", "c#L7-L7"} == {p.source for p in best}
    # The other speaker has a budget of their own; so has the same speaker after a long pause.
    later = f"2026-03-02T{11 + STRETCH_PAUSE // 3600:02d}:30:00"
    more = [
        Said(plans[4], "c#L8-L8", day, "Elise", "2026-03-02T11:08"),
        Said(plans[3] + " Again.", "c#L9-L9", day, "Kate", later),
    ]
    assert {"c#L8-L8", "c#L9-L9"} <= {p.source for p in propose(talk + more)}


def test_the_conversation_around_a_sentence_moves_its_confidence():
    """The fitted model reads a sentence with the messages around it: one that answers a
    question and that the other person returns to scores higher than the same sentence alone."""
    day = date(2026, 3, 2)
    line = "I went to a pottery class with my sister."
    alone = candidates(Said(line, "c#L2-L2", day, "Kate"))[0].confidence
    talk = [
        Said("What did you do this weekend?", "c#L1-L1", day, "Elise"),
        Said(line, "c#L2-L2", day, "Kate"),
        Said("A pottery class! What did you make at the class?", "c#L3-L3", day, "Elise"),
        Said("A small pottery bowl, the class was fun.", "c#L4-L4", day, "Kate"),
    ]
    found = {p.source: p.confidence for p in scored(talk)}
    assert found["c#L2-L2"] > alone
    # Another file is another conversation: nothing carries over between them.
    other = [Said(line, "d#L1-L1", day, "Kate"), *talk[2:]]
    assert scored(other)[0].confidence == alone


def test_flush_proposes_accept_retains_with_citation_and_reflect_cites_it(ws, tmp_path, lexical):
    path = _configured(ws, tmp_path)
    res = _flush(ws, path)
    assert res["proposed"] == 3
    pending = _list(ws)
    by_line = {p["source"]: p for p in pending}
    assert set(by_line) == {f"{OC}#L4-L4", f"{OC}#L11-L11", f"{OC}#L13-L13"}
    redis = by_line[f"{OC}#L4-L4"]
    assert redis["line_text"].startswith("- W @payments-service: The staging Redis")
    assert redis["date"] == "2025-12-02" and 0 < redis["confidence"] <= 1
    page = ws / "memory" / "proposals" / "2025-12-02.md"
    text = page.read_text(encoding="utf-8")
    assert "## Retain" not in text and redis["line_text"] in text
    # Nothing is a fact before review: the day's log does not exist yet.
    assert not (ws / "memory" / "2025-12-02.md").exists()
    # Recall finds the proposal with the message it cites: one hit, the message's, carrying the
    # proposal's citation (copies.fold_into_sources; a transcript's line like a note's).
    r = json.loads(cli("-w", str(ws), "recall", "pay-fsn1 staging Redis", "-k", "20", "--json").out)
    said = next(h for h in r["results"] if h["citation"] == f"{OC}#L4-L4")
    assert said["proposed"] == [_page_of(ws, redis["id"])]
    assert not any(h["path"].startswith("memory/proposals/") for h in r["results"])
    # With the transcripts filtered out, the proposal is found on its own, cited on its page and
    # marked as one (the folder says it is one).
    r = cli("-w", str(ws), "recall", "pay-fsn1 staging Redis", "--source", "memory", "--json")
    marked = [
        h
        for h in json.loads(r.out)["results"]
        if h["citation"].startswith("memory/proposals/2025-12-02.md")
    ]
    assert marked and marked[0]["proposal"] == {"cites": [f"{OC}#L4-L4"]}

    r = cli("-w", str(ws), "proposals", "accept", redis["id"], "--json")
    assert r.code == 0, r.err
    done = json.loads(r.out)[0]
    assert done["status"] == "accepted" and done["retained"].startswith("memory/2025-12-02.md#L")
    log = (ws / "memory" / "2025-12-02.md").read_text(encoding="utf-8")
    assert f"{redis['line_text']}\n  - from {OC}#L4-L4\n" in log
    assert [p["id"] for p in _list(ws, "accepted")] == [redis["id"]]
    assert redis["id"] not in {p["id"] for p in _list(ws)}
    # A second accept says so and changes nothing.
    again = cli("-w", str(ws), "proposals", "accept", redis["id"])
    assert again.code != 0 and "accepted already" in again.err
    # The fact is a fact: recall reads it as one, with its kind and entity.
    r = json.loads(
        cli("-w", str(ws), "recall", "pay-fsn1", "--entity", "payments-service", "--json").out
    )
    fact = next(h for h in r["results"] if h["citation"].startswith("memory/2025-12-02.md"))
    assert fact["kind"] == "W" and "payments-service" in fact["entities"]
    # Reflect's entity page lists it, citing the log line that cites the conversation.
    assert cli("-w", str(ws), "reflect").code == 0
    entity = (ws / "bank" / "entities" / "payments-service.md").read_text(encoding="utf-8")
    line = next(x for x in entity.splitlines() if "staging Redis" in x)
    assert done["retained"].split("-L")[0] in line and f"said in {OC}#L4-L4" in line


def test_an_accepted_proposal_is_one_hit_with_the_message_it_came_from(ws, tmp_path, lexical):
    """Accepted, a proposal is a fact with the message's words: recall shows the fact (its kind,
    people, day) once, carrying the message's and the episode page's citations, where it showed
    the same sentence as the fact, the message and the episode page's line."""
    path = _configured(ws, tmp_path)
    _flush(ws, path)
    warelay = next(p for p in _list(ws) if p["source"] == f"{OC}#L11-L11")
    query = ["recall", "rename the warelay config file", "-k", "5", "--json"]
    before = json.loads(cli("-w", str(ws), *query).out)["results"]
    assert before[0]["citation"] == f"{OC}#L11-L11" and before[0]["proposed"]
    r = cli("-w", str(ws), "proposals", "accept", warelay["id"], "--json")
    assert r.code == 0, r.err
    fact = json.loads(r.out)[0]["retained"]
    hits = json.loads(cli("-w", str(ws), *query).out)["results"]
    said = [h for h in hits if "warelay.config.json in v1.0" in h["snippet"]]
    assert [h["citation"] for h in said] == [fact]
    assert said[0]["kind"] == "W" and said[0]["entities"] == ["warelay"]
    assert f"{OC}#L11-L11" in said[0]["copies"]
    assert any(c.startswith("memory/episodes/") for c in said[0]["copies"])
    # Filtered to the transcripts, the fact cannot stand for the message: the message is shown.
    only = cli("-w", str(ws), *query[:-1], "--source", "sessions", "--json")
    assert json.loads(only.out)["results"][0]["citation"] == f"{OC}#L11-L11"


def test_reject_is_never_proposed_again_and_a_second_run_proposes_nothing(ws, tmp_path, lexical):
    path = _configured(ws, tmp_path)
    assert _flush(ws, path)["proposed"] == 3
    assert _flush(ws, path)["proposed"] == 0  # idempotent
    fridays = next(p for p in _list(ws) if "Fridays" in p["line_text"])
    r = cli("-w", str(ws), "proposals", "reject", fridays["id"][:6])
    assert r.code == 0 and r.out.startswith(f"rejected {fridays['id']}"), r.err
    assert [p["id"] for p in _list(ws, "rejected")] == [fridays["id"]]
    ledger = (ws / ".clawmem" / "proposals-reviewed").read_text(encoding="utf-8")
    assert ledger.startswith("rejected ") and len(ledger.split()[1]) == 64
    # Even with its page gone, the rejected line is not proposed again by flush or reflect.
    (ws / "memory" / "proposals" / "2025-12-02.md").unlink()
    assert _flush(ws, path)["proposed"] == 2
    out = json.loads(cli("-w", str(ws), "reflect", "--json").out)
    assert out["fact_proposals"] > 0  # the daily logs' narrative, once
    assert all("Fridays" not in p["line_text"] for p in _list(ws, "all"))
    again = json.loads(cli("-w", str(ws), "reflect", "--json").out)
    assert again["fact_proposals"] == 0
    # An unknown id is a one-line error.
    bad = cli("-w", str(ws), "proposals", "reject", "ffffffffff")
    assert bad.code != 0 and "no proposal" in bad.err and "Traceback" not in bad.err


def test_daily_log_narrative_is_proposed_but_not_its_retain_section(ws, lexical):
    log = ws / "memory" / "2025-11-13.md"
    body = log.read_text(encoding="utf-8")
    assert "We agreed on a dry run" in body
    out = json.loads(cli("-w", str(ws), "reflect", "--json").out)
    assert out["fact_proposals"] > 0
    rows = _list(ws)
    agreed = next(p for p in rows if "We agreed on a dry run" in p["line_text"])
    n = int(agreed["source"].split("#L")[1].split("-")[0])
    assert "We agreed on a dry run" in body.splitlines()[n - 1]
    # Nothing proposed from a Retain section: those are facts already.
    retained = {
        line.split(": ", 1)[1]
        for line in body.splitlines()
        if line.startswith("- ") and ": " in line
    }
    assert not any(
        p["statement"] in retained for p in rows if p["source"].startswith("memory/2025-11-13")
    )


def test_a_rejected_proposal_is_not_shown_as_proposed(ws, lexical):
    """recall read no ledger: after `proposals reject`, the message's hit still said "proposed as
    a fact: …", as if the proposal were waiting for review. A rejected proposal still counts as
    the message it restates, but no hit says it is proposed."""
    assert cli("-w", str(ws), "reflect").code == 0
    agreed = next(p for p in _list(ws) if "We agreed on a dry run" in p["line_text"])
    r = cli("-w", str(ws), "proposals", "reject", agreed["id"])
    assert r.code == 0, r.err
    r = json.loads(cli("-w", str(ws), "recall", "agreed on a dry run", "-k", "10", "--json").out)
    hits = r["results"]
    assert hits[0]["citation"] == agreed["source"]
    assert "proposed" not in hits[0]
    assert not any(h["path"].startswith("memory/proposals/") for h in hits)  # still one hit
    shown = cli("-w", str(ws), "recall", "agreed on a dry run", "-k", "1").out
    assert "proposed as a fact" not in shown


def test_recall_reads_the_ledger_again_only_when_it_changed(ws, lexical, monkeypatch):
    """recall read and parsed the whole ledger on every query that found a proposal (a process
    that recalls many times, the MCP server, paid for it each time): it is read once, and again
    when a decision is added to it, and the answers are those of the ledger as it is."""
    from clawmem.markdown import proposal_ledger

    assert cli("-w", str(ws), "reflect").code == 0
    pending = _list(ws)
    agreed = next(p for p in pending if "We agreed on a dry run" in p["line_text"])
    other = next(p for p in pending if p["id"] != agreed["id"])
    assert cli("-w", str(ws), "proposals", "reject", other["id"]).code == 0
    # A ledger written this instant is read every time (racy: see the test below); as if the
    # decisions had settled, every reading here may be remembered.
    monkeypatch.setattr(proposal_ledger, "RACY_NS", 0)
    reads = []
    real = proposal_ledger.ledger_lines
    monkeypatch.setattr(proposal_ledger, "ledger_lines", lambda root: reads.append(1) or real(root))

    def ask() -> list[dict]:
        r = cli("-w", str(ws), "recall", "agreed on a dry run", "-k", "10", "--json")
        assert r.code == 0, r.err
        return json.loads(r.out)["results"]

    first = ask()
    assert first[0]["proposed"] == [agreed["page"]]
    assert ask() == first and ask() == first
    assert len(reads) == 1
    assert cli("-w", str(ws), "proposals", "reject", agreed["id"]).code == 0
    reads.clear()
    now = ask()
    assert len(reads) == 1 and "proposed" not in now[0]
    assert now[0]["citation"] == first[0]["citation"]


def test_a_proposal_found_with_its_source_is_one_hit_carrying_both_citations(ws, lexical):
    """A proposal restates the line it cites: found together, the line is shown once, with the
    proposal's citation on it, and the proposal spends no second hit (copies.fold_proposals).
    Without its source among the candidates (a path filter), the proposal is a hit of its own."""
    assert cli("-w", str(ws), "reflect").code == 0
    agreed = next(p for p in _list(ws) if "We agreed on a dry run" in p["line_text"])
    r = json.loads(cli("-w", str(ws), "recall", "agreed on a dry run", "-k", "10", "--json").out)
    hits = r["results"]
    assert hits[0]["citation"] == agreed["source"]
    assert hits[0]["proposed"] == [agreed["page"]]
    assert not any(h["path"].startswith("memory/proposals/") for h in hits)
    shown = cli("-w", str(ws), "recall", "agreed on a dry run", "-k", "1").out
    assert f"proposed as a fact: {agreed['page']}" in shown
    r = json.loads(
        cli(
            "-w", str(ws), "recall", "agreed on a dry run", "--path", "memory/proposals", "--json"
        ).out
    )
    assert r["results"][0]["citation"] == agreed["page"]
    assert r["results"][0]["proposal"] == {"cites": [agreed["source"]]}
    assert "proposed" not in r["results"][0]
    # Its source gone, the proposal is scored alone, on the scale of every other unit (its own
    # table's few rows would give its words an IDF near zero): first, as its source was.
    (ws / agreed["source"].split("#")[0]).unlink()
    r = json.loads(cli("-w", str(ws), "recall", "agreed on a dry run", "-k", "3", "--json").out)
    assert r["results"][0]["citation"] == agreed["page"]


def test_what_is_proposed_is_redacted(ws, tmp_path, lexical):
    t = Transcript(tmp_path / "cc" / "-home-me-code" / "7f3c2a10-5b4e-4c1d-9a8f-2e6d0b1c3a57.jsonl")
    t.user(f"Remember: the deploy bot now uses the token {TOKEN} for the registry.")
    res = _flush(ws, t.path)
    assert res["proposed"] == 1
    [p] = _list(ws)
    assert TOKEN not in p["line_text"] and "deploy bot" in p["line_text"]
    for page in (ws / "memory" / "proposals").iterdir():
        assert TOKEN not in page.read_text(encoding="utf-8")


def test_proposal_tools_over_mcp(ws, tmp_path, lexical):
    from .test_mcp import _ok, run_session

    _flush(ws, _configured(ws, tmp_path))
    pid = next(p["id"] for p in _list(ws) if "warelay" in p["line_text"])

    async def scenario(s, init):
        listed = _ok(await s.call_tool("memory_proposals", {}))
        accepted = _ok(await s.call_tool("memory_proposal_accept", {"id": pid}))
        after = _ok(await s.call_tool("memory_proposals", {"status": "accepted"}))
        return listed, accepted, after

    listed, accepted, after = run_session(tmp_path, ws, scenario, env={"CLAWMEM_VECTORS": "0"})
    assert listed["count"] == 3
    assert accepted["status"] == "accepted" and accepted["retained"].startswith("memory/2025-12-02")
    assert [p["id"] for p in after["proposals"]] == [pid]
    assert anyio  # the session runs on anyio, as test_mcp's do


def test_reflect_promotes_only_by_its_rule_and_never_into_memory_md(ws, lexical):
    """The promotion rule (proposal_review.PROMOTE_CONVERSATIONS): a statement proposed from
    three different daily logs becomes a fact without review, its note saying why; one from two
    stays a proposal; MEMORY.md is never touched."""
    from clawmem.reflect.proposal_review import PROMOTE_CONVERSATIONS

    assert PROMOTE_CONVERSATIONS == 3
    core = (ws / "MEMORY.md").read_bytes()
    thrice = "I'm starting a pottery class at the community center."
    twice = "I'm learning to play the cello with a teacher from Leipzig."
    for n, day in enumerate(("2025-11-20", "2025-11-21", "2025-11-22")):
        said = [thrice] + ([twice] if n < 2 else [])
        (ws / "memory" / f"{day}.md").write_text(
            f"# {day}\n\n" + "\n\n".join(said) + "\n", encoding="utf-8"
        )
    r = cli("-w", str(ws), "reflect", "--json")
    assert r.code == 0, r.err
    out = json.loads(r.out)
    [promoted] = out["promoted"]
    assert promoted["why"] == "said in 3 conversations" and thrice in promoted["line_text"]
    day, first = promoted["retained"].split("#L")
    line = int(first.split("-")[0])
    text = (ws / day).read_text(encoding="utf-8").splitlines()
    assert thrice in text[line - 1]
    assert "promoted by reflect: said in 3 conversations" in text[line]
    assert [p["statement"] for p in _list(ws, "accepted")] == [thrice]
    assert any(twice == p["statement"] for p in _list(ws))  # still waits for a person
    ledger = (ws / ".clawmem" / "proposals-reviewed").read_text(encoding="utf-8")
    assert " promoted " in ledger.splitlines()[-1]
    assert (ws / "MEMORY.md").read_bytes() == core
    # A second reflect promotes nothing more and proposes nothing new.
    again = json.loads(cli("-w", str(ws), "reflect", "--json").out)
    assert again["promoted"] == [] and again["fact_proposals"] == 0


def test_a_person_only_talked_about_gets_a_page_of_what_was_said(ws, tmp_path, lexical):
    """Anna never speaks and has no page: once a proposal about her is accepted, reflect writes
    her page, each line citing the daily log's fact and the conversation it was said in."""
    assert not (ws / "bank" / "entities" / "Anna.md").exists()
    t = Transcript(tmp_path / "cc" / "-home-me-code" / "5d2e8a41-7c3b-4f6a-8e9d-1b2c3d4e5f60.jsonl")
    t.user("Quick one before we start. My sister Anna is getting married in Lisbon on June 14th.")
    t.assistant("Congratulations to Anna! Should I block June 14th in your calendar?")
    t.user("Yes please. Anna's wedding is the whole weekend, so keep June 13th free too.")
    assert _flush(ws, t.path)["proposed"] >= 1
    about = [p for p in _list(ws) if "Anna" in p["entities"]]
    assert about, _list(ws)
    for p in about:
        r = cli("-w", str(ws), "proposals", "accept", p["id"])
        assert r.code == 0, r.err
    assert cli("-w", str(ws), "reflect").code == 0
    page = (ws / "bank" / "entities" / "Anna.md").read_text(encoding="utf-8")
    for p in about:
        line = next(x for x in page.splitlines() if p["statement"] in x)
        assert re.search(r"memory/\d{4}-\d{2}-\d{2}\.md#L\d+", line), line
        assert f"said in {p['source']}" in line and p["source"].startswith("sessions/")


def test_proposals_wait_for_the_lock_and_never_write_through_a_link(ws, tmp_path, lexical):
    """While another writer holds the write lock, a flush writes its episode page but proposes
    nothing (the pages are written only under the lock); the next flush proposes. A proposals
    folder that is a link out of the workspace is refused with a one-line error, nothing written
    through it."""
    from clawmem.files.locking import write_lock

    path = _configured(ws, tmp_path)
    with write_lock(ws / ".memory", timeout=5, purpose="a long clawmem index"):
        assert _flush(ws, path)["proposed"] == 0
    assert not (ws / "memory" / "proposals").exists()
    assert _flush(ws, path)["proposed"] == 3

    other = tmp_path / "ws2"
    shutil.copytree(REPO / "fixtures" / "workspace", other)
    outside = tmp_path / "outside"
    outside.mkdir()
    (other / "memory" / "proposals").symlink_to(outside, target_is_directory=True)
    r = cli("-w", str(other), "flush", str(path))
    assert r.code != 0 and "memory/proposals" in r.err and "link" in r.err
    assert len(r.err.strip().splitlines()) <= 2 and "Traceback" not in r.err
    r = cli("-w", str(other), "reflect")
    assert r.code != 0 and "link" in r.err
    assert list(outside.iterdir()) == []


def test_proposal_pages_are_only_appended_to(ws, tmp_path, lexical):
    """A person's notes on a proposals page stay: the next proposals are appended after them,
    and what was there before is left byte for byte."""
    t = Transcript(tmp_path / "cc" / "-home-me-code" / "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d.jsonl")
    t.user("Before I forget: the staging database now lives on db-fsn2.")
    assert _flush(ws, t.path)["proposed"] == 1
    [page] = (ws / "memory" / "proposals").iterdir()
    page.write_text(page.read_text(encoding="utf-8") + "\nMy note: check with Linh.\n", "utf-8")
    before = page.read_bytes()
    t.user("Let's go with Hetzner for the new staging cluster.")
    assert _flush(ws, t.path)["proposed"] == 1
    after = page.read_bytes()
    assert after.startswith(before) and b"Hetzner" in after[len(before) :]
    assert len(_list(ws)) == 2


def _lexical(ws: Path, query: str, f: Filters | None = None) -> list[tuple[str, int, float]]:
    """The lexical leg's hits for ``query``: (path, first line, score rounded: the digits past
    the ninth are the CPU's to decide)."""
    idx = open_workspace(ws).indexer.open_for_read()
    try:
        hits, _ = legs.lexical_leg(idx, build_query(query), f or Filters(), 80)
        rows = {
            h.chunk_id: idx.conn.execute(
                "SELECT path, start_line FROM chunks WHERE id = ?", (h.chunk_id,)
            ).fetchone()
            for h in hits
        }
        return [(rows[h.chunk_id][0], rows[h.chunk_id][1], round(h.score, 9)) for h in hits]
    finally:
        idx.close()


def test_proposals_leave_every_other_units_lexical_score_as_it_was(ws, tmp_path, lexical):
    """A proposal restates its source's words; indexed with the rest, they would raise those
    words' document frequencies and the average length, and lower other units' BM25 scores, the
    source's first (issue 44: recall no worse with proposals indexed). Its lexical row lives
    apart (proposals_fts), and it is scored as its source: the same workspace with and without
    its proposal pages gives every other unit the same score and place."""
    assert cli("-w", str(ws), "reflect").code == 0
    assert list((ws / "memory" / "proposals").glob("*.md"))
    without = tmp_path / "without"
    shutil.copytree(ws, without, ignore=shutil.ignore_patterns(".memory"))
    shutil.rmtree(without / "memory" / "proposals")
    for root in (ws, without):
        assert cli("-w", str(root), "index", "--force").code == 0
    source = {}  # (page, line) -> (the path it cites, the line)
    for p in _list(ws):
        page, line = p["page"].split("#L")
        cited, first = p["source"].split("#L")
        source[page, int(line.split("-")[0])] = (cited, int(first.split("-")[0]))
    rode = 0
    for query in ("agreed on a dry run with a copy of production", "database worry Peter"):
        plain = _lexical(without, query)
        found = _lexical(ws, query)
        assert plain and [h for h in found if not h[0].startswith("memory/proposals/")] == plain
        for i, h in enumerate(found):
            if h[0].startswith("memory/proposals/"):
                # right after the message it restates, with its score: the two fold into one
                cited, line = source[h[0], h[1]]
                j = i - 1
                while j >= 0 and found[j][0].startswith("memory/proposals/"):
                    j -= 1  # another proposal of the same message
                assert j >= 0 and found[j][0] == cited and found[j][1] <= line
                assert found[j][2] == h[2]
                rode += 1
    assert rode


def test_a_speakers_run_of_messages_is_one_turn_citing_its_lines():
    """Messages a speaker sends one after another (each within TURN_GAP of the last) are one
    turn, proposed as one line that cites them all; a pause, the other speaker, the agent's
    context or a log's paragraphs (no time) keep messages apart."""
    from clawmem.reflect.fact_proposals import TURN_GAP, turns

    day = date(2026, 3, 2)
    burst = [
        Said("Im out shopping rn", "c#L1-L1", day, "Kate", "2026-03-02T10:00:00"),
        Said("I just bought a jello mold for the party tonight", "c#L2-L2", day, "Kate",
             "2026-03-02T10:00:20"),
    ]  # fmt: skip
    (p,) = propose(burst)
    assert p.source == "c#L1-L2" and "shopping" in p.text and "jello mold" in p.text
    late = f"2026-03-02T10:{1 + TURN_GAP // 60:02d}:00"
    apart = [
        burst[0],
        Said("Nice, what kind?", "c#L2-L2", day, "Elise", "2026-03-02T10:00:10"),
        Said(burst[1].text, "c#L3-L3", day, "Kate", "2026-03-02T10:00:30"),
        Said("I got the lime one in the end", "c#L4-L4", day, "Kate", late),
        Said("I'm baking too", "c#L5-L5", day, "assistant", late, context_only=True),
    ]
    assert [t.source for t in turns(apart)] == [f"c#L{n}-L{n}" for n in range(1, 6)]
    log = [Said("I went to Lisbon.", "memory/x.md#L1-L1", day),
           Said("I got a new bike.", "memory/x.md#L3-L3", day)]  # fmt: skip
    assert turns(log) == log


def test_a_turns_line_keeps_the_sentence_that_scored_it():
    """A turn is up to TURN_CHARS characters, and its line is not cut shorter: a speaker who
    types three messages and says the plan in the last proposes a line that says the plan (cut
    at 300 characters, the line lost it and kept the kind and day it gave)."""
    from clawmem.reflect.fact_proposals import TURN_CHARS

    day = date(2026, 3, 2)
    said = [
        Said("Long week honestly, the office moved floors and nobody could find the printer or "
             "the good coffee machine for three whole days", "c#L1-L1", day, "Kate",
             "2026-03-02T10:00:00"),
        Said("Also the heating broke again on Wednesday so we all sat there in our coats "
             "pretending to answer emails while the landlord argued with the plumber",
             "c#L2-L2", day, "Kate", "2026-03-02T10:01:00"),
        Said("Anyway I'm starting a pottery class on Tuesdays with my sister Anna",
             "c#L3-L3", day, "Kate", "2026-03-02T10:02:00"),
    ]  # fmt: skip
    assert 300 < sum(len(s.text) + 1 for s in said) < TURN_CHARS
    (p,) = propose(said)
    assert p.source == "c#L1-L3" and p.kind == "W"
    assert "pottery class on Tuesdays with my sister Anna" in p.text
    assert "Anna" in p.entities


def test_casual_spellings_read_as_written_ones():
    """ "im gonna", "ive been", "i got" read as "I'm", "I've", "I" by the rules and features:
    the same kind and nearly the same confidence (its length and words differ), the line as
    typed."""
    day = date(2026, 3, 2)
    for casual, written in (
        ("im gonna start a pottery class on tuesdays", "I'm gonna start a pottery class on tuesdays"),
        ("ive been learning to knit since january", "I've been learning to knit since january"),
        ("today i got my first paycheck from the bakery", "today I got my first paycheck from the bakery"),
    ):  # fmt: skip
        (a,) = candidates(Said(casual, "x#L1-L1", day, "Kate"))
        (b,) = candidates(Said(written, "x#L1-L1", day, "Kate"))
        assert a.kind == b.kind and abs(a.confidence - b.confidence) <= 0.05, (casual, a, b)
        assert a.text.lower() == casual.lower()


def test_a_statement_without_its_i_is_read_as_the_speakers_own():
    """ "Started a pottery class today", "Been busy all week", "gonna fly to Lisbon on Friday":
    the "I" a chat leaves out is read back, so the rules and features read them as the same
    sentence written out (the same kind, nearly the same confidence); the line stays as typed.
    "Got it, thanks" is an acknowledgement, not something done."""
    day = date(2026, 3, 2)
    for kind, dropped, written in (
        ("B", "Started a pottery class on Tuesdays", "I started a pottery class on Tuesdays"),
        ("B", "Oh, just got back from hiking in the Alps", "Oh, I just got back from hiking in the Alps"),
        ("B", "Been training for the half marathon", "I've been training for the half marathon"),
        ("W", "gonna fly to Lisbon on Friday for work", "I'm gonna fly to Lisbon on Friday for work"),
    ):  # fmt: skip
        (a,) = candidates(Said(dropped, "x#L1-L1", day, "Kate"))
        (b,) = candidates(Said(written, "x#L1-L1", day, "Kate"))
        assert a.kind == b.kind == kind, (dropped, a, b)
        assert abs(a.confidence - b.confidence) <= 0.05, (dropped, a, b)
        assert dropped.lower().endswith(a.text.lower())  # as typed, less its "Oh,"
    (thanks,) = candidates(Said("Got it, thanks for the tip on the trail", "x#L1-L1", day, "Kate"))
    (done,) = candidates(Said("Got a new bike for the trail last week", "x#L1-L1", day, "Kate"))
    assert thanks.kind == "W" and done.kind == "B"


def test_a_day_named_without_its_year_is_the_next_one_when_the_sentence_looks_ahead():
    """Said on 27 January: a trip planned "on the 10th of February" is in February to come (the
    time parser, written for questions about the past, read last year's), as is a flight that "is
    on March 3"; "on the 14th" of a surgery to come is 14 February; what was done keeps its past
    day, and "the 5th floor" is no day."""
    said_on = date(2026, 1, 27)

    def day(text: str) -> str:
        (p,) = candidates(Said(text, "x#L1-L1", said_on, "Kate"))
        return p.day

    assert (
        day("My back still hurts but I managed to plan a trip to Athens on the 10th of February.")
        == "2026-02-10"
    )
    assert day("My flight to Lisbon is on March 3, so I'm packing early.") == "2026-03-03"
    assert day("Mom's surgery is on the 14th, so I'm taking the week off work.") == "2026-02-14"
    assert day("I went to Athens with my sister on the 10th of January.") == "2026-01-10"
    assert day("My birthday was on the 20th and we went bowling with my cousins.") == "2026-01-20"
    assert day("I moved into a new flat on the 5th floor with my partner.") == "2026-01-27"


def test_advice_to_the_other_person_is_no_note_to_keep():
    """Between two people, "Remember, …" said to the listener (advice, a maxim, "remember how
    I told you") is not a note: it is not proposed outside the budget, where a note about
    oneself still is. Said to an assistant (whose replies are context), the same line is a note."""
    day = date(2026, 3, 2)

    def at(n: int) -> str:  # a quarter of an hour apart: each message is a turn
        return f"2026-03-02T{9 + n // 4:02d}:{15 * (n % 4):02d}"

    kate = [
        "I'm flying to Lisbon next week for the conference.",
        "I started a pottery class on Tuesdays with my sister.",
        "Remember, the key is to keep your hair moisturized every day.",
        "Remember how I told you about the old bakery on the corner.",
        "Remember: I'm allergic to peanuts, so no satay at the party.",
    ]
    talk = [Said(t, f"c#L{n}-L{n}", day, "Kate", at(n)) for n, t in enumerate(kate, 1)]
    talk.insert(1, Said("Oh nice, tell me more!", "c#L9-L9", day, "Elise", at(1)))
    picked = {p.source for p in propose(talk)}
    assert {"c#L1-L1", "c#L2-L2", "c#L5-L5"} <= picked
    assert not picked & {"c#L3-L3", "c#L4-L4"}
    # To an assistant, "remember, … your …" is what the user asks it to keep.
    alone = [Said(kate[2], "s#L1-L1", day, None, at(1)),
             Said("Noted!", "s#L2-L2", day, "assistant", at(2), context_only=True)]  # fmt: skip
    assert [p.source for p in propose(alone)] == ["s#L1-L1"]


def test_a_rejected_turn_does_not_come_back_grown_by_a_later_message(tmp_path):
    """A transcript flushed, then flushed again after the user added to the same turn: the turn,
    now longer, goes on from a line a person rejected, so it is not proposed again; a new turn
    is. Had the first still been pending, the longer turn would be proposed beside it."""
    from clawmem.reflect.proposal_review import _append, record

    day = date(2026, 3, 2)
    first = [Said("I'm starting a pottery class on Tuesdays", "s.jsonl#L1-L1", day, None,
                  "2026-03-02T10:00:00")]  # fmt: skip
    (p,) = record(tmp_path, propose(first), day)
    _append(tmp_path, ".clawmem/proposals-reviewed", f"rejected {p.key}\n", "")
    grown = first + [
        Said("with my sister Anna, at the studio downtown", "s.jsonl#L2-L2", day, None,
             "2026-03-02T10:00:40"),
        Said("Nice!", "s.jsonl#L3-L3", day, "assistant", "2026-03-02T10:01:00", context_only=True),
        Said("I'm flying to Lisbon next week for the conference", "s.jsonl#L4-L4", day, None,
             "2026-03-02T11:30:00"),
    ]  # fmt: skip
    assert [q.source for q in propose(grown)][0] == "s.jsonl#L1-L2"
    assert [q.source for q in record(tmp_path, propose(grown), day)] == ["s.jsonl#L4-L4"]
    assert record(tmp_path, propose(grown), day) == []
    pending = tmp_path / "pending"
    pending.mkdir()
    record(pending, propose(first), day)
    assert [q.source for q in record(pending, propose(grown), day)] == [
        "s.jsonl#L1-L2",
        "s.jsonl#L4-L4",
    ]


def test_a_decided_turn_stays_decided_when_its_page_is_deleted(tmp_path):
    """The ledger keeps where a decided turn started and a hash of its text: a person who
    rejects a proposal and then deletes the proposals page does not get the same turn back,
    grown by a later message (before, only the page told the grown turn from a new one)."""
    from clawmem.reflect.proposal_review import LEDGER, PAGE_DIR, _decision, _ledger, record

    day = date(2026, 3, 2)
    first = [Said("I'm starting a pottery class on Tuesdays", "s.jsonl#L1-L1", day, None,
                  "2026-03-02T10:00:00")]  # fmt: skip
    (p,) = record(tmp_path, propose(first), day)
    line = _decision("rejected", p)
    assert line.startswith(f"rejected {p.key} ") and line.rstrip().endswith(" s.jsonl#L1")
    (tmp_path / LEDGER).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / LEDGER).write_text("accepted " + "0" * 64 + " promoted\n" + line)
    assert _ledger(tmp_path) == {"0" * 64: "accepted", p.key: "rejected"}  # old lines still read
    for page in (tmp_path / PAGE_DIR).iterdir():
        page.unlink()
    grown = first + [
        Said("with my sister Anna, at the studio downtown", "s.jsonl#L2-L2", day, None,
             "2026-03-02T10:00:40"),
        Said("I'm flying to Lisbon next week for the conference", "s.jsonl#L4-L4", day, None,
             "2026-03-02T11:30:00"),
    ]  # fmt: skip
    assert [q.source for q in propose(grown)][0] == "s.jsonl#L1-L2"
    assert [q.source for q in record(tmp_path, propose(grown), day)] == ["s.jsonl#L4-L4"]


def test_a_statement_naming_someone_with_at_is_proposed_once(tmp_path, lexical):
    """A log line that writes a mention inline ("the call with @bob") is proposed once, under
    the id `proposals list` shows: the page's line is read back as the proposal written (its
    lead mentions), not as one more entity, whose key no page held (every reflect appended the
    same proposal again, under an id that no longer named it)."""
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "2025-11-03.md").write_text(
        "# 2025-11-03\n\nWe decided to go with Hetzner for staging after the call with @bob.\n",
        encoding="utf-8",
    )
    for _ in range(3):
        assert cli("-w", str(ws), "reflect").code == 0
    page = (ws / "memory" / "proposals" / "2025-11-03.md").read_text(encoding="utf-8")
    assert page.count("Hetzner") == 1, page
    [listed] = _list(ws)
    assert f"proposal {listed['id']}," in page
    assert cli("-w", str(ws), "proposals", "reject", listed["id"]).code == 0
    (ws / "memory" / "proposals" / "2025-11-03.md").unlink()
    assert cli("-w", str(ws), "reflect").code == 0
    assert not (ws / "memory" / "proposals" / "2025-11-03.md").exists()


def test_a_transcript_whose_name_holds_a_space_is_proposed_once_and_reviewable(
    ws, tmp_path, lexical
):
    """A transcript named "chat one.jsonl": its proposals' notes cite a path with a space, which
    the page's reader read as no note at all, so each flush appended them again and `proposals
    list` showed none."""
    folder = tmp_path / "oc-sessions"
    folder.mkdir()
    shutil.copy(OPENCLAW, folder / "chat one.jsonl")
    (ws / "clawmem.toml").write_text(f'[sessions]\npaths = ["{folder}"]\n', encoding="utf-8")
    approve(ws)
    for _ in range(3):
        _flush(ws, folder / "chat one.jsonl")
    page = (ws / "memory" / "proposals" / "2025-12-02.md").read_text(encoding="utf-8")
    assert page.count("  - proposal ") == 3, page
    pending = _list(ws)
    assert len(pending) == 3
    assert {p["source"].split("#")[0] for p in pending} == {"sessions/chat one.jsonl"}
    # Recall cites the whole path too.
    r = cli("-w", str(ws), "recall", "pay-fsn1 staging Redis", "--source", "memory", "--json")
    cites = [h["proposal"]["cites"] for h in json.loads(r.out)["results"] if "proposal" in h]
    assert ["sessions/chat one.jsonl#L4-L4"] in cites, cites
    r = cli("-w", str(ws), "proposals", "reject", pending[0]["id"])
    assert r.code == 0, r.err
    assert len(_list(ws)) == 2


def test_a_ledger_or_page_with_bytes_that_are_not_utf8_ends_nothing_and_loses_nothing(
    tmp_path, lexical
):
    """A ledger or proposals page that came with a clone, or from a merge, holding a line that is
    not UTF-8: `proposals list` and a nightly reflect read the other lines (it was an internal
    error, exit 70), a page's proposals are not appended again, and the next decision keeps the
    foreign bytes as they were."""
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "2025-11-03.md").write_text(
        "# 2025-11-03\n\nWe decided to go with Hetzner for the staging cluster.\n\n"
        "Let's go with Grafana for the dashboards of the staging cluster.\n",
        encoding="utf-8",
    )
    ledger = ws / ".clawmem" / "proposals-reviewed"
    ledger.parent.mkdir()
    foreign = b"<<<<<<< HEAD\n\xff\xfe not ours\nrejected " + b"a" * 64 + b" " + b"9" * 5000
    foreign += b" 0123456789abcdef memory/2025-11-03.md#L3\n"  # int() of it raised
    ledger.write_bytes(foreign)
    assert cli("-w", str(ws), "reflect").code == 0
    page = ws / "memory" / "proposals" / "2025-11-03.md"
    page.write_bytes(page.read_bytes() + b"\xff a hand edit\n")
    before = page.read_bytes()
    r = cli("-w", str(ws), "reflect")
    assert r.code == 0, r.err
    assert page.read_bytes() == before  # nothing proposed again
    pending = _list(ws)
    assert len(pending) == 2
    r = cli("-w", str(ws), "proposals", "reject", pending[0]["id"])
    assert r.code == 0, r.err
    assert ledger.read_bytes().startswith(foreign)
    assert [p["id"] for p in _list(ws, "rejected")] == [pending[0]["id"]]


def test_a_token_without_transcripts_cannot_review_theirs_by_a_longer_id(
    ws, tmp_path, lexical, monkeypatch
):
    """Over HTTP, a token without --sessions cannot accept or reject a proposal said in a
    transcript, whatever length of its id it gives (an id longer than the ten digits shown
    matched none of them and went unchecked: the reject went through, with the line)."""
    from .test_mcp_http import start_server, text, token
    from .test_mcp_reach import calls

    monkeypatch.setenv("CLAWMEM_TOKENS_FILE", str(tmp_path / "tokens.json"))
    _flush(ws, _configured(ws, tmp_path))
    p = _list(ws)[0]
    assert p["source"].startswith("sessions/")
    key = hashlib.sha256(p["line_text"].encode("utf-8")).hexdigest()
    plain = token("plain", ws, "--write")
    server = start_server(ws, tmp_path)
    try:
        answers = calls(
            server.url,
            plain,
            [("memory_proposal_reject", {"id": pid}) for pid in (p["id"], key[:12], key)],
        )
    finally:
        server.stop()
    for got in answers:
        assert got.is_error and "no proposal" in text(got), text(got)
    assert p["id"] in {q["id"] for q in _list(ws)}  # still pending


def test_a_note_with_a_long_run_of_spaces_is_read_in_linear_time(tmp_path):
    """A proposals page (a clone's, a hand edit) whose note holds a long run of spaces: the
    note's citation, read to the line's end, is read in linear time (a lazy match before the
    trailing spaces took 20 s for 40,000 of them, in `proposals list` and in every recall that
    showed the page)."""
    import time

    from clawmem.recall.results import _PROPOSAL_CITES
    from clawmem.reflect.proposal_review import _page_entries

    note = "  - proposal 0123456789, confidence 0.50, from a" + " " * 40_000 + "b"
    page = "## Proposed\n- W: Kate moved to Porto\n" + note + "\n"
    t0 = time.process_time()
    [(p, _line)] = _page_entries(page)
    assert _PROPOSAL_CITES.findall(page) == [p.source]
    assert time.process_time() - t0 < 2.0
    assert p.source == "a" + " " * 40_000 + "b"


def test_coverage_asks_proposals_fts_once_it_holds_rows(ws, lexical, monkeypatch):
    """Relevance's coverage reads a proposal's words from proposals_fts; a workspace with no
    proposals skips that table (a query a term and unit that finds nothing). A process that
    keeps its index open sees the first proposals another process writes: the skip is
    remembered only while the index is unchanged."""
    assert not list((ws / "memory").glob("proposals/*.md"))
    assert cli("-w", str(ws), "index").code == 0
    idx = open_workspace(ws).indexer.open_for_read()
    try:
        assert not bm25_topk.has_rows(idx, "proposals_fts")
        assert cli("-w", str(ws), "reflect").code == 0
        assert cli("-w", str(ws), "index").code == 0
        assert bm25_topk.has_rows(idx, "proposals_fts")  # the same connection, told
        q = build_query("agreed on a dry run with a copy of production")
        rows = idx.conn.execute("SELECT id, path FROM chunks").fetchall()
        ids = [r[0] for r in rows]
        proposed = [r[0] for r in rows if r[1].startswith("memory/proposals/")]
        got = legs.coverage(idx, q, ids)
        assert proposed and max(got[p] for p in proposed) > 0
        # Asked of both tables whatever they hold (main's way): the same shares, bit for bit.
        monkeypatch.setattr(bm25_topk, "has_rows", lambda index, table: True)
        assert legs.coverage(idx, q, ids) == got
    finally:
        idx.close()


def test_a_rejected_turn_grown_in_three_conversations_is_not_promoted(ws, tmp_path, lexical):
    """A statement said in three conversations, rejected, then grown in each by the user's next
    message: the longer turn goes on from a rejected one, so no page holds it. Reflect promoted
    it anyway (said in 3 conversations), and accepting an id no page held ended that reflect,
    and every later one, with "no proposal 'ee75727cd9'" (exit 7)."""
    said = "I'm starting a pottery class at the community center on Tuesdays."
    talks = []
    for i in range(3):
        t = Transcript(tmp_path / "cc" / "-home-me-code" / f"{uuid.UUID(int=i + 1)}.jsonl")
        t.user(said)
        _flush(ws, t.path)
        talks.append(t)
    [pid] = [p["id"] for p in _list(ws) if p["statement"] == said]
    assert cli("-w", str(ws), "proposals", "reject", pid).code == 0
    for t in talks:
        t.user("My sister Anna comes along with me.")  # the same turn, grown
        t.assistant("Nice.")
    for _ in range(2):
        r = cli("-w", str(ws), "reflect", "--json")
        assert r.code == 0, r.err
        out = json.loads(r.out)
        assert out["promoted"] == [] and not any("pottery" in w for w in out["warnings"])
    assert not any("pottery" in p["statement"] for p in _list(ws))
    assert [p["statement"] for p in _list(ws, "rejected")] == [said]
    assert "pottery" not in "".join(p.read_text() for p in (ws / "memory").glob("2026-*.md"))


def test_the_ledger_and_a_page_are_appended_in_place_while_a_program_holds_them_open(
    tmp_path, lexical
):
    """The ledger and the proposals pages are only ever appended to, but each append renamed a
    rewritten copy over the file: what a program holding it open wrote afterwards was lost."""
    import os

    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    log = ws / "memory" / "2025-11-03.md"
    log.write_text(
        "# 2025-11-03\n\nWe decided to go with Hetzner for staging after the call.\n\n"
        "I'm starting a pottery class at the community center on Tuesdays.\n",
        encoding="utf-8",
    )
    assert cli("-w", str(ws), "reflect").code == 0
    first, second = (p["id"] for p in _list(ws))
    assert cli("-w", str(ws), "proposals", "reject", first).code == 0
    ledger = ws / ".clawmem" / "proposals-reviewed"
    page = ws / "memory" / "proposals" / "2025-11-03.md"
    held = {p: (os.open(p, os.O_WRONLY | os.O_APPEND), p.stat().st_ino) for p in (ledger, page)}
    try:
        assert cli("-w", str(ws), "proposals", "reject", second).code == 0
        with log.open("a", encoding="utf-8") as fh:
            fh.write("\nI'm flying to Lisbon next week for the conference.\n")
        assert cli("-w", str(ws), "reflect").code == 0
        for fd, _ in held.values():
            os.write(fd, b"<!-- a note written by another program -->\n")
    finally:
        for fd, _ in held.values():
            os.close(fd)
    for p, (_, ino) in held.items():
        text = p.read_text(encoding="utf-8")
        assert p.stat().st_ino == ino and text.endswith("another program -->\n"), (p, text)
    assert len(ledger.read_text().splitlines()) == 3  # two decisions and the note
    assert "Lisbon" in page.read_text(encoding="utf-8")
    assert [p["statement"] for p in _list(ws, "rejected")] and "Lisbon" in _list(ws)[0]["statement"]


def test_a_ledger_over_its_cap_is_not_read(ws, lexical):
    """The ledger comes with a clone, of any size, and recall reads it too: one of gigabytes was
    read whole by `proposals list`, `reflect` and every recall that met a proposal. Over its cap
    it is refused in one line, and recall goes on without it."""
    from clawmem.markdown.proposal_ledger import LEDGER, MAX_BYTES

    assert cli("-w", str(ws), "reflect").code == 0
    ledger = ws / LEDGER
    ledger.parent.mkdir(exist_ok=True)
    with ledger.open("wb") as f:  # sparse: over the cap, one line on the disk
        f.write(b"rejected " + b"0" * 64 + b"\n")
        f.truncate(MAX_BYTES + 1)
    r = cli("-w", str(ws), "proposals", "list")
    assert r.code == 7 and r.err.startswith(f"clawmem: error: {LEDGER}: over "), r.err
    r = cli("-w", str(ws), "recall", "agreed on a dry run", "-k", "3", "--json")
    assert r.code == 0 and json.loads(r.out)["results"], r.err


# Two stretches of one speaker (a pause of hours between them): in each, three turns pass the
# budget's bounds; the third of the first says what happened to her, the third of the second
# laughs at what the other said.
_THIRD_TURNS = [
    "I went hiking in the hills with my dad last weekend.",
    "I'm starting Italian lessons online next week.",
    "I visited my aunt in the hospital yesterday after her knee operation.",
    "I'm going to visit my sister in Lisbon next month.",
    "I just finished my first half marathon this morning!",
    "I'm laughing so hard right now haha, that's hilarious!",
]


def _third_turn_talk() -> list[Said]:
    day = date(2026, 3, 2)
    return [
        Said(t, f"c#L{n}-L{n}", day, "Kate", f"2026-03-02T{at}")
        for n, (t, at) in enumerate(
            zip(_THIRD_TURNS, ("09:15", "09:30", "09:45", "18:15", "18:30", "18:45"), strict=True),
            1,
        )
    ]


def test_the_embedder_reads_the_turn_the_budget_leaves_just_out(shared_model):
    """With the embedder's reading (turn_reading.py, the real model), a speaker's third turn in
    a stretch is proposed when it reads as an event, not when it reads as talk around one;
    without a reading, or with a model the threshold was not chosen with, the budget is two."""
    from clawmem.config import Config
    from clawmem.embedders.model_choice import load_embedder
    from clawmem.embedders.testing import HashEmbedder
    from clawmem.reflect.fact_proposals import BUDGET, RELATIVE, _conversations, _scored_messages
    from clawmem.reflect.turn_reading import THRESHOLD, TurnReading

    talk = _third_turn_talk()
    # Each stretch's third turn passes the bounds the first two pass: only the budget leaves it.
    conv = _conversations(talk)[0]
    by_at = {m.at: m.confidence for m in _scored_messages(conv)}
    for part in ((0, 1, 2), (3, 4, 5)):
        ranked = sorted(part, key=lambda i: (-by_at[i], i))
        assert BUDGET == 2 and ranked[2] == part[2]
        assert by_at[ranked[2]] >= max(0.15, RELATIVE * by_at[ranked[0]])
    before = {p.source for p in propose(talk)}
    assert before == {"c#L1-L1", "c#L2-L2", "c#L4-L4", "c#L5-L5"}

    model = load_embedder(REPO, Config())
    read = TurnReading(lambda _count: model)
    hospital, laughing = read([_THIRD_TURNS[2], _THIRD_TURNS[5]]) or []
    assert round(hospital, 3) >= THRESHOLD > round(laughing, 3)
    assert {p.source for p in propose(talk, (), read)} == before | {"c#L3-L3"}

    other = TurnReading(lambda _count: HashEmbedder())
    assert other(["anything"]) is None  # not the model the threshold was chosen with
    assert {p.source for p in propose(talk, (), other)} == before
    assert {p.source for p in propose(talk, (), TurnReading(lambda _count: None))} == before


def _write_third_turns(ws: Path) -> str:
    """A daily log of the first stretch's three turns (``_THIRD_TURNS``); its day."""
    day = "2026-03-02"
    body = [f"# {day}", ""]
    for t in _THIRD_TURNS[:3]:
        body += [t, ""]
    (ws / "memory" / f"{day}.md").write_text("\n".join(body), encoding="utf-8")
    return day


def test_reflect_proposes_the_third_turn_that_reads_as_an_event(indexed, monkeypatch):
    """`clawmem reflect` with the real model reads the turns its budget leaves just out; with
    vectors off it proposes as flush does (the budget of two)."""
    day = _write_third_turns(indexed)
    lexical_copy = indexed.parent / "lexical"
    shutil.copytree(indexed, lexical_copy)
    out = json.loads(cli("-w", str(indexed), "reflect", "--json").out)
    assert out["fact_proposals"] > 0
    mine = {p["statement"] for p in _list(indexed) if p["source"].startswith(f"memory/{day}.md")}
    assert mine == set(_THIRD_TURNS[:3])

    monkeypatch.setenv("CLAWMEM_VECTORS", "0")
    assert cli("-w", str(lexical_copy), "reflect", "--json").code == 0
    rows = _list(lexical_copy)
    mine = {p["statement"] for p in rows if p["source"].startswith(f"memory/{day}.md")}
    assert mine == set(_THIRD_TURNS[:2])


def test_reflect_says_when_the_turn_reading_was_skipped(ws, hash_model):
    """With a model other than the one the reading's threshold was chosen with, the turns the
    budget leaves out were not read, silently: `reflect --json` says so in ``degraded``, and
    the human summary names it."""
    _write_third_turns(ws)
    other = ws.parent / "other"
    shutil.copytree(ws, other)
    out = json.loads(cli("-w", str(ws), "reflect", "--json").out)
    assert out["fact_proposals"] > 0
    assert len(out["degraded"]) == 1 and out["degraded"][0].startswith("turn reading skipped")
    assert "multilingual-e5-small" in out["degraded"][0]
    human = cli("-w", str(other), "reflect")
    assert human.code == 0 and "degraded: turn reading skipped" in human.out


def test_a_ledger_changed_just_now_is_read_again(ws, lexical, monkeypatch):
    """The ledger's reading was remembered by its stat (inode, size, modification and change
    times): a rewrite in place of the same size within one tick of the file system's clock
    has the same stat, and recall would answer from the old decisions. A reading of a ledger
    changed within RACY_NS of now is not remembered (git's "racy" entries)."""
    from clawmem.markdown import proposal_ledger

    assert cli("-w", str(ws), "reflect").code == 0
    pending = _list(ws)
    assert cli("-w", str(ws), "proposals", "reject", pending[0]["id"]).code == 0
    reads = []
    real = proposal_ledger.ledger_lines
    monkeypatch.setattr(proposal_ledger, "ledger_lines", lambda root: reads.append(1) or real(root))
    proposal_ledger._READ.clear()
    first = proposal_ledger.rejected_ids(ws)
    assert len(first) == 1
    assert proposal_ledger.rejected_ids(ws) == first
    assert len(reads) == 2  # changed just now: read again
    monkeypatch.setattr(proposal_ledger, "RACY_NS", 0)  # as if it had settled: remembered
    reads.clear()
    assert proposal_ledger.rejected_ids(ws) == first and proposal_ledger.rejected_ids(ws) == first
    assert len(reads) == 1
