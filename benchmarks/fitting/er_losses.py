"""Where evidence recall within 2,000 characters is lost (issue 45's ER@2k), on tuning data only.

ER@2k reads the returned citations best first, line by line, charging each line's characters,
until 2,000 are spent (``benchmarks.metrics.lines_read``), and scores the share of gold lines read.
``python -m benchmarks.fitting.er_losses`` asks the mixed workspaces' tuning part
(``benchmarks.datasets.mixed.TUNE``) and REALTALK's tuning chats (1-5) their answerable questions,
keeps each one's first ``DEPTH`` hits (the default threshold, as the suites score), the length of
every line they cite, and where each evidence item stands in the vector and lexical legs alone
(``LEG_DEPTH`` hits, no threshold), and sorts every gold line not read within the budget:

* ``not in 40``: no hit among the first ``DEPTH`` cites it (ranking, not reading);
* ``21-40``: cited, but after the ``EVAL_K`` hits the suites score;
* ``after budget``: among the scored hits, but the budget ran out on an earlier hit;
* ``in last hit``: inside the hit where the budget ran out, past the lines read.

For the last two it charges the characters read before them to what spent them (evidence for
another item, a near-duplicate of a hit already read, a long unit, a line of a file already read,
filler). Then it replays the same hits under the budget-side remedies (each hit cut to its lines
that share a word with the question, near-duplicates dropped, at most m hits a file among the
first, hits ordered by relevance per character) and prints ER@2k and R@1 for each: what those
remedies could gain before any product code. REALTALK's chats 6-10 and the mixed held-out part
are never read. The rows are kept in bench-results/er-losses/ (``--reuse`` reports on them again).
benchmarks/analysis.md says what was found.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from statistics import mean
from typing import TYPE_CHECKING, Any

from benchmarks import metrics as M
from benchmarks.common import WORK, embedder_status, log

if TYPE_CHECKING:
    from clawmem.embedders.base import Embedder
    from clawmem.memory import Memory

DEPTH = 40  # the hits kept per question
EVAL_K = 20  # the hits the suites score (benchmarks.suites.mixed / realtalk EVAL_K)
BUDGET = 2000
LEG_DEPTH = 200  # how deep each leg alone is searched for an item the hybrid list misses
OUT = WORK / "er-losses"
CLASSES = ("not in 40", "21-40", "after budget", "in last hit")
SPENT = ("evidence", "near-duplicate", "long unit", "same file", "filler")
LONG = 300  # characters: a hit of several lines that costs more is a long unit
DUPLICATE = 0.6  # share of a hit's words an earlier hit holds: a near-duplicate
_STOP = frozenset(
    "the a an and or of to in on at for with what which who whom whose when where why how is are "
    "was were be been do does did has have had i you he she it they we my your his her their our "
    "me him them this that these those from by as about into than then so not no yes can could "
    "would should will shall may might must if but also just very".split()
)

Hit = dict[str, Any]  # {"cite": [path, start, end], "lens": [...], "relevance", "text"}


def words(text: str) -> set[str]:
    """Content words, cut to six letters (a crude stem: "travels" and "traveling" meet)."""
    return {w[:6] for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _STOP and len(w) > 2}


def _cites(hits: Sequence[Hit]) -> list[M.Citation]:
    return [(h["cite"][0], h["cite"][1], h["cite"][2]) for h in hits]


def _line_len(hits: Sequence[Hit]) -> M.LineLength:
    lens = {(h["cite"][0], h["cite"][1] + i): n for h in hits for i, n in enumerate(h["lens"])}
    return lambda path, n: lens.get((path, n), 0)


def _cost(h: Hit) -> int:
    return sum(n + 1 for n in h["lens"])


def _overlaps(c: Sequence[Any], item: list[dict]) -> bool:
    return any(c[0] == a["path"] and not (c[2] < a["start"] or c[1] > a["end"]) for a in item)


def walk(hits: Sequence[Hit], budget: int = BUDGET, k: int = EVAL_K) -> tuple[int, list[int]]:
    """As ``metrics.lines_read`` reads: the place of the hit the budget runs out in
    (``min(k, len(hits))`` when it never does), and the characters read of each hit."""
    seen: set[tuple[str, int]] = set()
    spent = 0
    read: list[int] = []
    for i, h in enumerate(hits[:k]):
        path, a, _ = h["cite"]
        read.append(0)
        for n, length in enumerate(h["lens"], a):
            if (path, n) in seen:
                continue
            if spent + length + 1 > budget:
                return i, read
            spent += length + 1
            read[i] += length + 1
            seen.add((path, n))
    return min(k, len(hits)), read


def er(hits: Sequence[Hit], gold: list[list[dict]], budget: int = BUDGET) -> float:
    return M.evidence_recall(_cites(hits[:EVAL_K]), gold, _line_len(hits), budget)


def r1(hits: Sequence[Hit], gold: list[list[dict]]) -> float:
    return 1.0 if hits and any(_overlaps(hits[0]["cite"], item) for item in gold) else 0.0


def losses(row: dict) -> tuple[dict[str, float], dict[str, float]]:
    """The ER@2k a question loses, by class, and the characters read before each lost item that
    was among the scored hits, by what spent them (both weighted as ER weighs items)."""
    hits, gold = row["hits"], row["gold"]
    read = M.lines_read(_cites(hits[:EVAL_K]), _line_len(hits), BUDGET)
    stop, chars = walk(hits)
    lost: dict[str, float] = defaultdict(float)
    spent: dict[str, float] = defaultdict(float)
    for item in gold:
        got = max(len(M._gold_lines(a) & read) / len(M._gold_lines(a)) for a in item)
        if got >= 1:
            continue
        w = (1 - got) / len(gold)
        pos = next((i for i, h in enumerate(hits) if _overlaps(h["cite"], item)), None)
        if pos is None:
            lost["not in 40"] += w
            continue
        if pos >= EVAL_K:
            lost["21-40"] += w
            continue
        lost["after budget" if pos > stop else "in last hit"] += w
        before: list[Hit] = []
        for h, cost in zip(hits[:pos], chars, strict=False):
            mine = words(h["text"])
            if any(_overlaps(h["cite"], other) for other in gold):
                why = "evidence"
            elif mine and any(len(mine & words(b["text"])) / len(mine) > DUPLICATE for b in before):
                why = "near-duplicate"
            elif len(h["lens"]) > 1 and _cost(h) > LONG:
                why = "long unit"
            elif any(b["cite"][0] == h["cite"][0] for b in before):
                why = "same file"
            else:
                why = "filler"
            spent[why] += w * cost
            before.append(h)
    return lost, spent


# --------------------------------------------------------------------------- remedies
def narrowed(hits: list[Hit], question: str) -> list[Hit]:
    """Each hit of several lines cut to the span of its lines that share a word with the
    question (its first line when none does)."""
    qw = words(question)
    out = []
    for h in hits:
        lines = h["text"].split("\n")
        if len(h["lens"]) < 2 or len(lines) != len(h["lens"]):
            out.append(h)
            continue
        keep = [i for i, line in enumerate(lines) if words(line) & qw] or [0]
        i0, i1 = min(keep), max(keep)
        path, a, _ = h["cite"]
        out.append({**h, "cite": [path, a + i0, a + i1], "lens": h["lens"][i0 : i1 + 1]})
    return out


def deduplicated(hits: list[Hit], share: float = DUPLICATE) -> list[Hit]:
    out: list[Hit] = []
    for h in hits:
        mine = words(h["text"])
        if mine and any(len(mine & words(o["text"])) / len(mine) >= share for o in out):
            continue
        out.append(h)
    return out


def per_file(hits: list[Hit], m: int) -> list[Hit]:
    """At most m hits a file before every other file's first m (the first hit stays first)."""
    first: list[Hit] = []
    later: list[Hit] = []
    count: Counter[str] = Counter()
    for h in hits:
        if first and count[h["cite"][0]] >= m:
            later.append(h)
        else:
            count[h["cite"][0]] += 1
            first.append(h)
    return first + later


def by_value(hits: list[Hit]) -> list[Hit]:
    """The first hit, then the scored hits by relevance per character (the greedy knapsack)."""
    rest = sorted(hits[1:EVAL_K], key=lambda h: -(h["relevance"] or 0.0) / max(1, _cost(h)))
    return hits[:1] + rest + hits[EVAL_K:]


REMEDIES: dict[str, Callable[[dict], list[Hit]]] = {
    "as returned": lambda r: r["hits"],
    "lines sharing a question word": lambda r: narrowed(r["hits"], r["question"]),
    "near-duplicates dropped (0.8)": lambda r: deduplicated(r["hits"], 0.8),
    "near-duplicates dropped (0.6)": lambda r: deduplicated(r["hits"], 0.6),
    "at most 2 hits a file first": lambda r: per_file(r["hits"], 2),
    "at most 3 hits a file first": lambda r: per_file(r["hits"], 3),
    "relevance per character": lambda r: by_value(r["hits"]),
}


# --------------------------------------------------------------------------- collection
def _ask(mem: Memory, q: dict, today: Any, scoped: bool) -> dict:
    res = mem.recall(q["question"], k=DEPTH, today=today, sync=False)
    hits = []
    for h in res.hits:
        path = h.scoped_path if scoped else h.path
        hits.append(
            {
                "cite": [path, h.start_line, h.end_line],
                "relevance": h.relevance,
                "text": h.text,
            }
        )
    legs = {}
    for mode in ("vector", "lexical"):
        leg = mem.recall(
            q["question"], k=LEG_DEPTH, mode=mode, today=today, sync=False, min_relevance=0.0
        )
        cites = [(h.scoped_path if scoped else h.path, h.start_line, h.end_line) for h in leg.hits]
        legs[mode] = [
            next((i for i, c in enumerate(cites) if _overlaps(c, item)), None) for item in q["gold"]
        ]
    return {
        "question": q["question"],
        "category": q["category"],
        "gold": q["gold"],
        "hits": hits,
        "legs": legs,
    }


def collect(emb: Embedder) -> dict[str, list[dict]]:
    from benchmarks.datasets.mixed import TUNE as MIXED_TUNE
    from benchmarks.datasets.realtalk import TUNE as RT_TUNE
    from benchmarks.datasets.realtalk import build, chat_files, convert
    from benchmarks.suites import mixed
    from benchmarks.systems.clawmem import index_clawmem, open_with

    out: dict[str, list[dict]] = {"mixed": [], "realtalk": []}
    for number in MIXED_TUNE:
        ws, mem = mixed.prepare(number, emb)
        line_len = mixed.line_lengths(ws)
        for q in mixed.questions_for(ws, mixed.build_layout(mixed.PAIRS[number])):
            if q["kind"] == "answerable":
                row = _ask(mem, q, ws.today, scoped=True)
                for h in row["hits"]:
                    path, a, b = h["cite"]
                    h["lens"] = [line_len(path, n) for n in range(a, b + 1)]
                out["mixed"].append(row)
        mem.close()
        log(f"er losses: mixed workspace {number}")
    for path in chat_files():
        chat = convert(path)
        if chat.number not in RT_TUNE:
            continue
        mem = open_with(build(chat, "realtalk"), emb)
        index_clawmem(mem, f"realtalk-{chat.number}")
        lens = {rel: [len(x) for x in text.split("\n")] for rel, text in chat.files.items()}
        for q in chat.questions:
            row = _ask(mem, q, chat.today, scoped=False)
            for h in row["hits"]:
                p, a, b = h["cite"]
                ls = lens.get(p, [])
                h["lens"] = [ls[n - 1] if 0 < n <= len(ls) else 0 for n in range(a, b + 1)]
            out["realtalk"].append(row)
        mem.close()
        log(f"er losses: realtalk chat {chat.number}")
    return out


# --------------------------------------------------------------------------- report
def _depth(p: int | None) -> str:
    return "none" if p is None else "≤40" if p < 40 else f"≤{LEG_DEPTH}"


def report(sets: dict[str, list[dict]]) -> None:
    for name, rows in sets.items():
        lost: dict[str, float] = defaultdict(float)
        spent: dict[str, float] = defaultdict(float)
        for r in rows:
            lo, sp = losses(r)
            for key, v in lo.items():
                lost[key] += v
            for key, v in sp.items():
                spent[key] += v
        n = len(rows)
        base = mean(er(r["hits"], r["gold"]) for r in rows)
        print(f"\n{name}: {n} questions, ER@2k {base:.4f}, lost {1 - base:.4f}")
        cats = sorted({r["category"] for r in rows})
        by_cat = {c: [r for r in rows if r["category"] == c] for c in cats}
        print(f"  {'':14s} all     " + "  ".join(f"cat {c} ({len(by_cat[c])})" for c in cats))
        for c in CLASSES:
            per = [sum(losses(r)[0].get(c, 0.0) for r in by_cat[x]) / n for x in cats]
            print(f"  {c:14s} {lost[c] / n:.4f}  " + "  ".join(f"{v:.4f}    " for v in per))
        total = sum(spent.values()) or 1
        print("  characters read before a lost item that was scored, by what read them:")
        for s in SPENT:
            print(f"    {s:15s} {spent[s] / total:.2f}")
        legs: Counter[tuple[str, str]] = Counter()
        for r in rows:
            for i, item in enumerate(r["gold"]):
                if not any(_overlaps(h["cite"], item) for h in r["hits"]):
                    legs[(_depth(r["legs"]["vector"][i]), _depth(r["legs"]["lexical"][i]))] += 1
        print(
            f"  items not in the first {DEPTH}, by where each leg alone puts them (vector, lexical):"
        )
        for (vec, lx), count in sorted(legs.items(), key=lambda kv: -kv[1]):
            print(f"    vector {vec:5s} lexical {lx:5s} {count}")
        for k in (EVAL_K, DEPTH):
            ceiling = mean(
                M.evidence_recall(_cites(r["hits"][:k]), r["gold"], _line_len(r["hits"]), 10**9)
                for r in rows
            )
            print(f"  every line of the first {k} hits read: ER {ceiling:.4f}")
        for label, remedy in REMEDIES.items():
            hs = [remedy(r) for r in rows]
            e2 = mean(er(h, r["gold"]) for h, r in zip(hs, rows, strict=True))
            e1 = mean(er(h, r["gold"], 1000) for h, r in zip(hs, rows, strict=True))
            one = mean(r1(h, r["gold"]) for h, r in zip(hs, rows, strict=True))
            print(f"  {label:32s} ER@2k {e2:.4f}  ER@1k {e1:.4f}  R@1 {one:.4f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--reuse", action="store_true", help="report on the rows kept last time")
    args = ap.parse_args()
    path = OUT / "rows.json"
    if args.reuse:
        sets = json.loads(path.read_text(encoding="utf-8"))
    else:
        emb, why = embedder_status()
        if emb is None:
            raise SystemExit(f"er losses: the study needs the embedding model: {why}")
        sets = collect(emb)
        OUT.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(sets), encoding="utf-8")
    report(sets)


if __name__ == "__main__":
    main()
