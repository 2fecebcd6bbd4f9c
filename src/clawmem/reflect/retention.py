"""Episodes age out, on request: ``[sessions] retention_days`` (off by default).

Seed 004 gives episodic summaries a lifespan: a conversation's episode page is useful for a
while, then it is clutter in recall. With ``retention_days = 90``, reflect archives (or, with
``retention = "prune"``, deletes) every episode page whose conversation began more than 90 days
ago, and does not write one again for such a conversation. Only pages clawmem wrote and nobody
edited are touched: a page whose generated section is missing, edited by hand, switched off, or
that holds text of a person's outside it is kept, and named. Archived pages go to
``.clawmem/archive/episodes/`` (kept in git, never indexed: hidden folders are not memory).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

from clawmem.config import Config
from clawmem.errors import WorkspaceError
from clawmem.markdown.markers import MarkerError, body_hash, find_section, is_off
from clawmem.markdown.workspace import writable_path
from clawmem.reflect.episodes import EPISODE_DIR
from clawmem.text.records import as_json

ARCHIVE = ".clawmem/archive/episodes"
MODES = ("archive", "prune")
_DAY = re.compile(r"^(\d{4}-\d{2}-\d{2})-")


@dataclass
class Retention:
    """What retention did to the episode pages (or, in a dry run, would do)."""

    archived: list[str] = field(default_factory=list)
    pruned: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # "path: why" for an old page not touched

    def to_dict(self) -> dict[str, object]:
        return as_json(self)


def cutoff(cfg: Config, today: date) -> date | None:
    """The first day an episode may begin on and stay; None when retention is off."""
    days = cfg.session_retention_days
    return today - timedelta(days=days) if days > 0 else None


def generated_only(text: str) -> str | None:
    """Why a page is not clawmem's alone to remove (None when it is)."""
    if is_off(text):
        return "reflect is switched off on it"
    try:
        section = find_section(text)
    except MarkerError as exc:
        return f"broken markers ({exc})"
    if section is None:
        return "no generated section"
    if section.stored_hash is None or body_hash(section.body) != section.stored_hash:
        return "its generated section was edited by hand"
    outside = [ln for ln in (section.before + section.after).splitlines() if ln.strip()]
    if len(outside) > 1 or (outside and not outside[0].startswith("# ")):
        return "it holds text written outside the generated section"
    return None


def apply_retention(root: Path, cfg: Config, today: date, *, dry_run: bool = False) -> Retention:
    """Archive or prune the expired episode pages (see the module docstring)."""
    out = Retention()
    first = cutoff(cfg, today)
    folder = root / EPISODE_DIR
    if first is None or not folder.is_dir() or folder.is_symlink():
        return out
    for page in sorted(folder.glob("*.md")):
        m = _DAY.match(page.name)
        if page.is_symlink() or m is None:
            continue
        rel = page.relative_to(root).as_posix()
        try:
            began = date.fromisoformat(m.group(1))
        except ValueError:  # "2025-13-45-…": a person's page, not one clawmem named
            out.kept.append(f"{rel}: its name starts with no real date")
            continue
        if began >= first:
            continue
        try:
            why = generated_only(page.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            why = f"cannot read ({exc})"
        if why is not None:
            out.kept.append(f"{rel}: {why}")
            continue
        if cfg.session_retention == "prune":
            out.pruned.append(rel)
            if not dry_run:
                os.unlink(page)
            continue
        out.archived.append(rel)
        if not dry_run:
            # Every folder on the way checked, not only the first and last: a committed link
            # .clawmem/archive -> elsewhere moved the pages out of the workspace.
            try:
                target = writable_path(root, f"{ARCHIVE}/{page.name}")
            except WorkspaceError as exc:
                out.archived.pop()
                out.kept.append(f"{rel}: not archived: {exc.message}")
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(page, target)
    return out
