"""REALTALK as data: ten real 21-day conversations that no one on this project wrote, converted
into workspaces of daily logs.

The conversion follows ``../shared/eval/realtalk``'s README: one daily log a day
(``memory/YYYY-MM-DD.md``), one ``## Session N`` section per session (a session that runs past
midnight continues under the same heading in the next day's log), one ``- Speaker: text`` bullet
per message (whitespace collapsed to one line; a photo's caption appended as ``[photo: …]``). A
question's gold lines are the bullets of its evidence messages; questions without evidence ids are
left out. Nothing from the data is written into the repository: workspaces are built under
``bench-results/``. Chats 1–5 are the tuning split, 6–10 the held-out split.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path

from benchmarks.common import EVAL, WORK
from benchmarks.datasets.workspaces import fill

REALTALK = EVAL / "realtalk"
TUNE = (1, 2, 3, 4, 5)
HELD_OUT = (6, 7, 8, 9, 10)


@dataclass(frozen=True)
class Message:
    path: str
    line: int
    text: str  # the bullet's text without "- "


@dataclass
class Chat:
    number: int
    name: str
    files: dict[str, str]
    messages: list[Message]
    questions: list[dict]  # {question, answer, category, gold: [[{path, start, end}]]}
    today: date  # the day after the last message: when an agent would ask


def chat_files() -> list[Path]:
    files = sorted(REALTALK.glob("Chat_*.json"), key=lambda p: int(p.name.split("_")[1]))
    if not files:
        raise FileNotFoundError(f"{REALTALK}: no Chat_*.json (set CLAWMEM_BENCH_EVAL)")
    return files


def _when(stamp: str) -> datetime:
    return datetime.strptime(stamp.strip(), "%d.%m.%Y, %H:%M:%S")


def convert(path: Path) -> Chat:
    data = json.loads(path.read_text(encoding="utf-8"))
    number = int(path.name.split("_")[1])
    sessions = sorted(
        (int(k.split("_")[1]), v)
        for k, v in data.items()
        if re.fullmatch(r"session_\d+", k) and isinstance(v, list)
    )
    by_day: dict[str, list[tuple[int, dict]]] = {}
    for n, msgs in sessions:
        for m in msgs:
            by_day.setdefault(_when(m["date_time"]).date().isoformat(), []).append((n, m))
    files: dict[str, str] = {}
    where: dict[str, tuple[str, int]] = {}
    messages: list[Message] = []
    for day in sorted(by_day):
        rel = f"memory/{day}.md"
        lines = [f"# {day}"]
        current = None
        for n, m in by_day[day]:
            if n != current:
                lines += ["", f"## Session {n}", ""]
                current = n
            text = " ".join(m["clean_text"].split())
            if m.get("blip_caption"):
                text = f"{text} [photo: {' '.join(m['blip_caption'].split())}]".strip()
            body = f"{m['speaker']}: {text}"
            lines.append(f"- {body}")
            where[m["dia_id"]] = (rel, len(lines))
            messages.append(Message(rel, len(lines), body))
        files[rel] = "\n".join(lines) + "\n"
    questions = []
    for q in data["qa"]:
        ev = [e for e in q.get("evidence") or [] if e in where]
        if not ev:
            continue
        gold = [[{"path": where[e][0], "start": where[e][1], "end": where[e][1]}] for e in ev]
        questions.append(
            {
                "question": q["question"],
                "answer": q.get("answer"),
                "category": q.get("category"),
                "gold": gold,
            }
        )
    last = max(date.fromisoformat(d) for d in by_day)
    return Chat(number, path.stem, files, messages, questions, last + timedelta(days=1))


def build(chat: Chat, folder: str = "realtalk") -> Path:
    root = WORK / "work" / folder / f"chat-{chat.number:02d}"
    return fill(root, chat.files)


def foreign_of(number: int) -> int:
    """The chat whose questions ``number`` is asked as foreign ones: the next in its split."""
    split = TUNE if number in TUNE else HELD_OUT
    return split[(split.index(number) + 1) % len(split)]
