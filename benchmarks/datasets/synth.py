# ruff: noqa: E501 - long prose and data strings read better unwrapped
"""Seeded synthetic workspaces of realistic daily-log Markdown, for the speed benchmark.

``generate(root, n_chunks, seed)`` writes ``memory/<project>/YYYY-MM-DD.md`` daily logs (a title,
3–6 ``##`` sections of prose, bullets, the odd code fence or table, now and then a Vietnamese or
Japanese line, and a ``## Retain`` section of W/B/O facts with @entities) until clawmem's chunker
produces ``n_chunks`` search units (blocks and facts, counted with ``clawmem.markdown.chunking`` itself).
Same (n_chunks, seed) → byte-identical files. A manifest records what was
generated so a rerun with the same parameters does nothing.
"""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Sequence
from datetime import date, timedelta
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

PEOPLE = """Peter Andy Linh Kenji Marta Sofia Jonas Priya Mateo Aiko Omar Lena Tomasz Chidi Yuki Ines
Rafael Hana Diego Noor Felix Mei Lucas Amara Viktor Elif Samir Greta Paulo Zara Bruno Ana Ivan Leila
Hugo Nadia Oskar Rosa Theo Maya Kofi Ilse Arjun Clara Emil Farah Goran Hiro Jana Karim""".split()
PROJECTS = """payments-service warelay castle-infra billing-api mobile-app search-index data-pipeline
auth-gateway docs-site analytics ledger notifications edge-proxy onboarding ml-ranker""".split()
PLACES = """Vienna Lisbon Hanoi Tokyo Berlin Marrakech Prague Oslo Porto Kyoto Seoul Madrid Zurich
Krakow Athens Dublin Toronto Nairobi Lima Bangkok""".split()
TOOLS = """Postgres Redis Kafka Helm k3s Terraform Grafana Loki Stripe FastAPI Rust TypeScript Node
SQLite nginx restic Ansible Prometheus Docker GitHub-Actions Sentry ClickHouse S3 Cloudflare""".split()
TOPICS = """latency cost review migration incident retry timeout backup rollout schema cache quota
deadline onboarding budget contract hiring roadmap security audit outage dashboard alerting
invoice refund settlement reconciliation webhook certificate DNS capacity benchmark release""".split()
VERBS = """fixed shipped reviewed measured deployed rolled back documented discussed scheduled
migrated profiled debugged archived benchmarked approved postponed drafted merged""".split()
ADJ = """slow flaky noisy cheap expensive stable brittle urgent minor critical surprising boring
promising risky clean messy""".split()
FEELINGS = """relieved tired happy worried curious annoyed optimistic cautious""".split()
VI = [
    "Ghi chú: cuộc họp với đối tác ở Hà Nội đã dời sang thứ Năm, cần chuẩn bị file đối soát.",
    "Nhắc lại: phí giao dịch VietQR là 0,5%, quyết toán T+1, callback phải ký HMAC.",
    "Linh đã kiểm tra môi trường thử nghiệm, mọi thứ chạy ổn định trong tuần này.",
]
JA = [
    "メモ：東京リージョンのデプロイは来週の水曜日に予定しています。",
    "決済サービスのレイテンシは p95 で 64ms、エラー率は 0% でした。",
    "ステージング環境での結合テストはすべて成功しました。",
]


class _Gen:
    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)

    def pick(self, xs: Sequence[T]) -> T:
        return xs[self.r.randrange(len(xs))]

    def ident(self) -> str:
        r = self.r
        kind = r.randrange(7)
        if kind == 0:
            return f"DEC-{r.randrange(1, 2000):04d}"
        if kind == 1:
            return f"PR #{r.randrange(100, 9999)}"
        if kind == 2:
            return f"v{r.randrange(0, 5)}.{r.randrange(0, 20)}.{r.randrange(0, 30)}"
        if kind == 3:
            return (
                f"`{self.pick(['db', 'web', 'worker', 'cache', 'edge'])}-{r.randrange(1, 40):02d}`"
            )
        if kind == 4:
            return f"`{self.pick(TOPICS)}_{self.pick(['id', 'key', 'queue', 'job', 'table'])}`"
        if kind == 5:
            return f"{self.pick(['OPS', 'PAY', 'WEB', 'SEC'])}-{r.randrange(100, 9999)}"
        return f"`src/{self.pick(PROJECTS)}/{self.pick(TOPICS)}.py`"

    def sentence(self) -> str:
        r = self.r
        t = r.randrange(8)
        p, q = r.sample(PEOPLE, 2)
        proj, tool, topic = self.pick(PROJECTS), self.pick(TOOLS), self.pick(TOPICS)
        if t == 0:
            return f"{p} {self.pick(VERBS)} the {topic} work on {proj} ({self.ident()}); {tool} was {self.pick(ADJ)} again."
        if t == 1:
            return f"Call with {p} and {q} about {topic}: we agreed to revisit it after {self.ident()} lands."
        if t == 2:
            return f"The {proj} {topic} took {r.randrange(2, 900)} ms at p95, down from {r.randrange(900, 3000)} ms before {self.ident()}."
        if t == 3:
            return f"{p} is in {self.pick(PLACES)} until day {r.randrange(1, 28)} and prefers short messages about {topic}."
        if t == 4:
            return f"Spent the afternoon on {tool} {topic} for {proj}; felt {self.pick(FEELINGS)} about the result."
        if t == 5:
            return (
                f"Budget check: {proj} costs about €{r.randrange(50, 5000)} a month, mostly {tool}."
            )
        if t == 6:
            return f"{q} asked whether {self.ident()} changes the {topic} plan; answer: not before the {self.pick(TOPICS)} review."
        return f"Note to self: {self.pick(VERBS)} {self.ident()} and tell {p} once {tool} looks {self.pick(ADJ)}."

    def paragraph(self, n: int) -> str:
        return " ".join(self.sentence() for _ in range(n))

    def section(self) -> str:
        r = self.r
        title = self.pick(
            [
                "Morning",
                "Afternoon",
                "Evening",
                f"{self.pick(PROJECTS)}: {self.pick(TOPICS)}",
                f"Call with {self.pick(PEOPLE)}",
                f"{self.pick(TOOLS)} {self.pick(TOPICS)}",
            ]
        )
        parts = [f"## {title}", ""]
        budget = r.randrange(500, 1400)
        size = 0
        while size < budget:
            kind = r.randrange(10)
            if kind < 5:
                block = self.paragraph(r.randrange(1, 4))
            elif kind < 8:
                block = "\n".join(f"- {self.sentence()}" for _ in range(r.randrange(2, 4)))
            elif kind == 8 and r.random() < 0.5:
                cmd = f"{self.pick(['kubectl', 'psql', 'restic', 'helm', 'curl'])} {self.pick(TOPICS)} --{self.pick(TOPICS)}={r.randrange(1, 99)}"
                block = f"```bash\n{cmd}\n# {self.sentence()}\n```"
            elif kind == 8:
                rows = "\n".join(
                    f"| {self.pick(PROJECTS)} | {r.randrange(1, 999)} ms | {self.pick(ADJ)} |"
                    for _ in range(3)
                )
                block = f"| service | p95 | note |\n|---|---|---|\n{rows}"
            else:
                block = self.pick(VI) if r.random() < 0.5 else self.pick(JA)
            if size + len(block) > 1450:
                break
            parts.extend([block, ""])
            size += len(block) + 2
        return "\n".join(parts).rstrip() + "\n"

    def retain(self) -> str:
        lines = ["## Retain"]
        for _ in range(self.r.randrange(1, 4)):
            kind = self.pick(["W", "B", "O(c=0.8)", "W"])
            lines.append(f"- {kind} @{self.pick(PEOPLE)}: {self.sentence()}")
        return "\n".join(lines) + "\n"


def generate(root: Path, n_chunks: int, seed: int = 1) -> dict:
    """Write the workspace (replacing one made with other parameters). Returns the manifest."""
    manifest_path = root / "synth.json"
    from clawmem.markdown.chunking import chunk_markdown

    want = {"n_chunks": n_chunks, "seed": seed, "generator": 2}
    if manifest_path.exists():
        try:
            have = json.loads(manifest_path.read_text())
            if {k: have.get(k) for k in want} == want:
                return have
        except ValueError:
            pass
    if root.exists():
        shutil.rmtree(root)
    (root / "memory").mkdir(parents=True)
    g = _Gen(seed)
    n_projects = max(1, min(len(PROJECTS), n_chunks // 2000 + 1))
    projects = PROJECTS[:n_projects]
    start = date(2021, 1, 4)
    chunks = files = facts = text_bytes = 0
    day_index = {p: 0 for p in projects}
    (root / "MEMORY.md").write_text(
        "# Memory\n\n- Peter prefers short WhatsApp messages.\n", encoding="utf-8"
    )
    while chunks < n_chunks:
        proj = projects[files % n_projects]
        day = start + timedelta(days=day_index[proj])
        day_index[proj] += 1 + (1 if g.r.random() < 0.3 else 0)
        n_sec = g.r.randrange(3, 7)
        body = [f"# {day.isoformat()}", ""]
        for _ in range(n_sec):
            body.append(g.section())
        body.append(g.retain())
        text = "\n".join(body)
        path = root / "memory" / proj / f"{day.isoformat()}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        chunks += len(chunk_markdown(text))  # one unit per block; a Retain bullet is a fact
        facts += text.count("\n- W @") + text.count("\n- B @") + text.count("\n- O(c=")
        files += 1
        text_bytes += len(text.encode("utf-8"))
    manifest = {
        **want,
        "files": files,
        "approx_chunks": chunks,
        "approx_facts": facts,
        "text_bytes": text_bytes,
    }
    manifest_path.write_text(json.dumps(manifest))
    return manifest


def queries(n: int, seed: int = 2) -> list[str]:
    """Recall queries in the workspace's vocabulary: names, identifiers, topics, questions."""
    g = _Gen(seed)
    out = []
    for i in range(n):
        t = i % 5
        if t == 0:
            out.append(f"what did we decide about {g.pick(TOPICS)} for {g.pick(PROJECTS)}?")
        elif t == 1:
            out.append(g.ident().strip("`"))
        elif t == 2:
            out.append(f"{g.pick(PEOPLE)} {g.pick(PLACES)}")
        elif t == 3:
            out.append(f"why was {g.pick(TOOLS)} {g.pick(ADJ)} during the {g.pick(TOPICS)}")
        else:
            out.append(f"{g.pick(TOPICS)} {g.pick(TOPICS)} cost")
    return out
