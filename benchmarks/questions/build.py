"""Build and verify ``agent_memory.jsonl`` from the questions written by hand.

    python -m benchmarks.questions.build            # resolve quotes, write the JSONL, verify it
    python -m benchmarks.questions.build --verify   # only verify the committed JSONL

Sources: the 25 labelled questions of ``fixtures/FACTS.md`` and ``authored.jsonl``, one question
per line: ``category``, ``question``, ``answer``, ``today`` (anchors "yesterday"; defaults to the
day after the logs the question is about) and ``gold``, a list of evidence items (all needed: two
for a multi-hop question), each a list of alternatives (any one satisfies it: the same fact in a
daily log, a Retain bullet or a bank/ page). An alternative names its lines by quoting them:
``{"path": …, "quote": "…"}`` for the one line holding the quote, or ``"quote": [first, last]`` for
the lines from one to the other. Questions about MemoryBank users name the user (all 15 share one
workspace). Categories: paraphrase, identifier, entity, temporal, multi-hop, vietnamese, cjk and
none (no answer anywhere: no gold, and the best output is nothing).

Verification re-creates the workspace text (fixtures + converted MemoryBank logs) and checks every
gold range: inside its file, and for authored questions, the first line holds the first quote and
the last line the last quote. Any failure exits non-zero.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

from benchmarks.common import QUESTIONS, REPO
from benchmarks.datasets.workspaces import agentmem_files, memorybank_files

OUT = QUESTIONS / "agent_memory.jsonl"
AUTHORED = QUESTIONS / "authored.jsonl"
FACTS = REPO / "fixtures" / "FACTS.md"
MB_TODAY = "2023-05-07"  # the day after the last MemoryBank log
FX_TODAY = "2025-12-01"  # the day after the last fixture log

_RANGE = re.compile(r"^(?P<path>[^#\s]+)#L(?P<a>\d+)-L(?P<b>\d+)$")


def _lines(files: dict[str, str], path: str) -> list[str]:
    if path not in files:
        raise SystemExit(f"gold path {path!r} is not in the workspace")
    return files[path].split("\n")[
        : files[path].count("\n") + (0 if files[path].endswith("\n") else 1)
    ]


_ERRORS: list[str] = []


def _find(lines: list[str], quote: str, path: str, start: int = 0) -> int:
    hits = [i for i, line in enumerate(lines) if quote in line and i >= start]
    if len(hits) != 1:
        _ERRORS.append(f"{path}: quote {quote!r} matches {len(hits)} lines (need exactly 1)")
        return start + 1
    return hits[0] + 1


def facts_questions() -> list[dict]:
    """The 25 labelled questions of fixtures/FACTS.md as they are (sources are alternatives)."""
    out = []
    for line in FACTS.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 5 or not re.fullmatch(r"Q\d\d", cells[0]):
            continue
        qid, cat, question, answer, sources = cells
        cat = {"japanese": "cjk"}.get(cat, cat)
        alts = []
        if sources != "none":
            for src in sources.split(","):
                m = _RANGE.match(src.strip())
                if not m:
                    raise SystemExit(f"FACTS.md {qid}: cannot parse source {src!r}")
                alts.append({"path": m["path"], "start": int(m["a"]), "end": int(m["b"])})
        out.append(
            {
                "id": f"FX-{qid}",
                "source": "fixtures/FACTS.md",
                "category": cat,
                "question": question,
                "answer": "" if answer == "none" else answer,
                "today": FX_TODAY,
                "gold": [alts] if alts else [],
            }
        )
    if len(out) != 25:
        raise SystemExit(f"FACTS.md: expected 25 questions, parsed {len(out)}")
    return out


def authored_questions(files: dict[str, str]) -> list[dict]:
    users = {p.split("/")[1] for p in memorybank_files()}
    out = []
    for n, q in enumerate(load(AUTHORED), 1):
        items = []
        for item in q.get("gold", []):
            alts = []
            for alt in item:
                path, quote = alt["path"], alt["quote"]
                lines = _lines(files, path)
                if isinstance(quote, list):
                    a = _find(lines, quote[0], path)
                    b = _find(lines, quote[1], path, start=a - 1)
                    quotes = list(quote)
                else:
                    a = b = _find(lines, quote, path)
                    quotes = [quote]
                alts.append({"path": path, "start": a, "end": b, "quotes": quotes})
            items.append(alts)
        today = q.get("today")
        if today is None:
            paths = [alt["path"] for item in items for alt in item]
            mentioned = any(u.replace("-", " ") in q["question"] for u in users)
            in_mb = any(p.split("/")[1] in users for p in paths if p.count("/") == 2)
            today = MB_TODAY if (in_mb or mentioned) else FX_TODAY
        out.append(
            {
                "id": f"AM-{n:03d}",
                "source": "benchmarks/questions/authored.jsonl",
                "category": q["category"],
                "question": q["question"],
                "answer": q.get("answer", ""),
                "today": today,
                "gold": items,
            }
        )
    if _ERRORS:
        raise SystemExit("\n".join(_ERRORS))
    return out


def load(path: Path = OUT) -> list[dict]:
    return [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]


def verify(questions: list[dict], files: dict[str, str]) -> list[str]:
    problems = []
    seen = set()
    for q in questions:
        if q["id"] in seen:
            problems.append(f"{q['id']}: duplicate id")
        seen.add(q["id"])
        if (q["category"] == "none") != (not q["gold"]):
            problems.append(f"{q['id']}: category none must have no gold, others must have gold")
        for item in q["gold"]:
            if not item:
                problems.append(f"{q['id']}: empty evidence item")
            for alt in item:
                if alt["path"] not in files:
                    problems.append(f"{q['id']}: {alt['path']} does not exist")
                    continue
                lines = _lines(files, alt["path"])
                a, b = alt["start"], alt["end"]
                if not (1 <= a <= b <= len(lines)):
                    problems.append(f"{q['id']}: {alt['path']}#L{a}-L{b} outside 1..{len(lines)}")
                    continue
                if not "".join(lines[a - 1 : b]).strip():
                    problems.append(f"{q['id']}: {alt['path']}#L{a}-L{b} is blank")
                quotes = alt.get("quotes")
                if quotes:
                    if quotes[0] not in lines[a - 1]:
                        problems.append(f"{q['id']}: line {a} of {alt['path']} lacks {quotes[0]!r}")
                    if quotes[-1] not in lines[b - 1]:
                        problems.append(
                            f"{q['id']}: line {b} of {alt['path']} lacks {quotes[-1]!r}"
                        )
    return problems


def main(argv: list[str]) -> int:
    files = agentmem_files()
    if "--verify" not in argv:
        qs = facts_questions() + authored_questions(files)
        with open(OUT, "w", encoding="utf-8") as fh:
            for q in qs:
                fh.write(json.dumps(q, ensure_ascii=False) + "\n")
    qs = load()
    problems = verify(qs, files)
    for p in problems:
        print("FAIL", p)
    cats = Counter(q["category"] for q in qs)
    print(
        f"{len(qs)} questions, {sum(len(q['gold']) for q in qs)} evidence items; "
        + ", ".join(f"{c} {n}" for c, n in sorted(cats.items()))
    )
    print(
        "verified: every gold range exists and holds its quotes"
        if not problems
        else f"{len(problems)} problem(s)"
    )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
