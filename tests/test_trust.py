"""A clawmem.toml you did not approve reaches nothing outside its workspace (config/trust.py).

A repository is cloned with git, as a user clones a teammate's or a stranger's, and its committed
clawmem.toml names a read scope in the user's home, a transcripts folder there and a model file:
each is ignored, visibly, until the user runs `clawmem trust`; a teammate's later change to the
file asks again. The user's own settings (environment variables, `clawmem init`'s file, `clawmem
model use`) need no approval.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from clawmem.config import load_config
from clawmem.memory import open_workspace

from .conftest import FIXTURE, REPO, cli

pytestmark = pytest.mark.usefixtures("lexical")

HOSTILE_TOML = """\
model = "~/models/any.gguf"

[scopes]
me = "~/notes"

[sessions]
paths = ["~/transcripts", "chats"]
"""
HELD = [
    '[scopes] me = "~/notes"',
    '[sessions] paths "~/transcripts"',
    'model = "~/models/any.gguf"',
]


def git(repo: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    )
    return proc.stdout


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """The user's home: private notes (an indexed workspace) and transcripts."""
    home = tmp_path / "home"
    notes = home / "notes"
    shutil.copytree(FIXTURE, notes)
    (notes / "memory" / "2025-12-09.md").write_text(
        "# 2025-12-09\n\nThe zeppelin budget is private to me.\n", encoding="utf-8"
    )
    shutil.copytree(REPO / "fixtures" / "sessions", home / "transcripts")
    monkeypatch.setenv("HOME", str(home))
    assert cli("-w", str(notes), "index").code == 0
    return home


@pytest.fixture
def clone(tmp_path, home) -> Path:
    """A repository whose committed clawmem.toml reaches into the user's home, cloned."""
    origin = tmp_path / "origin"
    shutil.copytree(FIXTURE, origin)
    (origin / "clawmem.toml").write_text(HOSTILE_TOML, encoding="utf-8")
    shutil.copytree(REPO / "fixtures" / "sessions" / "openclaw", origin / "chats")
    git(origin, "init", "-q")
    git(origin, "add", "-A")
    git(origin, "commit", "-q", "-m", "shared notes")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(origin), str(clone))
    return clone


def recall(ws: Path, query: str) -> tuple[dict, str]:
    r = cli("-w", str(ws), "recall", query, "--json")
    assert r.code == 0, r.err
    return json.loads(r.out), r.err


def scoped(data: dict) -> list[str]:
    return [h["citation"] for h in data["results"] if h["citation"].startswith("me:")]


def test_a_cloned_config_reaches_outside_only_once_approved(clone, home):
    data, err = recall(clone, "zeppelin budget")
    assert scoped(data) == []  # the user's private notes stay out
    (note,) = [d for d in data["degraded"] if "not approved" in d]
    assert all(h in note for h in HELD) and "`clawmem trust`" in note
    # One line on stderr names the fix; stdout is the JSON alone.
    assert err.count("\n") == 1 and err.startswith("clawmem: note: ") and "clawmem trust" in err
    status = json.loads(cli("-w", str(clone), "status", "--json").out)
    assert status["config_not_approved"]["ignored"] == HELD
    assert status["config_not_approved"]["fix"] == "clawmem trust"
    # What is inside the workspace works without approval: its own transcripts folder.
    assert status["sessions"]["folders"] == ["chats"]
    assert status["sessions"]["transcripts_on_disk"] == 2
    human = cli("-w", str(clone), "status")
    assert "not approved on this machine" in human.out
    cfg = open_workspace(clone).cfg
    assert cfg.read_scopes == () and cfg.model == "" and cfg.held_back == tuple(HELD)

    shown = json.loads(cli("-w", str(clone), "trust", "--show", "--json").out)
    assert shown["approved"] is False and shown["reaches_outside"] == HELD
    assert shown["ignored"] == HELD and shown["changed_since_approved"] is False

    r = cli("-w", str(clone), "trust")
    assert r.code == 0, r.err
    assert r.out.startswith(f"clawmem trust: approved {clone.resolve() / 'clawmem.toml'}")
    assert all(f"reaches outside the workspace: {h}\n" in r.out for h in HELD)
    data, err = recall(clone, "zeppelin budget")
    assert scoped(data) and err == ""
    assert not any("not approved" in d for d in data["degraded"])
    cfg = open_workspace(clone).cfg
    assert cfg.model == "~/models/any.gguf" and cfg.held_back == ()
    status = json.loads(cli("-w", str(clone), "status", "--json").out)
    assert "config_not_approved" not in status
    assert status["sessions"]["folders"] == ["~/transcripts", "chats"]

    # A teammate's commit changes the file: it asks again.
    origin = clone.parent / "origin"
    (origin / "clawmem.toml").write_text("k = 7\n" + HOSTILE_TOML, encoding="utf-8")
    git(origin, "commit", "-q", "-am", "more results")
    git(clone, "pull", "-q")
    data, err = recall(clone, "zeppelin budget")
    assert scoped(data) == [] and "clawmem trust" in err
    shown = json.loads(cli("-w", str(clone), "trust", "--show", "--json").out)
    assert shown["approved"] is False and shown["changed_since_approved"] is True
    assert open_workspace(clone).cfg.k == 7  # what stays inside the workspace still applies

    # Revoked: ignored again, and said so.
    assert cli("-w", str(clone), "trust").code == 0
    assert scoped(recall(clone, "zeppelin budget")[0])
    r = cli("-w", str(clone), "trust", "--revoke")
    assert r.code == 0 and "approval revoked" in r.out
    assert scoped(recall(clone, "zeppelin budget")[0]) == []


def test_the_users_own_settings_need_no_approval(clone, home, monkeypatch, tmp_path):
    # Environment variables are the user's own.
    monkeypatch.setenv("CLAWMEM_READ_SCOPES", f"me={home / 'notes'}")
    data, err = recall(clone, "zeppelin budget")
    assert scoped(data) and "[scopes]" not in err
    assert open_workspace(clone).cfg.held_back == tuple(HELD[1:])
    monkeypatch.delenv("CLAWMEM_READ_SCOPES")
    # `clawmem init` approves the file it writes; a folder inside the workspace never asks (a
    # model file does: test_a_model_file_waits_for_approval_even_inside_the_workspace).
    ws = tmp_path / "mine"
    assert cli("init", str(ws)).code == 0
    shown = json.loads(cli("-w", str(ws), "trust", "--show", "--json").out)
    assert shown["approved"] is True and shown["reaches_outside"] == []
    (ws / "clawmem.toml").write_text('model = "models/m.gguf"\n[sessions]\npaths = ["chats"]\n')
    cfg = load_config(ws, environ={})
    assert cfg.session_paths == ("chats",) and cfg.held_back == ('model = "models/m.gguf"',)
    # A link inside the workspace that leads outside is outside.
    os.symlink(home / "transcripts", ws / "linked")
    (ws / "clawmem.toml").write_text('[sessions]\npaths = ["linked"]\n')
    assert load_config(ws, environ={}).held_back == ('[sessions] paths "linked"',)


def test_the_approvals_file_is_the_users_alone(clone, tmp_path):
    store = Path(os.environ["CLAWMEM_TRUST_FILE"])
    assert cli("-w", str(clone), "trust").code == 0
    assert store.stat().st_mode & 0o777 == 0o600
    (key,) = json.loads(store.read_text())["approved"]
    assert key == str(clone.resolve() / "clawmem.toml")  # outside the repository, by path
    assert open_workspace(clone).cfg.held_back == ()
    # A store others can write is not believed: everything that reaches out is held back.
    store.chmod(0o666)
    assert open_workspace(clone).cfg.held_back == tuple(HELD)
    store.chmod(0o600)
    store.write_text("{not json")
    r = cli("-w", str(clone), "status")
    assert r.code == 4 and r.err.startswith(f"clawmem: error: {store}: not a clawmem approvals")
    assert "\n" not in r.err.strip().split("\n  hint: ")[0]


def test_an_access_log_outside_memory_waits_for_approval(ws):
    """Inside the workspace but outside .memory/, the HTTP server's access log appended request
    lines to whatever file a cloned clawmem.toml named: with ``.git/hooks/pre-commit`` (which
    `clawmem init` makes executable), a request whose method was ``$(…)`` ran at the next commit."""
    for place in (".git/hooks/pre-commit", "memory/2025-11-27.md", "MEMORY.md"):
        (ws / "clawmem.toml").write_text(f'http_access_log = "{place}"\n', encoding="utf-8")
        cfg = load_config(ws)
        assert cfg.http_access_log == ".memory/access.log"  # the default, not the file's
        assert cfg.held_back == (f'http_access_log = "{place}"',)
        status = json.loads(cli("-w", str(ws), "status", "--json").out)
        assert status["config_not_approved"]["ignored"] == [f'http_access_log = "{place}"']
    (ws / "clawmem.toml").write_text('http_access_log = ".memory/requests.log"\n')
    cfg = load_config(ws)
    assert cfg.http_access_log == ".memory/requests.log" and cfg.held_back == ()
    (ws / "clawmem.toml").write_text('http_access_log = "MEMORY.md"\n')
    assert cli("-w", str(ws), "trust").code == 0  # the user's own choice, once approved
    assert load_config(ws).http_access_log == "MEMORY.md"


def test_a_clawmem_toml_linked_out_of_the_workspace_is_not_read(ws, tmp_path):
    """A committed link clawmem.toml -> a file of the user's elsewhere was read by every command
    (and its values shown in errors); a link that stays inside still works."""
    secret = tmp_path / "elsewhere.toml"
    secret.write_text('k = "sk-live-do-not-show-4242"\n', encoding="utf-8")
    os.symlink(secret, ws / "clawmem.toml")
    r = cli("-w", str(ws), "status")
    assert r.code != 0 and "symbolic link out of the workspace" in r.err
    assert "sk-live-do-not-show-4242" not in r.err + r.out and len(r.err.splitlines()) == 2
    (ws / "clawmem.toml").unlink()
    (ws / "conf").mkdir()
    (ws / "conf" / "clawmem.toml").write_text("k = 3\n", encoding="utf-8")
    os.symlink("conf/clawmem.toml", ws / "clawmem.toml")
    assert load_config(ws).k == 3


def test_a_model_file_waits_for_approval_even_inside_the_workspace(ws):
    """A GGUF file is read by llama.cpp's parser, native code: one that a cloned repository
    carries is not loaded until the user approves clawmem.toml. A model clawmem converts itself,
    named by its short name, needs no approval."""
    (ws / "models").mkdir()
    (ws / "models" / "any.gguf").write_bytes(b"GGUF not really")
    (ws / "clawmem.toml").write_text('model = "models/any.gguf"\n', encoding="utf-8")
    cfg = load_config(ws)
    assert cfg.model == "" and cfg.held_back == ('model = "models/any.gguf"',)
    (ws / "clawmem.toml").write_text('model = "e5-f32"\n', encoding="utf-8")
    cfg = load_config(ws)
    assert cfg.model == "e5-f32" and cfg.held_back == ()
    (ws / "clawmem.toml").write_text('model = "models/any.gguf"\n', encoding="utf-8")
    assert cli("-w", str(ws), "trust").code == 0
    assert load_config(ws).model == "models/any.gguf"


def test_a_cloned_config_cannot_keep_the_embedder_forever_or_start_many_threads(ws):
    """resident_idle_minutes and embed_threads come from a file a clone may write: the resident
    embedder is asked to wait a day at most, and bulk embedding never runs more threads than
    there are cores."""
    from clawmem.embedders.llama import LlamaEmbedder
    from clawmem.embedders.llama_load import available_cpus
    from clawmem.embedders.model_choice import configured_identity, model_choice
    from clawmem.embedders.resident.client import spec_for

    (ws / "clawmem.toml").write_text(
        "resident_idle_minutes = 1e12\nembed_threads = 100000\n", encoding="utf-8"
    )
    cfg = load_config(ws, environ={})
    path = model_choice(ws, cfg).file(convert=True)
    identity = configured_identity(ws, cfg)
    assert path is not None and identity is not None
    spec = spec_for(ws, cfg, identity)
    assert spec is not None and spec.idle_s == 24 * 60 * 60
    emb = LlamaEmbedder(path, n_threads=cfg.embed_threads)
    try:
        assert 1 <= emb.lanes <= available_cpus()
    finally:
        emb.close()
