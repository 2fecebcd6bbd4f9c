"""Links into a read scope: ``[[team:Peter]]`` in this workspace, ``team`` named in ``[scopes]``
(clawmem.toml), points at a note of that workspace. The index keeps such a link unresolved (the
scope's notes change without this index knowing); ``check`` and ``links`` resolve it when they
read it, against the scope's files, listed once per call and never written.
"""

from __future__ import annotations

from pathlib import Path

from clawmem.config import Config, load_config, parse_scopes
from clawmem.ingest.indexing import Indexer
from clawmem.markdown.links import Resolution, Resolver


class ScopeLinks:
    def __init__(self, root: Path, cfg: Config) -> None:
        self.root, self.cfg = root, cfg
        self.scopes: dict[str, Path] | None = None
        self.resolvers: dict[str, Resolver | None] = {}

    def resolve(self, syntax: str, target: str) -> Resolution | None:
        """Where a link into a scope points (its path prefixed ``NAME:``); None when the link
        names no scope."""
        if not self.cfg.read_scopes or ":" not in target or syntax == "mention":
            return None
        if self.scopes is None:
            self.scopes = parse_scopes(self.cfg, self.root)
        name, _, rest = target.partition(":")
        if name not in self.scopes:
            return None
        if name not in self.resolvers:
            root = self.scopes[name]
            files = Indexer(root, load_config(root)).scan().files if root.is_dir() else []
            self.resolvers[name] = Resolver(f.relpath for f in files) if files else None
        resolver = self.resolvers[name]
        if resolver is None:
            return Resolution(None, "unresolved")
        res = resolver.resolve_target(syntax, rest, "")
        if res.path is None:
            return res
        return Resolution(f"{name}:{res.path}", res.status, res.candidates)
