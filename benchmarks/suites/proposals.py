"""Fact proposals (issue 44) against REALTALK's ``events_session_N``: precision and recall of what
clawmem proposes from a conversation, against the events the dataset lists as worth remembering,
per session and per speaker.

Tuning and reporting are split: chats 1-5 choose the confidence threshold (``--tune`` prints the
sweep), chats 6-10 are reported. Nothing of the chats reaches the product: the rules are written
from the issue's examples, and only the threshold (one number) is chosen here.

Matching (no model, so that the number is the same on every machine): a proposal matches an event
when it is the same session, the same speaker, and the two share at least ``MIN_SHARED`` topic
words (text/topics.py: folded, stemmed, no stopwords, the speakers' names left out) covering at
least ``MIN_COVER`` of the event's topic words. Precision: the share of proposals that match some
event; recall: the share of events that some proposal matches.

Baselines in the same run: every first-person sentence proposed (``I``, ``I'm``, ``my``, ``we``
…), and nothing proposed.

    python -m benchmarks.suites.proposals            # held-out chats 6-10, with the baselines
    python -m benchmarks.suites.proposals --tune     # the threshold sweep on chats 1-5
"""

from __future__ import annotations

import argparse
import json
import os
import re
import time
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path

from clawmem.reflect import fact_proposals
from clawmem.reflect.episodes import sentences
from clawmem.reflect.fact_proposals import Said, candidates
from clawmem.text.topics import topic_words

MIN_SHARED = 2
MIN_COVER = 0.3
TUNE = range(1, 6)
HELD_OUT = range(6, 11)
_FIRST_PERSON = re.compile(r"\b(?:I|I'm|I’m|I've|I’ve|I'll|I’ll|I'd|my|me|we|our)\b", re.I)


def eval_dir() -> Path:
    base = os.environ.get("CLAWMEM_BENCH_EVAL")
    if base:
        return Path(base) / "realtalk"
    here = Path(__file__).resolve().parents[1]
    for cand in (here.parent / "shared" / "eval", Path("/work/shared/eval")):
        if (cand / "realtalk").is_dir():
            return cand / "realtalk"
    raise SystemExit("REALTALK not found: set CLAWMEM_BENCH_EVAL to the eval folder")


@dataclass
class Session:
    chat: int
    number: int
    said: list[Said]  # one per message, speaker = the chat's speaker name
    events: dict[str, list[str]]  # speaker -> sub-events
    names: tuple[str, str]


def _speaker(name: str) -> str:
    return name.strip().capitalize()


def load(chats: range) -> list[Session]:
    out = []
    for path in sorted(eval_dir().glob("Chat_*.json")):
        n = int(path.name.split("_")[1])
        if n not in chats:
            continue
        data = json.loads(path.read_text(encoding="utf-8"))
        a, b = _speaker(data["name"]["speaker_1"]), _speaker(data["name"]["speaker_2"])
        s = 1
        while f"session_{s}" in data:
            said = []
            for m in data[f"session_{s}"]:
                when = datetime.strptime(m["date_time"], "%d.%m.%Y, %H:%M:%S").date()
                text = m.get("clean_text") or ""
                said.append(Said(text, m.get("dia_id", ""), when, _speaker(m["speaker"])))
            ev = data.get(f"events_session_{s}") or {}
            events = {
                a: [e["sub-event"] for e in ev.get("agent_a", []) if e.get("sub-event")],
                b: [e["sub-event"] for e in ev.get("agent_b", []) if e.get("sub-event")],
            }
            out.append(Session(n, s, said, events, (a, b)))
            s += 1
    return out


def _first_person(said: Said) -> list[tuple[str, str]]:
    out = []
    for sentence in sentences(said.text):
        if _FIRST_PERSON.search(sentence) and not sentence.strip().endswith("?"):
            out.append((said.speaker or "", sentence))
    return out


def _matches(prop: frozenset[str], event: frozenset[str]) -> bool:
    shared = len(prop & event)
    return shared >= MIN_SHARED and shared >= MIN_COVER * len(event)


def score(sessions: list[Session], system: str, threshold: float = 0.0) -> dict:
    """Precision and recall of ``system``'s proposals ("rules", "first-person" or "nothing")."""
    proposed = matched_props = events = matched_events = 0
    by_kind: dict[str, list[int]] = {}
    for s in sessions:
        names = frozenset(n.casefold() for n in s.names)
        items: list[tuple[str, str, str]] = []  # speaker, text, kind
        if system == "rules":
            seen = set()
            for said in s.said:
                for p in candidates(said, s.names):
                    if p.confidence >= threshold and p.key not in seen:
                        seen.add(p.key)
                        items.append((said.speaker or "", p.text, p.kind))
        elif system == "first-person":
            items = [(sp, t, "-") for said in s.said for sp, t in _first_person(said)]
        gold = {sp: [topic_words(e) - names for e in evs] for sp, evs in s.events.items()}
        hit: set[tuple[str, int]] = set()
        for sp, text, kind in items:
            words = topic_words(text) - names
            found = [i for i, e in enumerate(gold.get(sp, [])) if _matches(words, e)]
            proposed += 1
            k = by_kind.setdefault(kind, [0, 0])
            k[0] += 1
            if found:
                matched_props += 1
                k[1] += 1
                hit.update((sp, i) for i in found)
        events += sum(len(v) for v in gold.values())
        matched_events += len(hit)
    precision = matched_props / proposed if proposed else 0.0
    recall = matched_events / events if events else 0.0
    return {
        "system": system,
        "threshold": threshold,
        "proposed": proposed,
        "events": events,
        "precision": round(precision, 3),
        "recall": round(recall, 3),
        "f1": round(2 * precision * recall / (precision + recall), 3)
        if precision + recall
        else 0.0,
        "precision_by_kind": {
            k: round(v[1] / v[0], 3) if v[0] else 0.0 for k, v in sorted(by_kind.items())
        },
        "proposed_by_kind": {k: v[0] for k, v in sorted(by_kind.items())},
    }


def _row(r: dict) -> str:
    met = "yes" if r["recall"] >= 0.60 and r["precision"] >= 0.50 else "no"
    kinds = ", ".join(
        f"{k} {r['proposed_by_kind'][k]} @ {r['precision_by_kind'][k]:.2f}"
        for k in r["proposed_by_kind"]
    )
    return (
        f"| {r['system']} | {r['threshold']:.2f} | {r['proposed']} | {r['events']} | "
        f"{r['precision']:.3f} | {r['recall']:.3f} | {r['f1']:.3f} | {met} | {kinds or '—'} |"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tune", action="store_true", help="the threshold sweep on chats 1-5")
    ap.add_argument("--json", type=Path, help="write the rows here too")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    head = (
        "| system | threshold | proposed | events | precision | recall | F1 | target met | "
        "by kind (n @ precision) |\n|---|---|---|---|---|---|---|---|---|"
    )
    rows = []
    if args.tune:
        tune = load(TUNE)
        print(f"Tuning chats 1-5: {len(tune)} sessions")
        print(head)
        for t in (0.0, 0.4, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85):
            rows.append(score(tune, "rules", t))
            print(_row(rows[-1]))
    else:
        held = load(HELD_OUT)
        threshold = fact_proposals.MIN_CONFIDENCE
        print(
            f"Held-out chats 6-10: {len(held)} sessions; matching: same session and speaker, "
            f">= {MIN_SHARED} shared topic words covering >= {MIN_COVER:.0%} of the event's"
        )
        print(head)
        for system in ("rules", "first-person", "nothing"):
            rows.append(score(held, system, threshold if system == "rules" else 0.0))
            print(_row(rows[-1]))
    print(
        f"({time.perf_counter() - t0:.1f} s; python -m benchmarks.suites.proposals"
        f"{' --tune' if args.tune else ''}; {date.today().isoformat()})"
    )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
