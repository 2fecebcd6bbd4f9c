"""``clawmem check``: malformed facts and broken links in the workspace, read fresh from the
Markdown.

The index is not consulted: a person fixing a line wants to see it fixed at once, and the index
may be stale or absent. Links are resolved against the files on disk, as the index would.
"""

from __future__ import annotations

from dataclasses import dataclass

from clawmem.ingest.indexing import Indexer
from clawmem.ingest.scope_links import ScopeLinks
from clawmem.ingest.sync import not_utf8
from clawmem.markdown.factlog import decode
from clawmem.markdown.facts import extract_facts, stray_facts
from clawmem.markdown.links import Resolver, extract_links, problem_message
from clawmem.text.records import as_json
from clawmem.text.shown_path import shown_path
from clawmem.text.timeexpr import bad_date_in_name


@dataclass(frozen=True, slots=True)
class Problem:
    """One line ``check`` finds wrong."""

    path: str  # the workspace path of the file
    line: int  # 1-based (a file that is not UTF-8: the line of its first bad byte)
    text: str  # the line as written (redacted)
    message: str  # what is wrong and how to fix it
    problem: str  # "fact", "stray" (a fact line outside a Retain section), "link", "encoding",
    # "merged" (a generated section a git merge left as two clones' union), "date" (a daily
    # log's name that is no real day: 2025-13-45.md)

    def to_dict(self) -> dict:
        """``clawmem check --json``'s form of it."""
        # A file's name is shown redacted (text/shown_path.py).
        return as_json(self, path=shown_path(self.path))


def check(ix: Indexer) -> list[Problem]:
    """Every malformed fact line, broken or ambiguous link (and every file that is not UTF-8):
    path, line, text, message and problem ("fact", "stray", "link", "encoding" or "merged"), by
    path and line. "stray": a line written as a fact below a later heading, outside the Retain
    section; "merged": a generated section a git merge left as two clones' union."""
    problems: list[Problem] = []
    sc = ix.scan()
    # Links resolve against every indexed file, as in the index; only Markdown is checked.
    resolver = Resolver(f.relpath for f in sc.files)
    scoped = ScopeLinks(ix.root, ix.cfg)
    for entry in sc.markdown_files:
        try:
            raw = (ix.root / entry.relpath).read_bytes()
            text = decode(raw)
        except UnicodeDecodeError as exc:
            line, why = not_utf8(raw, exc)
            problems.append(
                Problem(
                    path=entry.relpath,
                    line=line,
                    text="",
                    message=f"not indexed, so recall cannot find anything in it: {why}",
                    problem="encoding",
                )
            )
            continue
        except OSError:
            continue
        from clawmem.text.redact import redact  # here: only a file that was read needs it

        # The lines it prints are redacted, like everything else clawmem shows (lines kept).
        text = redact(text.replace("\r\n", "\n").replace("\r", "\n"))
        _, found = extract_facts(text)
        mine: list[Problem] = [
            Problem(path=entry.relpath, line=p.line, text=p.text, message=p.message, problem="fact")
            for p in found
        ]
        mine += [
            Problem(
                path=entry.relpath, line=p.line, text=p.text, message=p.message, problem="stray"
            )
            for p in stray_facts(text)
        ]
        lines = text.split("\n")
        # Only [[…]] and […](….md) can be broken (a mention without a page is not): most daily
        # logs have neither, and the pre-commit hook runs this over every file.
        maybe = "[[" in text or "](" in text
        for link in extract_links(text) if maybe else ():
            res = scoped.resolve(link.syntax, link.target) or resolver.resolve(link, entry.relpath)
            message = problem_message(link, res)
            if message is not None:
                mine.append(
                    Problem(
                        path=entry.relpath,
                        line=link.line,
                        text=lines[link.line - 1],
                        message=message,
                        problem="link",
                    )
                )
        merged = _merged_section(entry.relpath, text)
        if merged is not None:
            mine.append(merged)
        bad_day = bad_date_in_name(entry.relpath)
        if bad_day is not None:
            mine.append(
                Problem(
                    path=entry.relpath,
                    line=1,
                    text=lines[0],
                    message=f"{bad_day}, so its facts have no date; rename the file YYYY-MM-DD.md",
                    problem="date",
                )
            )
        problems.extend(sorted(mine, key=lambda p: p.line))
    return problems


def _merged_section(relpath: str, text: str) -> Problem | None:
    """A generated section that a git merge left as two clones' union (markdown/merging.py):
    stale until rewritten (the hook after the merge does it where no model is needed)."""
    from clawmem.markdown.markers import MarkerError, find_section
    from clawmem.markdown.merging import MERGED_FLAG, is_merged

    if f" {MERGED_FLAG} (" not in text:
        return None
    try:
        section = find_section(text)
    except MarkerError:
        return None
    if section is None or not is_merged(section):
        return None
    return Problem(
        path=relpath,
        line=section.before.count("\n") + 1,
        text=section.begin.rstrip("\r\n"),
        message="generated section merged from two clones (both sides' lines, stale citations); "
        "run `clawmem reflect` to rewrite it",
        problem="merged",
    )


def summary(problems: list[Problem]) -> str:
    """ "2 malformed fact(s) and 1 broken link(s) in the workspace"."""
    words = {
        "fact": "malformed fact(s)",
        "stray": "fact line(s) outside a Retain section",
        "encoding": "file(s) not UTF-8",
        "link": "broken link(s)",
        "merged": "generated section(s) merged from two clones",
        "date": "file name(s) with no real date",
    }
    parts = []
    for problem, word in words.items():
        n = sum(1 for p in problems if p.problem == problem)
        if n:
            parts.append(f"{n} {word}")
    return (
        ", ".join(parts[:-1])
        + (" and " if len(parts) > 1 else "")
        + parts[-1]
        + " in the workspace"
    )
