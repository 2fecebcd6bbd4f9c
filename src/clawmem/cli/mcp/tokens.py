"""Access tokens for ``clawmem mcp --http``: who may read, or write, which workspaces.

A token is a random secret shown once, when it is created; only its SHA-256 is stored, with a
name, the workspaces it opens, whether it may write (``memory_retain``) or only read, and what
beyond the workspace itself it reaches: the read scopes it names (``--scope team``) and the
conversation transcripts (``--sessions``); by default, neither (``clawmem.cli.mcp.access``). The store
is one JSON file per user (``$CLAWMEM_TOKENS_FILE``, else ``tokens.json`` in the user's config
folder), written atomically with mode 0600 under a file lock. A running server reads it again
whenever it changes, so a revoked token stops working at its next request without a restart.

The secrets are 256 random bits, so a plain hash is enough (no salt or slow hash: nothing to
guess); comparison is in constant time.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from clawmem.errors import ConfigError, StoreError, UsageError
from clawmem.files.atomic import write_atomic

if TYPE_CHECKING:
    from filelock import BaseFileLock

PREFIX = "cmt_"  # so a leaked secret is recognisable (and greppable) as a clawmem token


@dataclass(frozen=True)
class Token:
    id: str  # short public handle: list and revoke name it, never the secret
    name: str
    sha256: str
    workspaces: tuple[str, ...]  # absolute paths
    write: bool
    created: str  # ISO 8601 UTC
    scopes: tuple[str, ...] = ()  # the read scopes it reaches, by name
    sessions: bool = False  # whether it reaches conversation transcripts

    def opens(self, workspace: Path) -> bool:
        return str(workspace.resolve()) in self.workspaces

    def public(self) -> dict:
        """What `token list --json` shows: everything but the hash."""
        data = asdict(self)
        del data["sha256"]
        data["workspaces"] = list(self.workspaces)
        data["scopes"] = list(self.scopes)
        return data


def store_path() -> Path:
    explicit = os.environ.get("CLAWMEM_TOKENS_FILE")
    if explicit:
        return Path(explicit).expanduser()
    from platformdirs import user_config_dir

    return Path(user_config_dir("clawmem")) / "tokens.json"


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def _read(path: Path) -> list[Token]:
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    try:
        rows = json.loads(raw)["tokens"]
        return [
            Token(
                id=r["id"],
                name=r["name"],
                sha256=r["sha256"],
                workspaces=tuple(r["workspaces"]),
                write=bool(r["write"]),
                created=r["created"],
                # Tokens made before scopes and sessions were named reach neither.
                scopes=tuple(r.get("scopes", ())),
                sessions=bool(r.get("sessions", False)),
            )
            for r in rows
        ]
    except (ValueError, KeyError, TypeError) as exc:
        raise ConfigError(
            f"{path}: not a clawmem token store ({type(exc).__name__}: {exc})",
            hint="restore it from a backup, or delete it and create the tokens again",
        ) from None


def _write(path: Path, tokens: list[Token]) -> None:
    rows = [
        {**asdict(t), "workspaces": list(t.workspaces), "scopes": list(t.scopes)} for t in tokens
    ]
    try:
        write_atomic(path, json.dumps({"tokens": rows}, indent=2) + "\n", mode=0o600)
    except OSError as exc:
        raise StoreError(
            f"{path}: cannot write the token store ({exc.strerror or exc})",
            hint="check the folder's permissions, or point $CLAWMEM_TOKENS_FILE elsewhere",
        ) from None


def _locked(path: Path) -> BaseFileLock:
    import filelock

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(
            f"{path.parent}: cannot create the token store's folder ({exc.strerror or exc})",
            hint="point $CLAWMEM_TOKENS_FILE at a writable place",
        ) from None
    return filelock.FileLock(str(path) + ".lock", timeout=10)


def list_tokens(path: Path | None = None) -> list[Token]:
    return _read(path or store_path())


def create(
    name: str,
    workspaces: list[Path],
    *,
    write: bool = False,
    scopes: list[str] | None = None,
    sessions: bool = False,
    path: Path | None = None,
) -> tuple[Token, str]:
    """A new token for ``workspaces``; returns it and its secret (the only time it is known).
    ``scopes``: the read scopes it reaches, by name; ``sessions``: whether it reaches
    conversation transcripts."""
    from clawmem.config import SCOPE_NAME

    name = name.strip()
    if not name or not name.isprintable():  # it is written in the access log
        raise UsageError(
            f"a token needs a printable name, got {name!r}", hint="--name laptop-agent"
        )
    for scope in scopes or []:
        if not SCOPE_NAME.fullmatch(scope):
            raise UsageError(
                f"--scope {scope!r}: not a scope's name",
                hint="the name the workspace's [scopes] gives it: letters, digits, - and _",
            )
    if not workspaces:
        raise UsageError("a token needs at least one workspace", param="workspace")
    path = path or store_path()
    secret = PREFIX + secrets.token_urlsafe(32)
    token = Token(
        id="tok_" + secrets.token_hex(4),
        name=name,
        sha256=_digest(secret),
        workspaces=tuple(dict.fromkeys(str(w.resolve()) for w in workspaces)),
        write=write,
        created=datetime.now(UTC).replace(microsecond=0).isoformat(),
        scopes=tuple(dict.fromkeys(scopes or [])),
        sessions=sessions,
    )
    with _locked(path):
        tokens = _read(path)
        if any(t.name == name for t in tokens):
            raise UsageError(
                f"a token named {name!r} exists already",
                hint="choose another name, or revoke that one first",
            )
        _write(path, [*tokens, token])
    return token, secret


def revoke(which: str, *, path: Path | None = None) -> Token:
    """Remove the token whose id or name is ``which``."""
    path = path or store_path()
    with _locked(path):
        tokens = _read(path)
        gone = [t for t in tokens if which in (t.id, t.name)]
        if not gone:
            raise UsageError(f"no token {which!r}", hint="`clawmem token list` shows them")
        _write(path, [t for t in tokens if t not in gone])
    return gone[0]


class Verifier:
    """Checks a presented secret against the store, re-reading it when it changes on disk."""

    def __init__(self, workspace: Path, path: Path | None = None) -> None:
        self.workspace = workspace.resolve()
        self.path = path or store_path()
        self._seen: tuple[int, int, int] | None = None
        self._tokens: list[Token] = []

    def _current(self) -> list[Token]:
        try:
            st = self.path.stat()
            # The store is replaced whole (write_atomic): a new inode says it changed even
            # within the file system's time resolution.
            key: tuple[int, int, int] | None = (st.st_ino, st.st_mtime_ns, st.st_size)
        except FileNotFoundError:
            key = None
        if key != self._seen:
            self._tokens = _read(self.path) if key is not None else []
            self._seen = key
        return self._tokens

    def any_for_workspace(self) -> bool:
        return any(t.opens(self.workspace) for t in self._current())

    def verify(self, secret: str) -> Token | None:
        """The token ``secret`` is, if it exists and opens this workspace; else None."""
        digest = _digest(secret)
        found = None
        for t in self._current():
            if hmac.compare_digest(t.sha256, digest):
                found = t
        if found is None or not found.opens(self.workspace):
            return None
        return found
