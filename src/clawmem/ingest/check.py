"""``clawmem check``: malformed facts and broken links in the workspace, read fresh from the
Markdown.

The index is not consulted: a person fixing a line wants to see it fixed at once, and the index
may be stale or absent. Links are resolved against the files on disk, as the index would.
"""

from __future__ import annotations

from pathlib import Path

from clawmem.config import load_config, parse_scopes
from clawmem.ingest.indexing import Indexer
from clawmem.markdown.factlog import decode
from clawmem.markdown.facts import extract_facts
from clawmem.markdown.links import Link, Resolution, Resolver, extract_links, problem_message


def check(ix: Indexer) -> list[dict]:
    """Every malformed fact line, broken or ambiguous link (and every file that is not UTF-8):
    path, line, text, message and problem ("fact", "link" or "encoding"), by path and line."""
    problems: list[dict] = []
    sc = ix.scan()
    # Links resolve against every indexed file, as in the index; only Markdown is checked.
    resolver = Resolver(f.relpath for f in sc.files)
    scoped = _ScopeResolver(ix)
    for entry in sc.markdown_files:
        try:
            text = decode((ix.root / entry.relpath).read_bytes())
        except UnicodeDecodeError as exc:
            problems.append(
                {
                    "path": entry.relpath,
                    "line": 0,
                    "text": "",
                    "message": f"invalid UTF-8 at byte {exc.start}; re-save the file as UTF-8",
                    "problem": "encoding",
                }
            )
            continue
        except OSError:
            continue
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        _, found = extract_facts(text)
        mine: list[dict] = [
            {
                "path": entry.relpath,
                "line": p.line,
                "text": p.text,
                "message": p.message,
                "problem": "fact",
            }
            for p in found
        ]
        lines = text.split("\n")
        # Only [[…]] and […](….md) can be broken (a mention without a page is not): most daily
        # logs have neither, and the pre-commit hook runs this over every file.
        maybe = "[[" in text or "](" in text
        for link in extract_links(text) if maybe else ():
            res = scoped.resolve(link) or resolver.resolve(link, entry.relpath)
            message = problem_message(link, res)
            if message is not None:
                mine.append(
                    {
                        "path": entry.relpath,
                        "line": link.line,
                        "text": lines[link.line - 1],
                        "message": message,
                        "problem": "link",
                    }
                )
        problems.extend(sorted(mine, key=lambda p: p["line"]))
    return problems


class _ScopeResolver:
    """Links into a read scope (``[[team:Peter]]``, ``team`` named in ``[scopes]``) resolve
    against that workspace's files, listed once, read-only."""

    def __init__(self, ix: Indexer) -> None:
        self.ix = ix
        self.scopes: dict[str, Path] | None = None
        self.resolvers: dict[str, Resolver | None] = {}

    def resolve(self, link: Link) -> Resolution | None:
        """The link's resolution in its scope; None when it names no scope."""
        if not self.ix.cfg.read_scopes or ":" not in link.target or link.syntax == "mention":
            return None
        if self.scopes is None:
            self.scopes = parse_scopes(self.ix.cfg, self.ix.root)
        name, _, rest = link.target.partition(":")
        if name not in self.scopes:
            return None
        if name not in self.resolvers:
            root = self.scopes[name]
            files = Indexer(root, load_config(root)).scan().files if root.is_dir() else []
            self.resolvers[name] = Resolver(f.relpath for f in files) if files else None
        resolver = self.resolvers[name]
        if resolver is None:
            return Resolution(None, "unresolved")
        return resolver.resolve_target(link.syntax, rest, "")


def summary(problems: list[dict]) -> str:
    """ "2 malformed fact(s) and 1 broken link(s) in the workspace"."""
    facts = sum(1 for p in problems if p.get("problem") != "link")
    links = len(problems) - facts
    parts = []
    if facts:
        parts.append(f"{facts} malformed fact(s)")
    if links:
        parts.append(f"{links} broken link(s)")
    return " and ".join(parts) + " in the workspace"
