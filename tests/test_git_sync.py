"""Three clones share one workspace through a bare remote, as machines do: each one's agent
retains, edits and reflects, a person adds lines to MEMORY.md, an editor saves one clone's logs
with CRLF endings; then each pulls (merging or rebasing) and pushes, in a random order, round
after round. Real git, the hooks and the merge driver that `clawmem init` installs, the CLI.

At the end: git never reported a conflict, every fact retained is there exactly once on every
clone, every line written is kept, reflect's pages are the same on every clone (and a reflect
there has nothing left to rewrite), and each clone's index, as the hooks left it, equals a clean
rebuild of its files.

``CLAWMEM_GIT_ROUNDS`` sets the number of rounds (default 6; the documented run used 30) and
``CLAWMEM_GIT_SEED`` the random seed.

Below it, each thing a merge must never do, on two clones: hide the other side when the driver's
environment moved, bring back a line one side deleted, double a file over its line endings,
conflict on lines both added to MEMORY.md, leave a generated section as a stale union when no
model is needed to rewrite it; and ``[git] autocommit``.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
from collections import Counter
from datetime import date
from pathlib import Path

import pytest

from clawmem.markdown.facts import extract_facts
from clawmem.markdown.merging import merged_sections
from clawmem.memory import open_workspace

from .conftest import FIXTURE, cli_subprocess

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

    def core_note(self, rnd: int) -> str:
        """A line at the end of MEMORY.md, as the README invites: other clones add theirs."""
        core = self.clone / "MEMORY.md"
        line = f"- Clone {self.n} added this to the core in round {rnd}."
        core.write_bytes(core.read_bytes() + line.encode() + b"\n")
        return line

    def to_crlf(self) -> None:
        """An editor on this clone saves the logs with CRLF line endings."""
        for log in (self.clone / "memory").glob("*.md"):
            log.write_bytes(log.read_bytes().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))

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


def catch_up(agents: list[Agent]) -> None:
    """Each commits what it has (the sections the hooks rewrote after a merge included), pulls
    and pushes, until all stand on the same head with nothing left to commit."""
    for _ in range(4):
        for agent in agents:
            agent.commit("catch up")
            agent.sync("no-rebase")
        heads = {git(a.clone, "rev-parse", "HEAD").stdout for a in agents}
        dirty = [a for a in agents if git(a.clone, "status", "--porcelain").stdout]
        if len(heads) == 1 and not dirty:
            return


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
            if rng.random() < 0.3:
                notes.append(agent.core_note(rnd))
            if rnd == 1 and agent.n == 1:
                agent.to_crlf()
            if rng.random() < 0.4:
                agent.reflect()
            agent.commit(f"clone {agent.n} round {rnd}")
        for agent in rng.sample(agents, k=len(agents)):
            if rng.random() < 0.8:  # some clones stay behind for a round or more
                agent.sync(rng.choice(("rebase", "no-rebase")))

    catch_up(agents)
    agents[0].reflect()
    agents[0].commit("reflect")
    agents[0].sync("no-rebase")
    catch_up(agents)
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


# ------------------------------------------------------------------ what a merge must never do
# Each case with real clones, the hooks and the driver `clawmem init` installed, and plain git.


def log_of(clone: Path, day: str = DAYS[0]) -> Path:
    return clone / "memory" / f"{day}.md"


def two_clones(tmp_path: Path) -> tuple[Agent, Agent]:
    a, b, _ = (Agent(n, c, random.Random(n)) for n, c in enumerate(start(tmp_path)))
    return a, b


def pull(clone: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["git", "pull", "--no-rebase", "origin", "main"],
        cwd=clone,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
    )


def test_the_driver_survives_a_moved_environment_and_never_hides_the_other_side(tmp_path, gitenv):
    from clawmem.cli import git_hooks

    a, b = two_clones(tmp_path)
    a.retain("The heron survey moved to March.", "Ann", DAYS[0])
    a.commit("heron")
    a.sync("no-rebase")
    b.retain("The osprey nest has three eggs.", "Ann", DAYS[0])
    b.commit("osprey")
    # git alone on the PATH: no `clawmem` to fall back on
    bare = tmp_path / "bare-bin"
    bare.mkdir()
    (bare / "git").symlink_to(shutil.which("git"))
    alone = {"PATH": str(bare)}
    # A broken interpreter (its clawmem gone: Python exits 1), then a deleted environment.
    broken = tmp_path / "broken-python"
    broken.write_text("#!/bin/sh\necho 'No module named clawmem' >&2\nexit 1\n")
    broken.chmod(0o755)
    for python in (broken, tmp_path / "gone" / "bin" / "python"):
        git_hooks.register_driver(b.clone, str(python))
        p = pull(b.clone, alone)
        assert p.returncode != 0 and "CONFLICT" in p.stdout, p.stdout + p.stderr
        assert "merge driver did not run" in p.stderr
        text = log_of(b.clone).read_text(encoding="utf-8")
        # git's own markers, both sides' facts: `git add` after a look loses nothing
        assert "<<<<<<< ours" in text and ">>>>>>> theirs" in text, text
        assert "heron survey" in text and "osprey nest" in text
        git(b.clone, "merge", "--abort")

    # `clawmem` on the PATH (as the hooks fall back on it): the driver merges, no conflict.
    shim = tmp_path / "shim-bin"
    shim.mkdir()
    (shim / "clawmem").write_text(f'#!/bin/sh\nexec {sys.executable} -m clawmem "$@"\n')
    (shim / "clawmem").chmod(0o755)
    p = pull(b.clone, {"PATH": f"{shim}{os.pathsep}{bare}"})
    no_conflicts(b.clone, p)
    stated = [f.content for f in extract_facts(log_of(b.clone).read_text(encoding="utf-8"))[0]]
    assert sorted(stated) == ["The heron survey moved to March.", "The osprey nest has three eggs."]


def test_a_line_deleted_on_one_clone_next_to_an_edit_on_the_other_is_a_conflict(tmp_path, gitenv):
    a, b = two_clones(tmp_path)
    log = log_of(a.clone)
    log.write_text(
        f"# {DAYS[0]}\n\nWifi at the cabin:\npassword hunter2xyz\nAsk Ann for the key.\n",
        encoding="utf-8",
    )
    a.commit("cabin")
    a.sync("no-rebase")
    no_conflicts(b.clone, pull(b.clone))
    text = log.read_text(encoding="utf-8")
    log.write_text(text.replace("password hunter2xyz\n", ""), encoding="utf-8")  # scrubbed
    a.commit("scrub the password")
    a.sync("no-rebase")
    theirs = log_of(b.clone)
    theirs.write_text(text.replace("for the key.", "for the key; she is back Friday."), "utf-8")
    b.commit("Ann is back")
    p = pull(b.clone)
    assert p.returncode != 0 and "CONFLICT" in p.stdout, p.stdout + p.stderr
    merged = theirs.read_text(encoding="utf-8")
    assert "<<<<<<< ours" in merged and "she is back Friday" in merged


def test_crlf_on_one_clone_against_lf_on_the_other_merges_each_line_once(tmp_path, gitenv):
    a, b = two_clones(tmp_path)
    a.retain("The heron survey moved to March.", "Ann", DAYS[0])
    a.commit("heron")
    a.sync("no-rebase")
    no_conflicts(b.clone, pull(b.clone))
    log = log_of(a.clone)
    log.write_bytes(log.read_bytes().replace(b"\n", b"\r\n"))  # an editor saved it as CRLF
    a.retain("The osprey nest has three eggs.", "Ann", DAYS[0])
    a.commit("osprey, CRLF")
    a.sync("no-rebase")
    b.retain("The plover count was forty.", "Peter", DAYS[0])
    b.commit("plover")
    no_conflicts(b.clone, pull(b.clone))
    data = log_of(b.clone).read_bytes()
    assert data.count(b"## Retain") == 1 and data.count(b"heron survey") == 1
    assert b"\n" not in data.replace(b"\r\n", b"")  # the converting side's endings
    stated = [f.content for f in extract_facts(data.decode("utf-8"))[0]]
    assert len(stated) == 3 and len(set(stated)) == 3


def test_memory_md_appended_on_two_clones_merges_cleanly(tmp_path, gitenv):
    a, b = two_clones(tmp_path)
    for agent, line in ((a, "- Prefers tea in the morning."), (b, "- Works from Vienna.")):
        core = agent.clone / "MEMORY.md"
        core.write_text(core.read_text(encoding="utf-8") + f"\n{line}\n", encoding="utf-8")
        agent.commit("core")
    a.sync("no-rebase")
    no_conflicts(b.clone, pull(b.clone))
    core = (b.clone / "MEMORY.md").read_text(encoding="utf-8")
    assert (
        core.count("- Prefers tea in the morning.") == 1 and core.count("- Works from Vienna.") == 1
    )


def _fake_llm_reflect(agent: Agent) -> None:
    """reflect with an LLM's summary on each entity page (a fixed sentence stands for the LLM)."""
    from clawmem.files.atomic import write_atomic
    from clawmem.markdown.factlog import collect_facts
    from clawmem.reflect.pipeline import existing_entity_pages, plan_reflect

    with open_workspace(agent.clone) as mem:
        sc = mem.scan()
        result, conflicts = plan_reflect(
            agent.clone,
            collect_facts(agent.clone, sc, TODAY),
            existing_pages=existing_entity_pages(sc.files),
            summarize=lambda name, facts: f"{name} has {len(facts)} facts.",
            model="fake-llm",
        )
    assert not conflicts
    for change in result.written():
        write_atomic(agent.clone / change.path, change.new)


def _headings_hold_their_kinds(page: str) -> None:
    """Every fact line on an entity page sits under its kind's heading, each heading once."""
    from clawmem.markdown.kinds import SECTION_TITLES

    heads = [line for line in page.splitlines() if line.startswith("### ")]
    assert len(heads) == len(set(heads)), page
    under = ""
    for line in page.splitlines():
        if line.startswith("### "):
            under = line[4:]
        elif "opinion number" in line:
            assert under == SECTION_TITLES["O"], page
        elif "moved office" in line:
            assert under == SECTION_TITLES["W"], page


def test_a_generated_section_merged_from_two_clones_is_rewritten_after_the_merge(tmp_path, gitenv):
    a, b = two_clones(tmp_path)
    for agent, n in ((a, 1), (b, 2)):
        agent.retain(f"Peter moved office, step {n}.", "Peter", DAYS[0])
        with open_workspace(agent.clone) as mem:
            mem.retain(
                f"Peter's opinion number {n} of Rust.",
                kind="O",
                entities=["Peter"],
                confidence=0.6,
                day=DAYS[1],
            )
        agent.reflect()
        agent.commit(f"clone {n} reflects")
    a.sync("no-rebase")
    p = pull(b.clone)
    no_conflicts(b.clone, p)
    page = "bank/entities/Peter.md"
    assert "generated section(s) merged from two clones (" in p.stderr, p.stderr
    assert "rewrote" in p.stderr and "commit them" in p.stderr, p.stderr
    # The merge commit holds the union: flagged, both sides' lines, each under its heading.
    union = git(b.clone, "show", f"HEAD:{page}").stdout
    assert " merged (generated" in union
    _headings_hold_their_kinds(union)
    # The working tree holds what reflect writes from the merged facts, to commit.
    assert merged_sections(b.clone) == []
    changed = git(b.clone, "status", "--porcelain").stdout.split()
    assert page in changed and set(changed[::2]) == {"M"}, changed
    with open_workspace(b.clone) as mem:
        assert [c.path for c in mem.reflect(today=TODAY, dry_run=True).written()] == []
        assert mem.check() == []


def test_a_merged_section_whose_rewrite_needs_a_model_is_flagged_until_reflect(tmp_path, gitenv):
    a, b = two_clones(tmp_path)
    for agent, n in ((a, 1), (b, 2)):
        agent.retain(f"Peter moved office, step {n}.", "Peter", DAYS[0])
        _fake_llm_reflect(agent)
        agent.commit(f"clone {n} reflects with an LLM")
    a.sync("no-rebase")
    p = pull(b.clone)
    no_conflicts(b.clone, p)
    page = "bank/entities/Peter.md"
    assert "`clawmem reflect` rewrites them" in p.stderr
    assert merged_sections(b.clone) == [page]  # left for reflect: its summary needs the LLM
    _headings_hold_their_kinds((b.clone / page).read_text(encoding="utf-8"))
    st = cli_subprocess("-w", str(b.clone), "status")
    assert "merged" in st.out and page in st.out
    ck = cli_subprocess("-w", str(b.clone), "check", "--json")
    assert ck.code == 9 and '"problem": "merged"' in ck.out and page in ck.out
    assert cli_subprocess("-w", str(b.clone), "reflect").code == 0
    assert merged_sections(b.clone) == []
    assert cli_subprocess("-w", str(b.clone), "check").code == 0


def test_autocommit_commits_each_fact_retained_and_only_its_log(tmp_path, gitenv):
    a, _ = two_clones(tmp_path)
    (a.clone / "clawmem.toml").write_text("[git]\nautocommit = true\n", encoding="utf-8")
    a.commit("autocommit")
    (a.clone / "draft.md").write_text("a person's work in progress\n", encoding="utf-8")
    git(a.clone, "add", "draft.md")
    r = cli_subprocess("-w", str(a.clone), "retain", "The heron survey moved to March.", "--json")
    assert r.code == 0, r.err
    assert '"git": "committed"' in r.out
    last = git(a.clone, "log", "-1", "--name-only", "--format=%s").stdout.split("\n")
    assert last[0] == "clawmem retain: The heron survey moved to March."
    # The day's log, and who wrote the fact (.clawmem/writers, read by `clawmem history`).
    assert sorted(x for x in last[1:] if x) == [
        ".clawmem/writers",
        f"memory/{date.today().isoformat()}.md",
    ]
    # what the person staged is still staged, not committed
    assert git(a.clone, "status", "--porcelain").stdout == "A  draft.md\n"
    git(a.clone, "rm", "-q", "--cached", "draft.md")
    (a.clone / "draft.md").unlink()
    # a duplicate writes nothing, so commits nothing
    r = cli_subprocess("-w", str(a.clone), "retain", "The heron survey moved to March.")
    assert r.code == 0 and git(a.clone, "status", "--porcelain").stdout == ""


@pytest.mark.parametrize("how", ["no-rebase", "rebase"])
def test_with_autocommit_the_rewritten_sections_are_committed_after_the_pull(tmp_path, gitenv, how):
    a, b = two_clones(tmp_path)
    (a.clone / "clawmem.toml").write_text("[git]\nautocommit = true\n", encoding="utf-8")
    a.commit("autocommit")
    a.sync("no-rebase")
    no_conflicts(b.clone, pull(b.clone))
    for agent, n in ((a, 1), (b, 2)):
        agent.retain(f"Peter moved office, step {n}.", "Peter", DAYS[0])  # committed by retain
        agent.reflect()
        agent.commit(f"clone {n} reflects")
    a.sync("no-rebase")
    p = git(b.clone, "pull", "-q", f"--{how}", "origin", "main", check=False)
    no_conflicts(b.clone, p)
    assert "committed ([git] autocommit)" in p.stderr, p.stderr
    assert git(b.clone, "status", "--porcelain").stdout == ""
    last = git(b.clone, "log", "-1", "--format=%s").stdout.strip()
    assert last == "clawmem: rewrite generated sections merged from two clones"
    assert merged_sections(b.clone) == []
    with open_workspace(b.clone) as mem:
        assert mem.reflect(today=TODAY, dry_run=True).written() == []


def test_what_a_remote_agent_retains_over_mcp_is_committed(tmp_path, gitenv):
    pytest.importorskip("mcp")
    from .test_mcp import _ok, run_session

    a, _ = two_clones(tmp_path)
    (a.clone / "clawmem.toml").write_text("[git]\nautocommit = true\n", encoding="utf-8")
    a.commit("autocommit")

    async def scenario(session, _init):
        return await session.call_tool("memory_retain", {"text": "The egret left on Sunday."})

    out = _ok(run_session(tmp_path, a.clone, scenario))
    assert out["stored"] is True and out["git"] == "committed"
    assert git(a.clone, "status", "--porcelain").stdout == ""
    subject = git(a.clone, "log", "-1", "--format=%s").stdout.strip()
    assert subject == "clawmem retain: The egret left on Sunday."


def test_the_driver_given_a_version_it_cannot_read_says_which_in_one_line(tmp_path):
    """%O, %A or %B missing, a folder or a FIFO (the driver run by hand, or a git that handed it
    wrong paths): an internal error with a traceback hint before; now one line naming the file,
    which version it is and the fix, exit 7 (not 12: the driver's command then falls back to
    git's own merge), without blocking on the FIFO and without touching our version."""
    (tmp_path / "O").write_text("# 2025-11-01\n")
    ours = tmp_path / "A"
    ours.write_text("# 2025-11-01\n\nmine\n")
    (tmp_path / "D").mkdir()
    os.mkfifo(tmp_path / "F")
    rel = "memory/2025-11-01.md"
    for args, culprit, which in (
        (("O", "A", "B"), "B", "their version (%B)"),
        (("gone", "A", "O"), "gone", "the common ancestor's version (%O)"),
        (("O", "D", "O"), "D", "our version (%A)"),
        (("F", "A", "O"), "F", "the common ancestor's version (%O)"),
    ):
        r = cli_subprocess("merge-driver", *args, rel, cwd=tmp_path, timeout=60)
        assert r.code == 7, (args, r.code, r.err)
        lines = r.err.splitlines()
        assert lines[0].startswith(f"clawmem: error: {culprit}: cannot read {which} of {rel}: ")
        assert "internal error" not in r.err and "Traceback" not in r.err
        assert lines[1].startswith("  hint: git runs `clawmem merge-driver %O %A %B %P`")
    assert ours.read_text() == "# 2025-11-01\n\nmine\n"


def test_the_driver_leaves_a_file_that_is_not_clawmems_to_gits_own_merge(tmp_path, gitenv):
    """A cloned repository's .gitattributes names the files git hands the merge driver, and can
    name any (``*.py merge=clawmem``); with a committed .clawmem/forgotten listing a line of the
    user's code, the driver blanked that line (``check_auth(user)``) in a merge after `clawmem
    init --git`. A file that is not memory gets git's own merge; memory keeps clawmem's."""
    from clawmem.markdown.forgotten import FORGOTTEN, key

    src = tmp_path / "src"
    shutil.copytree(FIXTURE, src, ignore=shutil.ignore_patterns(".memory"))
    (src / "app.py").write_text("def handler(user):\n    check_auth(user)\n    return 1\n")
    (src / ".clawmem").mkdir()
    (src / FORGOTTEN).write_text(f"{key('    check_auth(user)')}  memory/x.md  2026-01-01\n")
    (src / ".gitattributes").write_text("*.py merge=clawmem\n")
    git(src, "init", "-q")
    git(src, "add", "-A")
    git(src, "commit", "-qm", "hostile")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(src), str(clone))
    assert cli_subprocess("init", str(clone), "--git").code == 0
    git(clone, "add", "-A")
    git(clone, "commit", "-qm", "init")
    git(clone, "checkout", "-q", "-b", "feature")
    app = clone / "app.py"
    app.write_text("# header\n" + app.read_text())
    git(clone, "commit", "-qam", "feature")
    git(clone, "checkout", "-q", "main")
    app.write_text(app.read_text() + "# trailing\n")
    git(clone, "commit", "-qam", "main")
    git(clone, "merge", "-q", "feature", "-m", "merge")
    assert (
        app.read_text()
        == "# header\ndef handler(user):\n    check_auth(user)\n    return 1\n# trailing\n"
    )
