"""Shared fixtures: real workspaces on disk, the real CLI, the real model.

The fixture workspace is copied into a temporary folder for every test that writes. Tests that
need vectors share one index built once per session with the real GGUF model, then copy it.

The suite runs on pytest-xdist workers (``-n auto`` in pyproject.toml). What is costly to build
and only ever read or copied (the converted models, the indexed templates) is built once per run
for all workers by ``built_once``, not once per worker.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# Property tests check what comes out, not how fast: on a loaded machine (two xdist workers on two
# cores, and whatever else runs there) input generation and single examples can be slow, which
# Hypothesis would report as a failed health check or a missed deadline.
settings.register_profile("clawmem", suppress_health_check=[HealthCheck.too_slow], deadline=None)
settings.load_profile("clawmem")

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "fixtures" / "workspace"
SHARED = REPO.parent / "shared"


@dataclass
class Run:
    code: int
    out: str
    err: str


def cli(*args: str, cwd: Path | None = None) -> Run:
    """Run ``clawmem ARGS`` in-process through the real entry point (error boundary included)."""
    from clawmem.cli.app import main

    out, err = io.StringIO(), io.StringIO()
    old = Path.cwd()
    code = 0
    try:
        if cwd is not None:
            os.chdir(cwd)
        with redirect_stdout(out), redirect_stderr(err):
            try:
                main(list(args))
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        os.chdir(old)
    return Run(code, out.getvalue(), err.getvalue())


def cli_subprocess(*args: str, cwd: Path | None = None, env: dict | None = None, **kw) -> Run:
    """Run ``python -m clawmem ARGS`` in a fresh process, exactly as a user or agent would."""
    proc = subprocess.run(
        [sys.executable, "-m", "clawmem", *args],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        **kw,
    )
    return Run(proc.returncode, proc.stdout, proc.stderr)


def built_once(tmp_path_factory, name: str, build: Callable[[Path], object]) -> Path:
    """The folder ``name``, filled by ``build(folder)`` once per test run: with pytest-xdist the
    first worker to ask builds it while the others wait on a file lock, then every worker uses
    the same folder (read it or copy it; never change it). A build that fails leaves no marker,
    so the next worker to ask builds it again and fails on its own account."""
    import filelock

    base = tmp_path_factory.getbasetemp()
    if "PYTEST_XDIST_WORKER" in os.environ:
        base = base.parent  # the run's folder, above each worker's own
    dest, done = base / name, base / f"{name}.built"
    with filelock.FileLock(str(base / f"{name}.lock")):
        if not done.exists():
            shutil.rmtree(dest, ignore_errors=True)  # a failed build's remains
            dest.mkdir()
            build(dest)
            done.touch()
    return dest


@pytest.fixture(scope="session", autouse=True)
def _bytecode_once(tmp_path_factory) -> None:
    """Hundreds of tests start ``python -m clawmem`` (and readers, daemons, hooks) as users do.
    With PYTHONDONTWRITEBYTECODE set (as on our build machines), every one of those processes
    compiled clawmem's modules from source again, a tenth of a second of CPU each time. Child
    processes now share one bytecode cache per run, kept under the run's temporary folder (the
    source tree gets no ``__pycache__``); Python checks each cached file against its source,
    so what runs is still the code under test."""
    base = tmp_path_factory.getbasetemp()
    if "PYTEST_XDIST_WORKER" in os.environ:
        base = base.parent  # one cache for all workers
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = str(base / "pycache")


@pytest.fixture(scope="session")
def model_cache(tmp_path_factory) -> Path:
    """One converted default model per test run (conversion is our own code under test; its
    file lock makes workers that need it at once convert it once)."""
    return built_once(tmp_path_factory, "model-cache", lambda folder: None)


@pytest.fixture(scope="session")
def runtime_dir(tmp_path_factory):
    """The user's runtime folder for this test run: the resident embedders the tests start
    (embedders/resident/client.py) live here, one per model for every worker, as for a user; never the
    runner's own. At the end of the run their sockets are removed, and each embedder ends
    within a second (a worker that finishes first may end one that another still uses: that one
    then starts it again)."""
    base = tmp_path_factory.getbasetemp()
    if "PYTEST_XDIST_WORKER" in os.environ:
        base = base.parent
    folder = base / "run"
    folder.mkdir(mode=0o700, exist_ok=True)
    yield folder
    for sock in folder.glob("embed-*.sock"):
        sock.unlink(missing_ok=True)


@pytest.fixture(autouse=True)
def _isolate(monkeypatch, model_cache, runtime_dir, tmp_path_factory):
    for key in list(os.environ):
        if key.startswith("CLAWMEM_"):
            monkeypatch.delenv(key)
    # Approvals of clawmem.toml files (config/trust.py) and tokens: this test's own, never the
    # runner's (a test approves what it needs with `approve`).
    user = tmp_path_factory.mktemp("user-config")
    monkeypatch.setenv("CLAWMEM_TRUST_FILE", str(user / "trusted.json"))
    monkeypatch.setenv("CLAWMEM_TOKENS_FILE", str(user / "tokens.json"))
    monkeypatch.setenv("CLAWMEM_CACHE_DIR", str(model_cache))
    monkeypatch.setenv("CLAWMEM_RUNTIME_DIR", str(runtime_dir))
    # Tests of ranking, filters and output read every hit: abstention (no hits when none is
    # relevant enough) is a judgement about tiny test workspaces too, and has its own tests
    # (tests/test_relevance.py), which use the default threshold (the ``abstaining`` fixture).
    monkeypatch.setenv("CLAWMEM_MIN_RELEVANCE", "0")


def approve(ws: Path) -> None:
    """The user approves the workspace's clawmem.toml as it is now (`clawmem trust`): a test
    whose settings lead outside the workspace (a scope, a transcripts folder) needs it."""
    from clawmem.config import trust

    trust.approve(ws)


@pytest.fixture
def abstaining(monkeypatch):
    """The default relevance threshold, as users get it."""
    monkeypatch.delenv("CLAWMEM_MIN_RELEVANCE", raising=False)


@pytest.fixture
def lexical(monkeypatch):
    """Lexical-only mode, for tests about the lexical path (fast, no model)."""
    monkeypatch.setenv("CLAWMEM_VECTORS", "0")


@pytest.fixture
def ws(tmp_path) -> Path:
    dest = tmp_path / "ws"
    shutil.copytree(FIXTURE, dest)
    return dest


def copy_indexed(template: Path, dest: Path) -> Path:
    """Copy an indexed workspace built once (``built_once``) to ``dest`` for one test, its index
    adopted as this machine's (``Index.stamp_origin``, the product's own record). A copied index
    is another file, which clawmem treats as foreign and rebuilds from the Markdown before any
    read (docs/storage.md, "An index from elsewhere"); the test process made this one itself, so
    it may say so, and each test reads the index built once rather than rebuilding it."""
    shutil.copytree(template, dest)
    adopt_index(dest / ".memory" / "index.sqlite")
    return dest


def adopt_index(path: Path) -> Path:
    """Record the index file at ``path`` as built here, as ``sync.swap_in`` records a rebuild: for
    a test that copies an index this process built, standing in for clawmem's own swap."""
    from clawmem.store.index import Index

    idx = Index.open(path)
    try:
        with idx.conn:
            idx.stamp_origin()
    finally:
        idx.close()
    return path


@pytest.fixture(scope="session")
def indexed_template(tmp_path_factory, model_cache, runtime_dir) -> Path:
    """The fixture workspace indexed once with the real model (vectors included)."""

    def build(folder: Path) -> None:
        shutil.copytree(FIXTURE, folder / "ws")
        env = {k: v for k, v in os.environ.items() if not k.startswith("CLAWMEM_")}
        env["CLAWMEM_CACHE_DIR"] = str(model_cache)
        env["CLAWMEM_RUNTIME_DIR"] = str(runtime_dir)
        proc = subprocess.run(
            [sys.executable, "-m", "clawmem", "-w", str(folder / "ws"), "index", "--json"],
            env=env,
            capture_output=True,
            text=True,
        )
        assert proc.returncode == 0, proc.stderr

    return built_once(tmp_path_factory, "indexed", build) / "ws"


@pytest.fixture(scope="session")
def _loaded_models() -> dict:
    return {}


@pytest.fixture
def shared_model(monkeypatch, _loaded_models):
    """The real model, loaded once per session and per configuration (a model is read-only, and
    loading it costs seconds): for in-process tests that run many commands on the real model."""
    import clawmem.embedders.model_choice as mc

    load = mc.load_embedder

    def cached(root, cfg):
        choice = mc.model_choice(root, cfg)
        key = (str(choice.path), choice.builtin, choice.query_prefix, choice.document_prefix,
               cfg.embed_threads)  # fmt: skip
        if key not in _loaded_models:
            _loaded_models[key] = load(root, cfg)  # a failure raises and is not cached
        return _loaded_models[key]

    monkeypatch.setattr(mc, "load_embedder", cached)


@pytest.fixture
def indexed(indexed_template, tmp_path, shared_model) -> Path:
    return copy_indexed(indexed_template, tmp_path / "ws")


@pytest.fixture
def hash_model(monkeypatch):
    """The deterministic test embedder (embedders/testing.py) stands in for the configured model
    in this process: for plumbing tests (storage, cache, filters, fusion), not for meaning."""
    import clawmem.embedders.model_choice
    from clawmem.embedders.testing import HashEmbedder

    def load(root, cfg):  # the prefixes configured make a new vector space, as with a real model
        return HashEmbedder(
            query_prefix=cfg.query_prefix or "", document_prefix=cfg.document_prefix or ""
        )

    monkeypatch.setattr(clawmem.embedders.model_choice, "load_embedder", load)
    # ... and for the identity a process reads from the model file without loading it.
    monkeypatch.setattr(
        clawmem.embedders.model_choice,
        "configured_identity",
        lambda root, cfg: load(root, cfg).identity,
    )


@pytest.fixture(scope="session")
def hash_indexed_template(tmp_path_factory) -> Path:
    """The fixture workspace indexed once with the test embedder."""
    from clawmem import open_workspace
    from clawmem.embedders.testing import HashEmbedder

    def build(folder: Path) -> None:
        shutil.copytree(FIXTURE, folder / "ws")
        open_workspace(folder / "ws", environ={}, embedder=HashEmbedder()).index()

    return built_once(tmp_path_factory, "hash-indexed", build) / "ws"


@pytest.fixture
def hash_indexed(hash_indexed_template, hash_model, tmp_path) -> Path:
    return copy_indexed(hash_indexed_template, tmp_path / "ws")
