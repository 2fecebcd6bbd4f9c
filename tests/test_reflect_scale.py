"""Reflect's cost grows with the facts, not with their pairs, and its pages stay what comparing
every pair gives: supersession, restated facts (proposals) and opinions look up candidates
(reflect/candidates.py) instead of scanning every later fact, group or opinion."""

from __future__ import annotations

import random
import resource
import subprocess
import sys
import time
from datetime import date, timedelta

from clawmem.markdown.factlog import FactLog, LoggedFact
from clawmem.markdown.facts import parse_fact
from clawmem.markdown.supersession import supersedes
from clawmem.reflect.episodes import (
    RECUR_JACCARD,
    Episode,
    SaidIn,
    Statement,
    _mentions,
    consolidate,
    recurring,
)
from clawmem.reflect.opinions import cluster, same_opinion
from clawmem.reflect.pages import (
    COVERED,
    RESTATED_JACCARD,
    _statement,
    _superseded,
    core_words,
    fact_status,
    in_core,
    restated_groups,
)
from clawmem.text.topics import jaccard, topic_words

from .many_facts import write_workspace

# ------------------------------------------------------------------- what every pair would give


def every_pair_superseded(shown: list[LoggedFact]) -> dict[int, LoggedFact]:
    said = {f.order: _statement(f) for f in shown}
    out = {}
    for i, f in enumerate(shown):
        if f.day is None or f.kind not in "WSO":
            continue
        for g in reversed(shown[i + 1 :]):
            if supersedes(said[g.order], said[f.order]):
                out[f.order] = g
                break
    return out


def every_group(facts: list[LoggedFact]) -> list[list[LoggedFact]]:
    groups: list[list[LoggedFact]] = []
    for f in facts:
        for g in groups:
            head = g[0]
            if head.folded_entities == f.folded_entities and (
                head.identity == f.identity or jaccard(head.words, f.words) >= RESTATED_JACCARD
            ):
                g.append(f)
                break
        else:
            groups.append([f])
    return groups


def every_member_clusters(facts: list[LoggedFact]) -> list[tuple[list[int], list[str]]]:
    opinions: list[tuple[list[LoggedFact], list[str]]] = []
    for fact in facts:
        if fact.kind != "O":
            continue
        best = None
        for i, (members, _) in enumerate(opinions):
            for member in members:
                match = same_opinion(member, fact)
                if match and (best is None or (match[0], -i) > best[:2]):
                    best = (match[0], -i, match[1])
        if best is None:
            opinions.append(([fact], [""]))
        else:
            opinions[-best[1]][0].append(fact)
            opinions[-best[1]][1].append(best[2])
    return [([f.order for f in m], j) for m, j in opinions]


# ------------------------------------------------------------------------ tricky small logs

# A small vocabulary, so that facts share words often; sizes from none to many topic words;
# condition words (rule 5: narrower); names that are also topic words elsewhere.
WORDS = "rust cli tea coffee lisbon porto green morning travel ana code".split()
NAMES = ["Ana", "Bo", "Cy", "Rust"]


def random_log(rng: random.Random, n: int) -> list[LoggedFact]:
    facts = []
    for order in range(1, n + 1):
        kind = rng.choice("WWSOOB")
        who = " ".join(f"@{x}" for x in rng.sample(NAMES, rng.choice([0, 1, 1, 1, 2, 3])))
        words = rng.choices(WORDS, k=rng.choice([0, 1, 2, 2, 3, 3, 4, 6, 9]))
        if rng.random() < 0.2:
            words.insert(rng.randrange(len(words) + 1), rng.choice(["while", "only", "if"]))
        text = " ".join(words) or "the"
        conf = (
            f"(c={rng.choice(['0.3', '0.6', '0.9'])})" if kind == "O" and rng.random() < 0.7 else ""
        )
        line = f"- {kind}{conf} {who}: {text}" if who else f"- {kind}{conf}: {text}"
        day = None if rng.random() < 0.1 else date(2025, 1, 1) + timedelta(days=rng.randrange(6))
        facts.append(LoggedFact(parse_fact(line, order), "memory/x.md", day, order=order))
    # Restated copies: the same line again, on another day.
    for f in rng.sample(facts, n // 5):
        day = date(2025, 1, 1) + timedelta(days=rng.randrange(6))
        facts.append(LoggedFact(f.fact, "memory/y.md", day, order=len(facts) + 1))
    facts.sort(key=lambda f: f.sort_key)
    return facts


def test_candidates_find_what_comparing_every_pair_finds():
    for seed in range(150):
        rng = random.Random(seed)
        log = random_log(rng, rng.choice([5, 20, 60, 120]))
        new, old = _superseded(log), every_pair_superseded(log)
        assert {k: v.order for k, v in new.items()} == {k: v.order for k, v in old.items()}, seed
        world = [f for f in log if f.kind == "W" and f.day is not None]
        assert [[f.order for f in g] for g in restated_groups(world)] == [
            [f.order for f in g] for g in every_group(world)
        ], seed
        got = [([f.order for f in op.facts], op.joins) for op in cluster(log)]
        assert got == every_member_clusters(log), seed


def test_the_random_logs_exercise_every_rule():
    # The comparison above means something only if the logs supersede, restate and cluster.
    superseded = restated = joined = 0
    for seed in range(30):
        log = random_log(random.Random(seed), 60)
        superseded += len(every_pair_superseded(log))
        restated += sum(
            len(g) > 1 for g in every_group([f for f in log if f.kind == "W" and f.day])
        )
        joined += sum(len(m) > 1 for m, _ in every_member_clusters(log))
    assert superseded > 100 and restated > 30 and joined > 30


# ------------------------------------------------------------------------------ the cost


def test_reflect_of_twenty_thousand_facts_costs_seconds_of_cpu_not_minutes(tmp_path):
    ws = write_workspace(tmp_path / "ws", 20_000)

    def children_cpu() -> float:
        r = resource.getrusage(resource.RUSAGE_CHILDREN)
        return r.ru_utime + r.ru_stime

    t0 = children_cpu()
    p = subprocess.run(
        [sys.executable, "-m", "clawmem", "-w", str(ws), "reflect"],
        capture_output=True,
        text=True,
    )
    cpu = children_cpu() - t0
    assert p.returncode == 0, p.stderr
    page = (ws / "bank" / "entities" / "Ana.md").read_text(encoding="utf-8")
    assert "superseded by" in page and "also memory/" in page  # the rules ran on this log
    assert "\n- latest: " in (ws / "bank" / "opinions.md").read_text(encoding="utf-8")
    # Comparing every pair: 27 s of CPU on a 2-core machine at load 4; by candidates: 3 s.
    assert cpu < 12, f"reflect of 20,000 facts took {cpu:.1f} s of CPU"


def test_an_opinion_restated_ten_thousand_times_is_clustered_in_linear_time():
    # Each statement was compared with every member of its opinion: 10,000 statements of one
    # opinion (a clone can commit them) were 50 million comparisons, some 30 s of CPU.
    n = 10_000
    facts = [
        LoggedFact(
            parse_fact(f"- O(c=0.8) @Ana: rust cli is great{' indeed' * (i % 3)}", i + 1),
            "memory/x.md",
            date(2000, 1, 1) + timedelta(days=i),
            order=i + 1,
        )
        for i in range(n)
    ]
    t0 = time.process_time()
    (only,) = cluster(facts)
    cpu = time.process_time() - t0
    assert len(only.facts) == n and only.joins[1].startswith("same entities")
    assert cpu < 3, f"{cpu:.1f} s of CPU"


def test_memory_md_coverage_finds_what_comparing_every_line_finds():
    rng = random.Random(11)
    vocab = [f"word{i}" for i in range(30)]
    text = "\n".join(" ".join(rng.sample(vocab, rng.randrange(1, 6))) for _ in range(400))
    core = core_words(text)
    lines = [frozenset(ln.split()) for ln in text.splitlines()]
    hits = 0
    for _ in range(3000):
        words = frozenset(rng.sample(vocab, rng.randrange(0, 8)))
        every = bool(words) and any(len(words & c) / len(words) >= COVERED for c in lines)
        assert in_core(words, core) == every, sorted(words)
        hits += every
    assert 300 < hits < 2700  # both answers were exercised


def test_a_long_memory_md_is_not_compared_line_by_line_with_every_fact():
    # Each candidate was compared with every line of MEMORY.md: 20,000 lines (a clone can commit
    # them) beside 2,000 restated facts were 40 million comparisons, 5 s of CPU (load 2.5).
    rng = random.Random(3)
    vocab = [f"w{i}" for i in range(3000)]
    core = core_words("\n".join(" ".join(rng.sample(vocab, 4)) for _ in range(20_000)))
    asked = [frozenset(rng.sample(vocab, 5)) | {f"new{i}"} for i in range(2_000)]
    t0 = time.process_time()
    covered = sum(in_core(words, core) for words in asked)
    cpu = time.process_time() - t0
    assert covered == 0
    assert cpu < 2, f"{cpu:.1f} s of CPU"


def test_a_line_copied_eighty_thousand_times_is_folded_in_linear_time():
    # The list of a fact's earlier copies was copied at each copy: 80,000 copies of one line (a
    # clone can commit them) took 6 s of CPU in fact_status (load 2.5), 0.3 s at 20,000.
    n = 80_000
    line = parse_fact("- W @Ana: Ana lives in Lisbon.", 2)
    start = date(2000, 1, 1)
    facts = [
        LoggedFact(line, f"memory/d{i // 40}.md", start + timedelta(days=i // 40), order=i + 1)
        for i in range(n)
    ]
    t0 = time.process_time()
    st = fact_status(FactLog(facts), [])
    cpu = time.process_time() - t0
    assert st.also[n] == facts[:-1] and len(st.hidden) == n - 1  # oldest first, as before
    assert cpu < 1.5, f"{cpu:.1f} s of CPU"


def _episodes(n: int, seed: int = 9) -> list[Episode]:
    """``n`` conversations of 12 stated decisions and preferences each, on shared topics."""
    rng = random.Random(seed)
    vocab = [f"topic{i}" for i in range(3000)] + "redis staging payments deploy friday".split()
    out = []
    for e in range(n):
        said = []
        for k in range(12):
            kind = rng.choice("WO")
            text = "We decided " + " ".join(rng.sample(vocab, rng.randrange(1, 5))) + "."
            said.append(
                Statement(kind, "decision" if kind == "W" else "preference", text, k + 2, ())
            )
        at = f"2025-01-{1 + e % 28:02d}T{e % 24:02d}:00:00"
        out.append(Episode(f"sessions/s{e}.jsonl", f"s{e}", "claude", (), at, at, tuple(said)))
    return out


def test_recurring_statements_are_the_groups_a_scan_of_every_group_finds():
    eps = _episodes(120, seed=2)
    groups: list[list[SaidIn]] = []  # the rule as written: the first group whose head fits
    for e in eps:
        for st in e.statements:
            for g in groups:
                head = g[0].statement
                if head.kind == st.kind and (
                    jaccard(topic_words(head.text), topic_words(st.text)) >= RECUR_JACCARD
                ):
                    g.append(SaidIn(st, e))
                    break
            else:
                groups.append([SaidIn(st, e)])
    want = [sorted(s.cite for s in g) for g in groups if len({s.episode.name for s in g}) >= 2]
    got = [sorted(s.cite for s in r.sources) for r in recurring(eps)]
    assert got == want and len(got) > 20


def test_recurring_across_many_conversations_is_not_quadratic():
    # Each statement was compared with every group: 500 conversations (a clone can commit their
    # transcripts) took 17 s of CPU (load 3), 1,000 took 50 s.
    eps = _episodes(500)
    t0 = time.process_time()
    done, found = consolidate(eps, [])
    cpu = time.process_time() - t0
    assert len(done) == 500 and len(found) > 500
    assert cpu < 2, f"{cpu:.1f} s of CPU"


def test_many_entity_names_are_not_recompiled_for_every_statement():
    # Each name's pattern was compiled at each search: past re's cache (512 patterns) every one
    # was compiled again for every statement, 26 µs a name (300 statements x 2,000 names: 16 s
    # of CPU at load 3); a conversation's statements are checked against every entity's name.
    names = [f"Person{i}" for i in range(2000)] + ["Ana-Lima", "Ana"]
    said = [f"We decided to ship build {i} with Person{i % 50} and ana lima." for i in range(300)]
    t0 = time.process_time()
    found = [_mentions(text, names) for text in said]
    cpu = time.process_time() - t0
    assert found[3] == ("Person3", "Ana-Lima", "Ana")
    assert cpu < 5, f"{cpu:.1f} s of CPU"
