"""The mixed workspaces (issue 45): real conversations spread over every kind of unit a person's
workspace holds, with questions whose answers sit on known lines.

Each workspace is built by code from data no one on this project wrote (``../shared/eval``):

* one REALTALK chat (its sessions in order up to ``MAX_MESSAGES`` messages), its sessions dealt
  in turn to the unit kinds below (session 1 to the first
  kind, session 2 to the second, ...), so every kind holds the gold messages of some questions:

  ==========  ==============================================================================
  log         a daily log's ``## Session N`` with one ``- Speaker: text`` bullet a message
  note        a narrative note in the daily log: ``## Evening talk with Other`` and paragraphs
              of three lines ``Speaker: text`` (no bullets)
  fact        a ``## Retain`` section: ``- W @Speaker: text`` (``O(c=0.7)`` for a message that
              states a liking or a view), which ``clawmem reflect`` copies onto the entity pages
              (``bank/entities/Speaker.md``) and into ``bank/opinions.md``
  task        a task list: ``- [ ] Speaker: text`` (every other one ``- [x]``)
  link        bullets whose speaker is a wikilink (``- [[Speaker]]: text``), and after every
              eighth a ``- reference [[bank/entities/Other.md]]`` line (a link and nothing else)
  transcript  a Claude Code JSONL transcript (one per stretch, the first speaker as the user),
              in a ``[sessions]`` folder outside the workspace; ``clawmem reflect`` writes its
              episode page (``memory/episodes/…``)
  scope       a daily log of the *read scope* (``[scopes] team = "../team-NN"``), a second
              workspace searched with this one and cited ``team:memory/…``
  ==========  ==============================================================================

* two MemoryBank users' companion chats as narrative notes with dated headings
  (``memory/notes/<User>.md``), and a third user's in the read scope: notes about other people
  that hold none of the answers (distractors).

Gold lines: a question's evidence messages where they were placed; a fact's copies on the
entity and opinion pages, a transcript line's quotes on its episode page and a fact proposed
from a line (``memory/proposals/``, its note citing the line) count as alternatives (the same
statement, cited to its source). MemoryBank's probing questions have no gold lines, so
they are not used.

Questions, per workspace (``kind``):

* ``answerable``: the chat's own REALTALK questions that have evidence (``category`` 1-3 kept;
  3 needs inference), labelled by the unit kind their first evidence message was placed in;
* ``unanswerable``: the other workspace of the same part's own questions, as written (other
  people, other events);
* ``near_miss``: the questions of a chat that is in neither workspace of the part, its people's
  names replaced by this workspace's (the names its questions use, most frequent first), so
  they name the memory's own people and ask about events that are not there.

Tuning part: chats 1 and 3 (REALTALK's tuning split), near misses from chats 2 and 4. Held-out
part: chats 7 and 8, near misses from chats 6 and 9. Nothing here is written into the
repository: workspaces are built under ``bench-results/work/mixed/``.
"""

from __future__ import annotations

import json
import re
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from benchmarks.common import EVAL, WORK
from benchmarks.datasets.workspaces import write_files

REALTALK = EVAL / "realtalk"
MEMORYBANK = EVAL / "memorybank" / "memory_bank_en.json"
KINDS = ("log", "note", "fact", "task", "link", "transcript", "scope")
TUNE = (1, 3)
HELD_OUT = (7, 8)
NEAR_MISS_FROM = {1: 2, 3: 4, 7: 6, 8: 9}
# MemoryBank users (sorted by name) for each workspace: two local, the third in its scope.
MEMORYBANK_USERS = {1: (0, 1, 2), 3: (3, 4, 5), 7: (6, 7, 8), 8: (9, 10, 11)}
SCOPE = "team"
# A workspace holds at most this many of its chat's messages (the tuning chats hold 420-480, the
# held-out ones 1,040-1,160), in stretches of at most SEGMENT messages of one session: those that
# hold whole questions' evidence, cheapest first (``chosen_segments``). Workspaces of one size in
# both parts, every unit kind in each, and a quick run that embeds about 2,000 units, not ten
# thousand. A question none of whose evidence is held is not asked.
MAX_MESSAGES = 400
SEGMENT = 20
PROJECT = "-home-me-chats"  # the Claude Code project folder the transcripts are in
# A message that states a liking or a view becomes an opinion (O) fact.
OPINION = re.compile(
    r"\b(i (really )?(love|like|prefer|hate|think|believe|enjoy)|favou?rite|my opinion)\b", re.I
)


@dataclass
class Placed:
    """Where a message went: its citation path (``team:`` for the scope) and line."""

    path: str
    line: int
    kind: str


@dataclass
class MixedWorkspace:
    chat: int
    split: str
    root: Path
    scope_root: Path
    transcripts: Path
    files: dict[str, str]  # the workspace's Markdown (before reflect)
    scope_files: dict[str, str]
    transcript_files: dict[str, str]  # relative to ``transcripts``
    transcript_text: dict[tuple[str, int], str]  # (citation path, line) -> what was said
    placed: dict[str, Placed]  # dia_id -> where
    names: list[str]  # the names its questions use, most frequent first
    today: date
    now: datetime
    questions: list[dict] = field(default_factory=list)


def _chat_path(number: int) -> Path:
    found = sorted(REALTALK.glob(f"Chat_{number}_*.json"))
    if not found:
        raise FileNotFoundError(f"{REALTALK}: no Chat_{number}_*.json (set CLAWMEM_BENCH_EVAL)")
    return found[0]


def load_chat(number: int) -> dict:
    return json.loads(_chat_path(number).read_text(encoding="utf-8"))


def _when(stamp: str) -> datetime:
    return datetime.strptime(stamp.strip(), "%d.%m.%Y, %H:%M:%S")


def sessions_of(data: dict) -> list[tuple[int, list[dict]]]:
    return sorted(
        (int(k.split("_")[1]), v)
        for k, v in data.items()
        if re.fullmatch(r"session_\d+", k) and isinstance(v, list) and v
    )


def message_text(m: dict) -> str:
    text = " ".join(m["clean_text"].split())
    if m.get("blip_caption"):
        text = f"{text} [photo: {' '.join(m['blip_caption'].split())}]".strip()
    return text


def entity(speaker: str) -> str:
    """The entity slug of a speaker label: its first word, capitalised ("elise" -> "Elise")."""
    word = re.sub(r"[^\w-]", "", speaker.split()[0]) or "Someone"
    return word[:1].upper() + word[1:]


_NOT_NAMES = {
    "What", "When", "Where", "Who", "Why", "How", "Which", "Does", "Did", "Do", "Is", "Was",
    "Are", "Were", "Has", "Have", "Had", "Can", "Could", "Would", "Will", "Should", "In", "On",
    "At", "The", "A", "An", "If", "For", "From", "Since", "After", "Before", "During", "And", "Or",
    "I", "Of", "To", "By", "With", "According", "Based",
}  # fmt: skip
_MONTHS = {
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday",
    "Saturday", "Sunday", "Christmas", "New", "Year", "Eve",
}  # fmt: skip


def question_names(data: dict, top: int = 2) -> list[str]:
    """The names a chat's questions use for its two people (persona names may differ from the
    speaker labels: questions about "Kate" where the speaker is "Emi"), most frequent first."""
    counts: Counter[str] = Counter()
    for q in data["qa"]:
        for w in re.findall(r"\b[A-Z][a-z]+(?:'s)?\b", q["question"]):
            w = w.removesuffix("'s")
            if w not in _NOT_NAMES and w not in _MONTHS:
                counts[w] += 1
    return [w for w, _ in counts.most_common(top)]


def name_mapping(theirs: list[str], mine: list[str]) -> dict[str, str]:
    """Which of this chat's names replaces each of the other chat's. A person in both chats
    (REALTALK pairs share people: Akib talks with Muhhamed and with Fahim) is never asked about
    under their own name, whose life this memory may well hold: their name goes to the other
    person of this chat, and the other chat's second person takes theirs."""
    shared = [n for n in theirs if n in mine]
    if len(theirs) == 2 and len(mine) == 2 and len(shared) == 1:
        (s,) = shared
        return {s: next(n for n in mine if n != s), next(n for n in theirs if n != s): s}
    return {k: v for k, v in zip(theirs, mine, strict=False) if k != v}


def swap_names(text: str, mapping: dict[str, str]) -> str:
    if not mapping:
        return text
    pat = re.compile(r"\b(" + "|".join(map(re.escape, mapping)) + r")\b")
    return pat.sub(lambda m: mapping[m.group(1)], text)


def _iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _transcript(session: uuid.UUID, msgs: list[dict], first: str) -> tuple[str, list[str]]:
    """One stretch of a conversation as a Claude Code transcript: the JSONL text and what each
    line says."""
    sid = str(session)
    lines, said = [], []
    parent = None
    for i, m in enumerate(msgs, 1):
        text = f"{m['speaker']}: {message_text(m)}"
        user = m["speaker"] == first
        uid = f"{sid[:8]}-0000-4000-8000-{i:012d}"
        entry: dict = {
            "parentUuid": parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": "/home/me/chats",
            "sessionId": sid,
            "version": "2.0.14",
            "type": "user" if user else "assistant",
            "message": {"role": "user", "content": text}
            if user
            else {"role": "assistant", "content": [{"type": "text", "text": text}]},
            "uuid": uid,
            "timestamp": _iso(_when(m["date_time"])),
        }
        lines.append(json.dumps(entry, ensure_ascii=False))
        said.append(text)
        parent = uid
    return "\n".join(lines) + "\n", said


def _memorybank_notes(users: list[tuple[str, dict]]) -> dict[str, str]:
    """Each user's companion chats as one narrative note: a heading a day, a paragraph an
    exchange."""
    files = {}
    for name, entry in users:
        lines = [f"# Chats with {name}", "", f"What {name} told the companion app, day by day.", ""]
        for day, exchanges in sorted(entry["history"].items()):
            lines += [f"## {day}", ""]
            for ex in exchanges:
                lines.append(f"{name}: {' '.join(ex['query'].split())}")
                lines.append(f"Companion: {' '.join(ex['response'].split())}")
                lines.append("")
        slug = "-".join(name.split())
        files[f"memory/notes/{slug}.md"] = "\n".join(lines).rstrip("\n") + "\n"
    return files


def chosen_segments(data: dict) -> list[tuple[int, list[dict]]]:
    """The stretches of the chat the workspace holds, in time order: its sessions cut into runs of
    at most ``SEGMENT`` messages, those that hold the evidence of the most questions first (the
    questions needing the fewest messages first), up to ``MAX_MESSAGES`` messages."""
    segments = [
        (n, msgs[i : i + SEGMENT])
        for n, msgs in sessions_of(data)
        for i in range(0, len(msgs), SEGMENT)
    ]
    where = {m["dia_id"]: j for j, (_, part) in enumerate(segments) for m in part}
    needs = []
    for q in data["qa"]:
        segs = sorted({where[e] for e in q.get("evidence") or [] if e in where})
        if segs:
            needs.append(segs)
    needs.sort(key=lambda segs: (sum(len(segments[j][1]) for j in segs), segs))
    chosen: set[int] = set()
    used = 0
    for segs in needs:
        extra = [j for j in segs if j not in chosen]
        cost = sum(len(segments[j][1]) for j in extra)
        if used + cost <= MAX_MESSAGES:
            chosen.update(extra)
            used += cost
    return [segments[j] for j in sorted(chosen)]


def build_layout(number: int, base: Path | None = None) -> MixedWorkspace:  # noqa: C901 - a layout is built in one pass, one branch per kind of file it places
    """The workspace of chat ``number`` as files (nothing written yet)."""
    base = base or WORK / "work" / "mixed"
    data = load_chat(number)
    speakers = [data["name"]["speaker_1"], data["name"]["speaker_2"]]
    first = speakers[0]
    other = {speakers[0]: entity(speakers[1]), speakers[1]: entity(speakers[0])}
    days: dict[str, list[str]] = {}  # daily log -> its lines (the workspace)
    scope_days: dict[str, list[str]] = {}
    transcripts: dict[str, str] = {}
    said: dict[tuple[str, int], str] = {}
    placed: dict[str, Placed] = {}

    def day_lines(book: dict[str, list[str]], day: str) -> list[str]:
        if day not in book:
            book[day] = [f"# {day}"]
        return book[day]

    sessions = chosen_segments(data)
    last = datetime.min
    for i, (n, msgs) in enumerate(sessions):
        kind = KINDS[i % len(KINDS)]
        last = max(last, *(_when(m["date_time"]) for m in msgs))
        if kind == "transcript":
            sid = uuid.uuid5(
                uuid.NAMESPACE_URL, f"clawmem-bench-mixed/{number}/{msgs[0]['dia_id']}"
            )
            rel = f"{PROJECT}/{sid}.jsonl"
            text, lines = _transcript(sid, msgs, first)
            transcripts[rel] = text
            for j, m in enumerate(msgs, 1):
                placed[m["dia_id"]] = Placed(f"sessions/{rel}", j, kind)
                said[(f"sessions/{rel}", j)] = lines[j - 1]
            continue
        by_day: dict[str, list[dict]] = {}
        for m in msgs:
            by_day.setdefault(_when(m["date_time"]).date().isoformat(), []).append(m)
        for day, part in by_day.items():
            book = scope_days if kind == "scope" else days
            lines = day_lines(book, day)
            prefix = f"{SCOPE}:" if kind == "scope" else ""
            path = f"{prefix}memory/{day}.md"
            lines.append("")
            if kind in ("log", "scope"):
                lines += [f"## Session {n}", ""]
                for m in part:
                    lines.append(f"- {m['speaker']}: {message_text(m)}")
                    placed[m["dia_id"]] = Placed(path, len(lines), kind)
            elif kind == "note":
                lines += [f"## Evening talk with {other[first]}", ""]
                for j, m in enumerate(part):
                    if j and j % 3 == 0:
                        lines.append("")
                    lines.append(f"{m['speaker']}: {message_text(m)}")
                    placed[m["dia_id"]] = Placed(path, len(lines), kind)
            elif kind == "fact":
                lines += ["## Retain", ""]
                for m in part:
                    text = message_text(m)
                    if not text:
                        continue
                    o = OPINION.search(text)
                    head = "O(c=0.7)" if o else "W"
                    lines.append(f"- {head} @{entity(m['speaker'])}: {text}")
                    placed[m["dia_id"]] = Placed(path, len(lines), "opinion" if o else "fact")
            elif kind == "task":
                lines += [f"## Tasks from session {n}", ""]
                for j, m in enumerate(part):
                    box = "[x]" if j % 2 else "[ ]"
                    lines.append(f"- {box} {m['speaker']}: {message_text(m)}")
                    placed[m["dia_id"]] = Placed(path, len(lines), kind)
            elif kind == "link":
                lines += [f"## Session {n}", ""]
                for j, m in enumerate(part, 1):
                    lines.append(f"- [[{entity(m['speaker'])}]]: {message_text(m)}")
                    placed[m["dia_id"]] = Placed(path, len(lines), kind)
                    if j % 8 == 0:
                        lines.append(f"- reference [[bank/entities/{other[m['speaker']]}.md]]")
    users = sorted(json.loads(MEMORYBANK.read_text(encoding="utf-8")).items())
    pick = MEMORYBANK_USERS[number]

    def mb(i: int) -> tuple[str, dict]:
        raw, e = users[i]
        return ((e.get("name") or raw).strip(), e)

    a, b = (entity(s) for s in speakers)
    files = {
        "MEMORY.md": "# Memory\n\n"
        f"- I keep my chats with [[{a}]] and [[{b}]] here, and notes from the companion app.\n"
        "- Daily logs are in memory/, one a day.\n",
        **{f"memory/{d}.md": "\n".join(ls) + "\n" for d, ls in days.items()},
        **_memorybank_notes([mb(pick[0]), mb(pick[1])]),
    }
    scope_files = {
        "MEMORY.md": "# Team memory\n\n- Shared notes of the team.\n",
        **{f"memory/{d}.md": "\n".join(ls) + "\n" for d, ls in scope_days.items()},
        **_memorybank_notes([mb(pick[2])]),
    }
    today = last.date() + timedelta(days=1)
    return MixedWorkspace(
        chat=number,
        split="tune" if number in TUNE else "held_out",
        root=base / f"ws-{number:02d}",
        scope_root=base / f"team-{number:02d}",
        transcripts=base / f"transcripts-{number:02d}",
        files=files,
        scope_files=scope_files,
        transcript_files=transcripts,
        transcript_text=said,
        placed=placed,
        names=question_names(data),
        today=today,
        now=datetime.combine(today, datetime.min.time(), tzinfo=UTC) + timedelta(hours=12),
    )


# Files clawmem reflect owns: left in place when the workspace is written again.
REFLECTED = ("bank/", "memory/episodes/")


def write(ws: MixedWorkspace) -> None:
    """Write (or refresh: unchanged files are not touched, so the index keeps its vectors) the
    workspace, its scope and its transcripts."""
    config = (
        "[sessions]\n"
        f'paths = ["{ws.transcripts.as_posix()}"]\n'
        "\n[scopes]\n"
        f'{SCOPE} = "../{ws.scope_root.name}"\n'
    )
    for root, files, keep in (
        (ws.root, {**ws.files, "clawmem.toml": config}, REFLECTED),
        (ws.scope_root, ws.scope_files, ()),
        (ws.transcripts, ws.transcript_files, ()),
    ):
        root.mkdir(parents=True, exist_ok=True)
        for p in list(root.rglob("*")):
            rel = p.relative_to(root).as_posix()
            if not p.is_file() or rel.startswith(".") or "/." in rel:
                continue
            if rel not in files and not rel.startswith(keep):
                p.unlink()
        write_files(root, files)


# --------------------------------------------------------------------------- gold and questions
def _proposed(ws: MixedWorkspace, p: Placed) -> list[dict]:
    """Lines of reflect's fact proposals (``memory/proposals/``) proposed from ``p``'s line: the
    proposed statement and its note ``- proposal ID, confidence C, from PATH#Lx-Ly``, one hit
    that carries the source's citation (recall's ``proposal.cites``)."""
    pat = re.compile(r"from " + re.escape(p.path) + rf"#L{p.line}(?:-L{p.line})?(?![\d-])")
    folder = ws.root / "memory" / "proposals"
    out = []
    for f in sorted(folder.glob("*.md")) if folder.is_dir() else []:
        rel = f.relative_to(ws.root).as_posix()
        for n, line in enumerate(f.read_text(encoding="utf-8").split("\n"), 1):
            if pat.search(line):
                out.append({"path": rel, "start": max(1, n - 1), "end": n})
    return out


def _copies(ws: MixedWorkspace, p: Placed) -> list[dict]:
    """Lines of reflect's pages that cite ``p``'s line (an entity page's copy of a fact, an
    episode's quote of a transcript line, a proposal made from it): alternatives to it."""
    if p.path.startswith(SCOPE + ":"):
        return []
    proposed = _proposed(ws, p)
    return proposed + _page_copies(ws, p)


def _page_copies(ws: MixedWorkspace, p: Placed) -> list[dict]:
    if p.kind in ("fact", "opinion"):
        pat = re.compile(re.escape(p.path) + rf"#L{p.line}(?![\d-])")
        folders = [ws.root / "bank"]
    elif p.kind == "transcript":
        pat = re.compile(re.escape(p.path) + rf"#L{p.line}-L{p.line}(?!\d)")
        folders = [ws.root / "memory" / "episodes"]
    else:
        return []
    out = []
    for folder in folders:
        for f in sorted(folder.rglob("*.md")) if folder.is_dir() else []:
            rel = f.relative_to(ws.root).as_posix()
            for n, line in enumerate(f.read_text(encoding="utf-8").split("\n"), 1):
                if pat.search(line):
                    out.append({"path": rel, "start": n, "end": n})
    return out


def gold_of(ws: MixedWorkspace, evidence: list[str]) -> list[list[dict]]:
    gold = []
    for e in evidence:
        p = ws.placed.get(e)
        if p is None:
            continue
        gold.append([{"path": p.path, "start": p.line, "end": p.line}, *_copies(ws, p)])
    return gold


def questions_for(ws: MixedWorkspace, other: MixedWorkspace) -> list[dict]:
    """The workspace's questions (after reflect wrote its pages: their lines are alternatives).
    ``other``: the other workspace of the same part (its questions are the unanswerable ones)."""
    out: list[dict] = []
    data = load_chat(ws.chat)
    for i, q in enumerate(data["qa"]):
        ev = [e for e in q.get("evidence") or [] if e in ws.placed]
        if not ev:
            continue
        out.append(
            {
                "id": f"{ws.chat}-own-{i}",
                "kind": "answerable",
                "category": q.get("category"),
                "unit_kind": ws.placed[ev[0]].kind,
                "question": q["question"],
                "gold": gold_of(ws, ev),
            }
        )
    for i, q in enumerate(load_chat(other.chat)["qa"]):
        out.append(
            {
                "id": f"{ws.chat}-other-{i}",
                "kind": "unanswerable",
                "category": q.get("category"),
                "unit_kind": None,
                "question": q["question"],
                "gold": [],
            }
        )
    source = load_chat(NEAR_MISS_FROM[ws.chat])
    theirs = question_names(source)
    mapping = name_mapping(theirs, ws.names)
    for i, q in enumerate(source["qa"]):
        names = {w.removesuffix("'s") for w in re.findall(r"\b[A-Z][a-z]+(?:'s)?\b", q["question"])}
        if not names & set(theirs):  # only questions about the source chat's people
            continue
        out.append(
            {
                "id": f"{ws.chat}-near-{i}",
                "kind": "near_miss",
                "category": q.get("category"),
                "unit_kind": None,
                "question": swap_names(q["question"], mapping),
                "gold": [],
            }
        )
    return out


def realtalk_near_miss(own: dict, foreign: dict) -> list[dict]:
    """The near-miss probe on REALTALK: ``foreign``'s questions about its two people with their
    names replaced by ``own``'s (``own``/``foreign``: the chats' JSON)."""
    theirs = question_names(foreign)
    mapping = name_mapping(theirs, question_names(own))
    out = []
    for q in foreign["qa"]:
        names = {w.removesuffix("'s") for w in re.findall(r"\b[A-Z][a-z]+(?:'s)?\b", q["question"])}
        if not names & set(theirs):
            continue
        out.append({**q, "question": swap_names(q["question"], mapping), "evidence": []})
    return out
