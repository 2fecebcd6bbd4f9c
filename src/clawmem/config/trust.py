"""Which ``clawmem.toml`` files the user approved on this machine.

A workspace's ``clawmem.toml`` is tracked by git, so a teammate's commit or any cloned repository
can write it. Its settings that lead outside the workspace (a read scope, a transcripts folder, a
model file: ``clawmem.config.PATH_SETTINGS``) take effect only once the user approved that file
here, the way direnv's ``allow`` or git's ``safe.directory`` work; so does a model file wherever it
is (``config.names_a_model_file``: llama.cpp parses it as native code). Everything else inside the
workspace works without asking. Environment variables (``$CLAWMEM_READ_SCOPES``…) are the user's own and
are never held back.

An approval names the file (the workspace's resolved path, then ``clawmem.toml``) and the SHA-256
of its bytes, so a changed file asks again. Approvals live outside every repository, in one JSON
file per user (``$CLAWMEM_TRUST_FILE``, else ``trusted.json`` in the user's config folder), mode
0600; a store that another user owns or can write is not believed.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from clawmem.errors import ConfigError, StoreError

CONFIG_FILE = "clawmem.toml"  # the settings file of a workspace (config/__init__.py reads it)
FIX = "clawmem trust"  # what every note about a held-back setting tells the user to run


def store_path() -> Path:
    explicit = os.environ.get("CLAWMEM_TRUST_FILE")
    if explicit:
        return Path(explicit).expanduser()
    from platformdirs import user_config_dir

    return Path(user_config_dir("clawmem")) / "trusted.json"


def config_key(root: Path) -> str:
    """The name an approval is stored under: the workspace's resolved path, then clawmem.toml
    (the file itself is not followed: a linked clawmem.toml is approved as this workspace's)."""
    return str(root.resolve() / CONFIG_FILE)


def digest(content: bytes) -> str:
    import hashlib  # only a file that reaches outside is hashed: a cold recall never is

    return hashlib.sha256(content).hexdigest()


def _believed(path: Path) -> bool:
    """A store is believed only when it is this user's own and nobody else can write it."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return True
    if not stat.S_ISREG(st.st_mode):
        return False
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return False
    return not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _read(path: Path) -> dict[str, dict]:
    if not _believed(path):
        return {}
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    try:
        rows = json.loads(raw)["approved"]
        return {str(k): {"sha256": str(v["sha256"]), "at": str(v["at"])} for k, v in rows.items()}
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ConfigError(
            f"{path}: not a clawmem approvals file ({type(exc).__name__}: {exc})",
            hint=f"delete it and approve your workspaces again (`{FIX}` in each)",
        ) from None


def _write(path: Path, rows: dict[str, dict]) -> None:
    import tempfile

    text = json.dumps({"approved": rows}, indent=2, sort_keys=True) + "\n"
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(prefix=".trusted.", dir=path.parent)
        try:
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise StoreError(
            f"{path}: cannot write the approvals file ({exc.strerror or exc})",
            hint="check the folder's permissions, or point $CLAWMEM_TRUST_FILE elsewhere",
        ) from None


def is_approved(root: Path, content: bytes) -> bool:
    """Whether the user approved this workspace's clawmem.toml with exactly this content."""
    row = _read(store_path()).get(config_key(root))
    return row is not None and row["sha256"] == digest(content)


def was_approved(root: Path) -> bool:
    """Whether some content of this workspace's clawmem.toml was approved (maybe not this one)."""
    return config_key(root) in _read(store_path())


def _update(change: dict[str, dict | None]) -> None:
    import filelock

    path = store_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as exc:
        raise StoreError(
            f"{path.parent}: cannot create the approvals file's folder ({exc.strerror or exc})",
            hint="point $CLAWMEM_TRUST_FILE at a writable place",
        ) from None
    with filelock.FileLock(str(path) + ".lock", timeout=10):
        rows = _read(path)
        for key, row in change.items():
            if row is None:
                rows.pop(key, None)
            else:
                rows[key] = row
        _write(path, rows)


def approve(root: Path, content: bytes | None = None) -> str:
    """Approve the workspace's clawmem.toml as it is now (or as ``content``); its SHA-256."""
    if content is None:
        try:
            content = (root / CONFIG_FILE).read_bytes()
        except FileNotFoundError:
            raise ConfigError(
                f"{root / CONFIG_FILE}: no such file", hint="there is nothing to approve"
            ) from None
    from datetime import UTC, datetime

    sha = digest(content)
    at = datetime.now(UTC).replace(microsecond=0).isoformat()
    _update({config_key(root): {"sha256": sha, "at": at}})
    return sha


def revoke(root: Path) -> bool:
    """Forget the approval of the workspace's clawmem.toml; whether there was one."""
    if not was_approved(root):
        return False
    _update({config_key(root): None})
    return True


def carry_over(root: Path, before: bytes | None, reached_before: bool) -> None:
    """clawmem itself changed the file at the user's command (``model use``): the new content is
    approved when the old one needed no approval or had it. A file that was held back stays so."""
    if before is None or not reached_before or is_approved(root, before):
        approve(root)


@dataclass(frozen=True)
class TrustState:
    """What ``clawmem trust --show`` reports about a workspace's clawmem.toml."""

    file: str
    exists: bool
    approved: bool  # this content is approved on this machine
    changed: bool  # an earlier content was approved, not this one
    reaches: tuple[str, ...]  # its settings that lead outside the workspace
    held_back: tuple[str, ...]  # those of them ignored now
    store: str

    @property
    def needed(self) -> bool:
        return bool(self.reaches)

    def to_dict(self) -> dict:
        return {
            "file": self.file,
            "exists": self.exists,
            "approved": self.approved,
            "changed_since_approved": self.changed,
            "reaches_outside": list(self.reaches),
            "ignored": list(self.held_back),
            "store": self.store,
        }


def note(held_back: tuple[str, ...] | list[str]) -> str:
    """The one line that says what is held back and how to approve it."""
    return (
        f"{CONFIG_FILE} is not approved on this machine: ignoring {', '.join(held_back)} "
        f"(outside the workspace); run `{FIX}` to approve it"
    )
