"""Three clones share one workspace through a bare remote, as machines do: each one's agent
retains, edits and reflects, then pulls (merging or rebasing) and pushes, in a random order, round
after round. Real git, the hooks and the merge driver that `clawmem init` installs, the CLI.

At the end: git never reported a conflict, every fact retained is there exactly once on every
clone, every line written is kept, reflect's pages are the same on every clone (and a reflect
there has nothing left to rewrite), and each clone's index, as the hooks left it, equals a clean
rebuild of its files.

``CLAWMEM_GIT_ROUNDS`` sets the number of rounds (default 6; the documented run used 30) and
``CLAWMEM_GIT_SEED`` the random seed.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from collections import Counter
from datetime import date
from pathlib import Path

import pytest

from clawmem.markdown.facts import extract_facts
from clawmem.markdown.merging import merged_sections
from clawmem.memory import open_workspace

from .conftest import cli_subprocess

pytestmark = [
    pytest.mark.usefixtures("lexical"),
    pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed"),
]

ROUNDS = int(os.environ.get("CLAWMEM_GIT_ROUNDS", "6"))
SEED = int(os.environ.get("CLAWMEM_GIT_SEED", "33"))
DAYS = ("2025-12-01", "2025-12-02")  # few days: the clones keep writing to the same logs
TODAY = date(2025, 12, 3)
ENTITIES = ("Peter", "Ann", "Kestrel")


@pytest.fixture
def gitenv(tmp_path, monkeypatch):
    """git as a fresh user has it: an identity, `main`, nothing from this machine's config."""
    config = tmp_path / "gitconfig"
    config.write_text(
        "[init]\n\tdefaultBranch = main\n[user]\n\tname = t\n\temail = t@example.com\n"
    )
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    return config


def git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True)
    if check:
        assert proc.returncode == 0, (
            f"git {' '.join(args)} in {repo.name}:\n{proc.stdout}{proc.stderr}"
        )
    return proc


def memory_files(clone: Path) -> dict[str, str]:
    return {
        p.relative_to(clone).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(clone.rglob("*"))
        if p.is_file() and ".git" not in p.parts and ".memory" not in p.parts
    }


def no_conflicts(clone: Path, proc: subprocess.CompletedProcess) -> None:
    unmerged = git(clone, "diff", "--name-only", "--diff-filter=U").stdout
    assert proc.returncode == 0 and not unmerged, f"{clone.name}: {proc.stdout}{proc.stderr}"
    for rel, text in memory_files(clone).items():
        assert "<<<<<<<" not in text and ">>>>>>>" not in text, f"{clone.name}/{rel}"


class Agent:
    def __init__(self, n: int, clone: Path, rng: random.Random) -> None:
        self.n, self.clone, self.rng = n, clone, rng

    def retain(self, text: str, entity: str, day: str) -> None:
        with open_workspace(self.clone) as mem:
            mem.retain(text, kind="W", entities=[entity], day=day)

    def edit(self, rnd: int) -> str:
        """A person's note at the end of a day's log, under a heading of its own: after it,
        the other clones' facts must still land in the Retain section."""
        path = self.clone / "memory" / f"{self.rng.choice(DAYS)}.md"
        line = f"Clone {self.n} wrote this note in round {rnd}."
        old = path.read_text(encoding="utf-8") if path.exists() else "# log\n"
        path.write_text(old + f"\n## Notes of clone {self.n}, round {rnd}\n\n{line}\n")
        return line

    def reflect(self) -> None:
        with open_workspace(self.clone) as mem:
            mem.reflect(today=TODAY)

    def commit(self, message: str) -> None:
        git(self.clone, "add", "-A")
        if git(self.clone, "diff", "--cached", "--quiet", check=False).returncode:
            c = git(self.clone, "commit", "-qm", message, check=False)
            assert c.returncode == 0, c.stderr

    def sync(self, how: str) -> None:
        pull = git(self.clone, "pull", "-q", f"--{how}", "origin", "main", check=False)
        no_conflicts(self.clone, pull)
        # The post-merge / post-rewrite hook may leave nothing to commit; a merge commit is there.
        git(self.clone, "push", "-q", "origin", "HEAD:main")


def start(tmp_path: Path) -> list[Path]:
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    first = tmp_path / "clone0"
    r = cli_subprocess("init", str(first), "--git")
    assert r.code == 0, r.err
    assert "created" in r.out and "registered .git/config (merge driver)" in r.out
    git(first, "add", "-A")
    git(first, "commit", "-qm", "clawmem init")
    git(first, "remote", "add", "origin", str(remote))
    git(first, "push", "-q", "-u", "origin", "main")
    clones = [first]
    for n in (1, 2):
        clone = tmp_path / f"clone{n}"
        git(tmp_path, "clone", "-q", str(remote), str(clone))
        r = cli_subprocess("init", str(clone))  # a clone: the files exist, hooks and driver are new
        assert r.code == 0, r.err
        assert "exists   MEMORY.md" in r.out and "registered .git/config (merge driver)" in r.out
        assert not git(clone, "status", "--porcelain").stdout  # nothing to commit
        clones.append(clone)
    return clones


def index_dump(root: Path) -> list[tuple]:
    """What the index holds about the Markdown, as it is on disk (no sync first)."""
    from clawmem.store import db

    conn, _ = db.connect(root / ".memory" / "index.sqlite", readonly=True)
    queries = (
        "SELECT path, sha256, day, lines, problems FROM files ORDER BY path",
        "SELECT path, start_line, end_line, heading, text, sha256, day, kind, confidence,"
        " valid_from, valid_to, entities FROM chunks ORDER BY path, start_line, end_line, text",
        "SELECT c.path, c.start_line, e.folded FROM chunk_entities e JOIN chunks c"
        " ON c.id = e.chunk_id ORDER BY 1, 2, 3",
        "SELECT src, line, col, syntax, type, target, dst, status FROM links ORDER BY 1, 2, 3",
        "SELECT count(*) FROM chunks_fts",
    )
    try:
        return [tuple(row) for q in queries for row in conn.execute(q).fetchall()]
    finally:
        conn.close()


def test_three_clones_pull_and_push_in_random_orders_without_conflicts(tmp_path, gitenv):
    rng = random.Random(SEED)
    agents = [Agent(n, c, rng) for n, c in enumerate(start(tmp_path))]
    retained: Counter[str] = Counter()
    notes: list[str] = []
    for rnd in range(ROUNDS):
        shared = f"Decision {rnd}: the team ships the kestrel release on Friday."
        for agent in agents:
            for k in range(rng.randint(1, 3)):
                text = f"Clone {agent.n} learned fact {k} in round {rnd}."
                agent.retain(text, rng.choice(ENTITIES), rng.choice(DAYS))
                retained[text] = 1
            if rng.random() < 0.6:  # the same fact, retained on several clones
                agent.retain(shared, "Kestrel", DAYS[0])
                retained[shared] = 1
            if rng.random() < 0.4:
                notes.append(agent.edit(rnd))
            if rng.random() < 0.4:
                agent.reflect()
            agent.commit(f"clone {agent.n} round {rnd}")
        for agent in rng.sample(agents, k=len(agents)):
            if rng.random() < 0.8:  # some clones stay behind for a round or more
                agent.sync(rng.choice(("rebase", "no-rebase")))

    # Everyone catches up: each pushes what it has, then all pull the same head.
    for agent in agents:
        agent.sync("no-rebase")
    agents[0].reflect()
    agents[0].commit("reflect")
    agents[0].sync("no-rebase")
    for agent in agents[1:]:
        agent.sync("no-rebase")
    heads = {git(a.clone, "rev-parse", "HEAD").stdout for a in agents}
    assert len(heads) == 1
    for agent in agents:
        assert not git(agent.clone, "status", "--porcelain").stdout, agent.clone

    # The run exercised what it claims: merge commits, rebases, and generated sections that two
    # clones rewrote at once.
    merges = int(git(agents[0].clone, "rev-list", "--merges", "--count", "HEAD").stdout)
    unions = git(agents[0].clone, "log", "--oneline", "-G", " merged \\(generated", "--", "bank")
    print(
        f"\n{ROUNDS} rounds: {merges} merge commits, {len(unions.stdout.splitlines())} commits "
        "with a generated section merged from two clones"
    )
    assert merges > 0 and unions.stdout

    trees = [memory_files(a.clone) for a in agents]
    assert trees[0] == trees[1] == trees[2]  # reflect's pages included
    for agent, tree in zip(agents, trees, strict=True):
        stated: Counter[str] = Counter()
        for rel, text in tree.items():
            if rel.startswith("memory/"):
                stated.update(f.content for f in extract_facts(text)[0])
        assert {t: stated[t] for t in retained} == dict(retained), agent.clone.name
        everything = "\n".join(tree.values())
        for line in notes:
            assert everything.count(line) == 1, line
        assert merged_sections(agent.clone) == []
        with open_workspace(agent.clone) as mem:
            assert mem.reflect(today=TODAY, dry_run=True).written() == []

    # Each clone's index, as the hooks left it, is what a clean rebuild makes of its files.
    for agent in agents:
        fresh = tmp_path / f"rebuild-{agent.n}"
        shutil.copytree(agent.clone, fresh, ignore=shutil.ignore_patterns(".git", ".memory"))
        with open_workspace(fresh) as mem:
            mem.index()
        assert index_dump(agent.clone) == index_dump(fresh), agent.clone.name


def indexed(clone: Path, query: str) -> list[str]:
    """What the index on disk answers, without syncing first: what the hooks left there."""
    with open_workspace(clone) as mem:
        res = mem.recall(query, mode="lexical", k=5, sync=False)
    return sorted({h.path for h in res.hits})


def test_the_hooks_bring_the_index_up_to_date_after_pull_rebase_and_checkout(tmp_path, gitenv):
    a, b, _ = (Agent(n, c, random.Random(n)) for n, c in enumerate(start(tmp_path)))
    a.retain("The heron survey moved to March.", "Ann", DAYS[0])
    a.commit("heron")
    a.sync("no-rebase")

    # A pull that fast-forwards through a rebase (nothing local to replay).
    pull = git(b.clone, "pull", "--rebase", "origin", "main", check=False)
    no_conflicts(b.clone, pull)
    assert indexed(b.clone, "heron") == [f"memory/{DAYS[0]}.md"]

    # A rebase that replays a local commit on top of the other clone's.
    a.retain("The osprey nest has three eggs.", "Ann", DAYS[1])
    a.commit("osprey")
    a.sync("no-rebase")
    b.retain("The plover count was forty.", "Peter", DAYS[1])
    b.commit("plover")
    pull = git(b.clone, "pull", "--rebase", "origin", "main", check=False)
    no_conflicts(b.clone, pull)
    assert "index refreshed after post-rewrite" in pull.stderr
    assert indexed(b.clone, "osprey") == [f"memory/{DAYS[1]}.md"]
    assert indexed(b.clone, "plover") == [f"memory/{DAYS[1]}.md"]

    # A merge.
    git(b.clone, "push", "-q", "origin", "HEAD:main")
    a.retain("The egret left on Sunday.", "Ann", DAYS[1])
    a.commit("egret")
    pull = git(a.clone, "pull", "--no-rebase", "origin", "main", check=False)
    no_conflicts(a.clone, pull)
    assert "index refreshed after post-merge" in pull.stderr
    assert indexed(a.clone, "plover") == [f"memory/{DAYS[1]}.md"]

    # A checkout of an older commit takes the later facts out of the index.
    co = git(a.clone, "checkout", "-q", "HEAD~3", check=False)
    assert co.returncode == 0, co.stderr
    assert "index refreshed after post-checkout" in co.stderr
    assert indexed(a.clone, "plover") == [] and indexed(a.clone, "heron") != []


def vector_counts(root: Path) -> tuple[int, int]:
    """(units with a vector, units pending) in the index as it is on disk."""
    from clawmem.store import db

    conn, _ = db.connect(root / ".memory" / "index.sqlite", readonly=True)
    try:
        row = conn.execute("SELECT sum(embedded = 1), sum(embedded = 0) FROM chunks").fetchone()
    finally:
        conn.close()
    return int(row[0] or 0), int(row[1] or 0)


def test_after_a_pull_the_hook_syncs_without_embedding_with_the_real_model(
    tmp_path, gitenv, monkeypatch
):
    monkeypatch.delenv("CLAWMEM_VECTORS")  # the default model, as a user has it
    a, b, _ = (Agent(n, c, random.Random(n)) for n, c in enumerate(start(tmp_path)))
    for agent in (a, b):
        r = cli_subprocess("-w", str(agent.clone), "index")
        assert r.code == 0, r.err
    a.retain("The avocet colony doubled this spring.", "Ann", DAYS[0])  # embedded by retain
    a.commit("avocet")
    a.sync("no-rebase")
    for text in ("Peter moved his desk to the window.", "The printer on the second floor jams."):
        b.retain(text, "Peter", DAYS[1])
    b.commit("b's own notes")
    before = vector_counts(b.clone)
    pull = git(b.clone, "pull", "--no-rebase", "origin", "main", check=False)
    no_conflicts(b.clone, pull)
    assert "index refreshed after post-merge" in pull.stderr
    assert indexed(b.clone, "avocet") == [f"memory/{DAYS[0]}.md"]
    embedded, pending = vector_counts(b.clone)
    # The new text is in the index, waiting for its vector: the hook embedded nothing.
    assert embedded == before[0] and pending > before[1]

    # The next recall embeds what the hook left pending (up to lazy_embed_limit) and ranks by
    # meaning at once: asked in other words, the teammate's fact is the first hit (issue 45).
    import json

    r = cli_subprocess("-w", str(b.clone), "recall", "which birds grew in number?", "--json")
    assert r.code == 0, r.err
    data = json.loads(r.out)
    assert data["vectors"]["pending"] == 0 and vector_counts(b.clone)[1] == 0
    assert any("pending unit(s) first" in n for n in data["notes"]), data["notes"]
    assert data["results"][0]["content"] == "The avocet colony doubled this spring."
