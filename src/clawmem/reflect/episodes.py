"""Episodes: each finished conversation summarised as a Markdown page, and what recurs across
episodes proposed for ``MEMORY.md``.

A session is *finished* when its last message is older than ``session_idle_minutes``. Its page,
``memory/episodes/YYYY-MM-DD-<session>.md``, is a pure function of the transcript (extractive:
no model needed), so reflect writing it again changes nothing; a session that is resumed later
simply gets its page updated. ``clawmem flush`` (flush.py) writes the same page for a session
still going, when an agent's hook asks. The page holds, each citing the transcript lines:

- a one-sentence abstract (about 200 characters): the sentence that best covers the words the
  conversation keeps coming back to;
- key topics: names and identifiers said most often (``payments-service``, ``Kenji``);
- the decisions, preferences and facts stated by the user, as *proposed* Retain bullets
  (under "Proposed Retain", which the Retain grammar does not read: a person keeps one by moving
  it into a ``## Retain`` section), each citing the transcript line it was said on.

Consolidation ("dreaming"): once five or more episodes are new since the last consolidation,
statements that recur in two or more episodes become proposals for ``MEMORY.md`` (listed in
``bank/proposals.md``; applied only with ``clawmem reflect --apply``). docs/sessions.md has the
page format.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from functools import lru_cache
from pathlib import Path

from clawmem.config import Config
from clawmem.errors import ClawmemError
from clawmem.markdown.facts import format_fact, make_fact
from clawmem.markdown.forgotten import load as forgotten_lines
from clawmem.reflect.candidates import JaccardIndex, word_rank
from clawmem.text.topics import jaccard, topic_words
from clawmem.transcripts import formats as transcripts
from clawmem.transcripts import sessions
from clawmem.transcripts.formats import Message

EPISODE_DIR = "memory/episodes"
ABSTRACT_CHARS = 200
MAX_TOPICS = 6
MAX_STATEMENTS = 12
CONSOLIDATE_AFTER = 5  # new episodes needed before reflect looks for what recurs across them
RECUR_JACCARD = 0.5  # two statements this close (topic words) say the same thing
RECUR_MIN_EPISODES = 2

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[A-Z0-9])|\n+")
_PREFERENCE = re.compile(
    r"\b(?:I|we)(?: would|'d)? (?:prefer|like|love|hate|dislike|want|don't want|do not want)\b"
    r"|\bplease (?:always|never)\b|\bfrom now on\b|\bI'd rather\b",
    re.I,
)
_DECISION = re.compile(
    r"\b(?:we|I) (?:have )?(?:decided|agreed|chose|settled on|will go with|are going with)\b"
    r"|\blet's (?:go with|use|keep)\b|\bthe decision\b",
    re.I,
)
_FACT = re.compile(
    r"\b(?:remember|note that|before I forget|for the record|fyi|heads up)\b"
    r"|\bnow (?:lives|runs|is|uses)\b|\bmoved to\b|\bchanged to\b|\bno longer\b",
    re.I,
)
# Lead-ins that introduce a statement without being part of it.
_LEAD = re.compile(
    r"^(?:(?:and|also|so|ok|okay|good|great)[,.!]?\s+)*"
    r"(?:(?:please\s+)?(?:remember|note|before I forget|for the record|fyi|heads up)[:,]?\s+)?",
    re.I,
)
# Possessive quantifiers (*+, ++) where giving characters back could never make a match: the
# same matches, without backtracking through every lower-case word of a long conversation.
_TOPIC = re.compile(
    r"\b[A-Z]\w*+(?:[-.]\w+)*(?:\s+[A-Z]\w*+)*"  # Names and Proper Phrases
    r"|\b[a-z][a-z0-9]*+(?:[-_][a-z0-9]++)+\b"  # identifiers: payments-service, test_refund
)
_IDENTIFIER = re.compile(r"[-_.\d]")  # a topic written like an identifier counts double
_NOT_TOPICS = {"i", "i'll", "i'm", "i've", "ok", "okay", "yes", "no", "the", "a", "and", "but"}


@dataclass(frozen=True)
class Statement:
    kind: str  # "W" (a decision or a fact) or "O" (a preference)
    label: str  # "decision" | "preference" | "fact"
    text: str  # one line, redacted
    line: int
    entities: tuple[str, ...]

    def bullet(self, relpath: str) -> str:
        fact = make_fact(
            self.kind, f"{self.text} ({relpath}#L{self.line}-L{self.line})", self.entities
        )
        return format_fact(fact)


@dataclass(frozen=True)
class Episode:
    relpath: str  # the transcript, sessions/…
    session_id: str
    format: str
    messages: tuple[Message, ...]
    first_at: str
    last_at: str
    statements: tuple[Statement, ...]
    # A short hash of the transcript's name, in the page's name when the session id alone would
    # not tell it from another transcript's (``tagged``); "" for the usual one-file session.
    tag: str = ""

    @property
    def page(self) -> str:
        """Where its page goes: memory/episodes/YYYY-MM-DD-<session>.md (``-<tag>`` before the
        ``.md`` for a transcript that shares its session id with another, ``tagged``)."""
        safe = re.sub(r"[^A-Za-z0-9_-]+", "-", self.session_id).strip("-") or "session"
        tag = f"-{self.tag}" if self.tag else ""
        return f"{EPISODE_DIR}/{self.first_at[:10]}-{safe}{tag}.md"

    def tagged(self) -> Episode:
        """The same episode with a page of its own: two transcripts with one session id and
        start date (a copied or resumed session, one id in two projects' folders) shared one
        page, and the second flush replaced the first's."""
        import hashlib

        digest = hashlib.sha256(self.relpath.encode("utf-8", "surrogateescape")).hexdigest()
        return replace(self, tag=digest[:8])

    @property
    def name(self) -> str:
        return Path(self.page).stem

    @property
    def title(self) -> str:
        return f"Episode {self.first_at[:10]}: session {self.session_id[:8]}"

    @property
    def citation(self) -> str:
        return self.cite(self.messages[0].line, self.messages[-1].line)

    def cite(self, start: int, end: int) -> str:
        return f"{self.relpath}#L{start}-L{end}"


def episode_of(relpath: str, parsed: transcripts.Parsed, entity_names: list[str]) -> Episode | None:
    """The conversation of a transcript (read whole) as an episode; None when nothing dated
    was said in it yet, or it is in no format clawmem reads."""
    said = tuple(m for m in parsed.messages if m.at)
    if parsed.format is None or not said:
        return None
    episode = Episode(
        relpath,
        parsed.session_id or Path(relpath).stem,
        parsed.format,
        said,
        min(m.at for m in said if m.at),
        max(m.at for m in said if m.at),
        tuple(statements(said, entity_names)),
    )
    # A session's own file is named by its id: another file with that id (a copy, a fork) gets
    # a page of its own from the start.
    return episode if Path(relpath).stem == episode.session_id else episode.tagged()


_CITED = re.compile(r"\((sessions/\S+?\.jsonl)#L\d+")


def placed(root: Path, episode: Episode) -> Episode:
    """``episode``, or the same one ``tagged`` when its page already holds another
    transcript's episode (one session id in two folders: two files of the same name)."""
    if episode.tag:
        return episode
    from clawmem.files import safe_open
    from clawmem.markdown.workspace import writable_path

    try:
        raw = safe_open.read_bytes(writable_path(root, episode.page))
    except (OSError, ClawmemError):
        return episode  # the write that follows says what is wrong with it
    if raw is None:
        return episode
    cited = set(_CITED.findall(raw.decode("utf-8", "replace")))
    return episode.tagged() if cited and episode.relpath not in cited else episode


def finished(
    root: Path, cfg: Config, now: datetime, entity_names: list[str]
) -> tuple[list[Episode], list[str]]:
    """The finished sessions of the configured folders (and of the transcripts hooks named to
    ``clawmem flush``) as episodes, oldest first, and warnings."""
    files, skipped = sessions.scan(root, cfg)
    warnings = [f"{s.relpath}: {s.reason}" for s in skipped]
    cutoff = now - timedelta(minutes=cfg.session_idle_minutes)
    out = []
    for entry in files:
        path = sessions.locate(root, cfg, entry.relpath)
        if path is None:
            continue
        try:
            parsed = transcripts.parse(path.read_bytes(), forgotten=forgotten_lines(root))
        except OSError as exc:
            warnings.append(f"{entry.relpath}: cannot read ({exc.strerror})")
            continue
        said = tuple(m for m in parsed.messages if m.at)
        if parsed.format is None or not said:
            continue
        last = datetime.fromisoformat(said[-1].at.replace("Z", "+00:00"))  # type: ignore[union-attr]
        if last > cutoff:
            continue  # still going (or paused for less than the idle time)
        episode = episode_of(entry.relpath, parsed, entity_names)
        if episode is not None:
            out.append(placed(root, episode))
    out.sort(key=lambda e: (e.first_at, e.relpath))
    pages: set[str] = set()
    for i, ep in enumerate(out):  # two of this run's own on one page: the later one moves
        if ep.page in pages:
            out[i] = ep = ep.tagged()
        pages.add(ep.page)
    return out, warnings


# ---------------------------------------------------------------------------- one episode


@lru_cache(maxsize=4096)
def sentences(text: str) -> tuple[str, ...]:
    # Cached: the abstract, the topics and the statements each go through every message.
    return tuple(s.strip() for s in _SENTENCE.split(text) if s and s.strip())


def abstract(messages: tuple[Message, ...] | list[Message], limit: int = ABSTRACT_CHARS) -> str:
    """The sentence that best covers what the conversation keeps returning to (topic words
    weighted by how often the whole session uses them; the user's own sentences preferred, the
    earlier one on a tie), cut to about ``limit`` characters at a word."""
    return abstract_said(messages, limit)[0]


def abstract_said(
    messages: tuple[Message, ...] | list[Message], limit: int = ABSTRACT_CHARS
) -> tuple[str, int | None]:
    """``abstract``, and the transcript line it was said on (None: nothing was said)."""
    # Each sentence's topic words, once: a message's words are its sentences' words (the
    # sentences split the text only at whitespace), counted once per message.
    weighed = [(m, [(s, topic_words(s)) for s in sentences(m.text)]) for m in messages]
    counts: Counter[str] = Counter()
    for _, said in weighed:
        counts.update(frozenset().union(*(words for _, words in said)))
    best, best_score, line = "", -1.0, None
    for m, said in weighed:
        for s, words in said:
            if len(s) < 20 or len(words) < 3:
                continue
            score = sum(map(counts.__getitem__, words)) / math.sqrt(len(words))
            score *= 1.2 if m.role == "user" else 1.0
            if score > best_score:
                best, best_score, line = s, score, m.line
    if not best and messages:
        first = sentences(messages[0].text)
        best, line = (first[0], messages[0].line) if first else ("", None)
    best = " ".join(best.split())
    if len(best) <= limit:
        return best, line
    cut = best[:limit].rsplit(" ", 1)[0].rstrip(",;:")
    return cut + "…", line


def topics(messages: tuple[Message, ...] | list[Message], limit: int = MAX_TOPICS) -> list[str]:
    """Names and identifiers said most often (at least twice, or once when written like an
    identifier), most frequent first, then in order of appearance."""
    return topics_said(messages, limit)[0]


def topics_said(
    messages: tuple[Message, ...] | list[Message], limit: int = MAX_TOPICS
) -> tuple[list[str], tuple[int, int] | None]:
    """``topics``, and the first and last transcript lines they were said on."""
    # folded -> (count, first position, as written, first line, last line)
    seen: dict[str, tuple[int, int, str, int, int]] = {}
    pos = 0
    for m in messages:
        for s in sentences(m.text):
            for i, match in enumerate(_TOPIC.finditer(s)):
                word = match.group(0).strip(".")
                folded = word.casefold()
                if folded in _NOT_TOPICS or len(word) < 3:
                    continue
                identifier = bool(_IDENTIFIER.search(word))
                if i == 0 and match.start() == 0 and not identifier and " " not in word:
                    # A capitalised first word of a sentence is no name unless it recurs.
                    if folded not in seen:
                        seen[folded] = (0, pos, word, m.line, m.line)
                        pos += 1
                    continue
                count, first, written, since, _ = seen.get(folded, (0, pos, word, m.line, 0))
                seen[folded] = (count + (2 if identifier else 1), first, written, since, m.line)
                pos += 1
    ranked = sorted((v for v in seen.values() if v[0] >= 2), key=lambda v: (-v[0], v[1]))[:limit]
    if not ranked:
        return [], None
    return [v[2] for v in ranked], (min(v[3] for v in ranked), max(v[4] for v in ranked))


def statements(messages: Iterable[Message], entity_names: list[str]) -> list[Statement]:
    """Decisions, preferences and facts the user stated, one line each, in order."""
    out: list[Statement] = []
    for m in messages:
        if m.role != "user":
            continue
        for s in sentences(m.text):
            if _PREFERENCE.search(s):
                kind, label = "O", "preference"
            elif _DECISION.search(s):
                kind, label = "W", "decision"
            elif _FACT.search(s):
                kind, label = "W", "fact"
            else:
                continue
            text = _LEAD.sub("", " ".join(s.split())).strip()
            if len(text) < 12:
                continue
            text = text[0].upper() + text[1:]
            if len(text) > 300:
                text = text[:300].rsplit(" ", 1)[0] + "…"
            out.append(Statement(kind, label, text, m.line, _mentions(text, entity_names)))
    return out[:MAX_STATEMENTS]


def _mentions(text: str, names: list[str]) -> tuple[str, ...]:
    return tuple(name for name, pattern in _name_patterns(tuple(names)) if pattern.search(text))


@lru_cache(maxsize=4)
def _name_patterns(names: tuple[str, ...]) -> tuple[tuple[str, re.Pattern[str]], ...]:
    """Each entity name's pattern, compiled once per list of names: compiled at each search, a
    workspace of more names than re's cache holds (512) recompiled every one for every
    statement (26 µs a name: 2,000 entities and 1,000 conversations were 10 minutes)."""
    out = []
    for name in names:
        pattern = re.escape(name).replace(r"\-", r"[-\s]")
        out.append((name, re.compile(rf"(?<![\w-]){pattern}(?![\w-])", re.I)))
    return tuple(out)


def episode_body(e: Episode) -> list[str]:
    """The generated section of an episode page."""
    users = sum(1 for m in e.messages if m.role == "user")
    start, end = e.first_at.replace("T", " ")[:16], e.last_at.replace("T", " ")[:16]
    if start[:10] == end[:10]:
        end = end[11:]
    said, line = abstract_said(e.messages)
    lines = [
        f"- Session: `{e.session_id}` ({e.format}), {start}–{end} UTC, "
        f"{len(e.messages)} messages ({users} from the user)",
        f"- Transcript: {e.citation}",
        "",
        f"**Abstract:** {said}" + (f" ({e.cite(line, line)})" if line is not None else ""),
        "",
    ]
    found, where = topics_said(e.messages)
    topic_line = f"**Topics:** {', '.join(found)} ({e.cite(*where)})" if where else None
    lines += [topic_line or "**Topics:** (none stood out)", ""]
    lines += [
        "### Proposed Retain",
        "",
        "Decisions (W), preferences (O) and facts (W) stated in this session. Nothing here is a "
        "fact yet: move a bullet into a `## Retain` section to keep it.",
        "",
    ]
    if not e.statements:
        lines.append("None stated.")
    for st in e.statements:
        lines.append(st.bullet(e.relpath))
    return lines


# ---------------------------------------------------------------------------- consolidation

CONSOLIDATED = re.compile(r"^<!-- clawmem:episodes-consolidated (?P<names>[^>]*) -->$", re.M)


def consolidated_names(proposals_body: str | None) -> list[str]:
    """Episodes already consolidated, as recorded in bank/proposals.md's generated section."""
    m = CONSOLIDATED.search(proposals_body or "")
    return m.group("names").split() if m else []


def consolidation_marker(names: list[str]) -> str:
    return f"<!-- clawmem:episodes-consolidated {' '.join(names)} -->"


@dataclass(frozen=True)
class SaidIn:
    """One statement of one episode, citable like a fact (``cite``)."""

    statement: Statement
    episode: Episode

    @property
    def cite(self) -> str:
        line = self.statement.line
        return f"{self.episode.relpath}#L{line}-L{line}"


@dataclass(frozen=True)
class Recurring:
    text: str
    sources: tuple[SaidIn, ...]  # newest first
    why: str

    @property
    def line(self) -> str:
        return f"- {self.text} ({', '.join(s.cite for s in self.sources)})"


def recurring(episodes: list[Episode]) -> list[Recurring]:
    """Statements made in two or more of ``episodes`` (close in topic words, same kind). Each
    statement joins the first group whose first statement fits; it is compared only with the
    groups it could join (candidates.py): comparing it with every group was quadratic in the
    statements (2,000 conversations a clone committed: 24,000 statements)."""
    groups: list[list[SaidIn]] = []
    said = [(SaidIn(st, e), topic_words(st.text)) for e in episodes for st in e.statements]
    close = JaccardIndex(RECUR_JACCARD, word_rank(words for _, words in said))
    for item, words in said:
        kind = item.statement.kind
        for k in sorted(close.query(kind, words)):  # the first that fits, as a scan finds
            head = groups[k][0].statement
            if head.kind == kind and jaccard(topic_words(head.text), words) >= RECUR_JACCARD:
                groups[k].append(item)
                break
        else:
            close.add(kind, words, len(groups))
            groups.append([item])
    out = []
    for g in groups:
        names = {s.episode.name for s in g}
        if len(names) < RECUR_MIN_EPISODES:
            continue
        newest = sorted(g, key=lambda s: (s.episode.first_at, s.statement.line), reverse=True)
        out.append(
            Recurring(
                newest[0].statement.text,
                tuple(newest),
                f"{newest[0].statement.label} stated in {len(names)} sessions",
            )
        )
    return out


def consolidate(episodes: list[Episode], already: list[str]) -> tuple[list[str], list[Recurring]]:
    """(episodes consolidated after this run, what recurs across them). New episodes join only
    when at least ``CONSOLIDATE_AFTER`` of them are waiting."""
    # Sets for the lookups: lists made them quadratic in the episodes.
    names = [e.name for e in episodes]
    before, present = set(already), set(names)
    new = [n for n in names if n not in before]
    done = [n for n in already if n in present]
    if len(new) >= CONSOLIDATE_AFTER:
        joined = set(done) | set(new)
        done = [n for n in names if n in joined]
    chosen_names = set(done)
    chosen = [e for e in episodes if e.name in chosen_names]
    return done, recurring(chosen)
