"""An optional local LLM that phrases one paragraph per entity page (``reflect --llm PATH.gguf``).

Reflect does all its work without it. The model only rewords facts it is given; the paragraph is
then followed by the sources of every one of those facts, so the line still cites what it says.
Greedy decoding (temperature 0, fixed seed) keeps a rerun on the same inputs the same, and reflect
only asks again when an entity's current facts changed.

Small models invent (gemma-3-270m turns "Andy turns 40" into an architect who loves hiking), so
every sentence is checked against the facts it was given: a sentence with a number the facts do
not have, or most of whose words are not in them, is dropped; an empty summary is not written.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from clawmem.errors import ModelError
from clawmem.markdown.factlog import LoggedFact
from clawmem.text.textnorm import tokens
from clawmem.text.topics import topic_words

PROMPT = (
    "Notes about {entity}:\n{notes}\n\nSummarize the notes about {entity} in one short paragraph "
    "of at most three sentences. Use only the notes."
)
MAX_CHARS = 600
GROUNDED = 0.75  # share of a sentence's words that must come from the facts
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


class Summarizer:
    def __init__(self, path: Path) -> None:
        if not path.is_file():
            raise ModelError(
                f"{path}: no such model file", hint="pass a GGUF chat model to {param}", param="llm"
            )
        self.path = path
        self.name = path.stem
        self._llm: Any = None  # a llama_cpp.Llama, loaded on first use

    def _load(self) -> Any:
        if self._llm is None:
            try:
                from llama_cpp import Llama
            except ImportError as exc:
                raise ModelError(
                    f"llama-cpp-python is not installed ({exc})",
                    hint="pip install llama-cpp-python, or run reflect without {param}",
                    param="llm",
                ) from None
            try:
                with _quiet_stderr():
                    llm = Llama(model_path=str(self.path), n_ctx=2048, seed=0, verbose=False)
                    # Without a chat template in the file llama-cpp-python falls back to
                    # Llama-2's [INST] format, which Gemma answers with noise.
                    arch = str(llm.metadata.get("general.architecture", ""))
                    if not llm.metadata.get("tokenizer.chat_template") and arch.startswith("gemma"):
                        llm = Llama(
                            model_path=str(self.path),
                            n_ctx=2048,
                            seed=0,
                            verbose=False,
                            chat_format="gemma",
                        )
                self._llm = llm
            except (ValueError, RuntimeError) as exc:
                raise ModelError(
                    f"{self.path}: cannot load this model ({exc})",
                    hint="{param} needs a GGUF chat model that llama.cpp can run",
                    param="llm",
                ) from None
        return self._llm

    def summarize(self, entity: str, facts: list[LoggedFact]) -> str:
        notes = "\n".join(f"- {f.content}" for f in facts)
        messages = [{"role": "user", "content": PROMPT.format(entity=entity, notes=notes)}]
        llm = self._load()
        with _quiet_stderr():
            out = llm.create_chat_completion(
                messages=messages,
                temperature=0.0,
                top_k=1,
                max_tokens=160,
                seed=0,
                repeat_penalty=1.3,
            )
        return grounded(out["choices"][0]["message"]["content"] or "", facts)


@contextmanager
def _quiet_stderr() -> Iterator[None]:
    """llama.cpp prints notes on file descriptor 2 even with verbose=False; cron mails them."""
    try:
        saved = os.dup(2)
    except OSError:
        yield
        return
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def grounded(text: str, facts: list[LoggedFact]) -> str:
    """The model's sentences that the facts support, as one line that cannot break the page:
    no markers, no headings or list marks, no prompt echo, bounded in length."""
    known = frozenset().union(*(topic_words(f.content) for f in facts))
    numbers = {t for f in facts for t in tokens(f.content) if any(ch.isdigit() for ch in t)}
    keep: list[str] = []
    for raw in text.replace("<!--", " ").replace("-->", " ").splitlines():
        line = raw.strip().lstrip("#>-*").strip()
        if not line or line.casefold().startswith(("notes about", "summarize")):
            continue
        for sentence in _SENTENCE.split(line):
            words = topic_words(sentence)
            digits = {t for t in tokens(sentence) if any(ch.isdigit() for ch in t)}
            if (
                sentence.endswith((".", "!", "?", "。", "！", "？"))  # not cut off by max_tokens
                and len(words) >= 2
                and len(words & known) / len(words) >= GROUNDED
                and digits <= numbers
                and sentence not in keep
            ):
                keep.append(sentence)
        if len(keep) >= 3:
            break
    out = " ".join(keep[:3])
    if len(out) > MAX_CHARS:
        out = out[:MAX_CHARS].rsplit(" ", 1)[0] + " …"
    return out
