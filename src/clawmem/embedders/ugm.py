"""SentencePiece unigram (UGM) tokenisation, exactly as llama.cpp's ``llm_tokenizer_ugm`` does it.

The default model's GGUF declares ``tokenizer.ggml.model = t5``: a unigram vocabulary of 250,037
pieces with log-probability scores. llama.cpp spends most of a model load (~0.7 s) building its
tokenizer from those strings; a cold process that only embeds a query cannot afford that (issue
29). So the pieces live in a SQLite table (``query_cache``), and a text looks up only its own
substrings: a few milliseconds from a cold start.

The rules, read from llama.cpp's ``src/llama-vocab.cpp`` (and checked against it on every
evaluation text by ``benchmarks.suites.query_path``):

* Normalisation, for a vocabulary without a precompiled charsmap: every ASCII space becomes
  U+2581 (``escape_whitespaces``); one U+2581 goes before the first non-space character
  (``add_space_prefix``); runs of spaces are kept (``remove_extra_whitespaces`` false). clawmem's
  own NFKC step (``llama.nfkc_prepare``) runs before, as for llama.cpp.
* Viterbi over code points: at each start, every piece that matches (shortest first) offers
  ``best[start] + score`` to ``best[end]`` and wins only if strictly greater; a code point no
  single-code-point piece covers gets ``<unk>`` at the lowest normal score minus 10.
* Back from the end, consecutive ``<unk>`` collapse into one.
* Only normal, user-defined and unused pieces are matched (never control tokens such as
  ``<s>``); user-defined ones score 0. BOS and EOS wrap the result.

A vocabulary with user-defined pieces (which llama.cpp also splits the text on) or a charsmap
is refused by ``supported``: the query path then is not used.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

ESCAPED_SPACE = "\u2581"
UNKNOWN_PENALTY = 10.0
# SQLite's bound-parameter limit is 32,766 in current builds, 999 in old ones.
_LOOKUP_CHUNK = 900

# gguf token types
TOKEN_NORMAL, TOKEN_UNKNOWN, TOKEN_CONTROL, TOKEN_USER_DEFINED, TOKEN_UNUSED = 1, 2, 3, 4, 5


def normalize(text: str, *, add_space_prefix: bool, merge_spaces: bool) -> str:
    """llama.cpp's ``llm_tokenizer_ugm_session::normalize`` for a vocabulary with no charsmap."""
    out: list[str] = []
    prepended = False
    in_word = False
    for ch in text:
        if ch != " ":
            if not in_word:
                in_word = True
                if (add_space_prefix and not prepended) or merge_spaces:
                    out.append(ESCAPED_SPACE)
                    prepended = True
            out.append(ch)
        else:
            in_word = False
            if not merge_spaces:
                out.append(ESCAPED_SPACE)
    return "".join(out)


class UgmTokenizer:
    """Token ids for text, from a ``vocab`` table (piece, id, score) of a SQLite database."""

    def __init__(
        self,
        db: sqlite3.Connection,
        *,
        bos: int,
        eos: int,
        unk: int,
        unknown_score: float,
        max_piece_chars: int,
        add_space_prefix: bool,
        merge_spaces: bool,
    ) -> None:
        self._db = db
        self.bos, self.eos, self.unk = bos, eos, unk
        self._unknown_score = unknown_score
        self._max = max_piece_chars
        self._add_space_prefix = add_space_prefix
        self._merge_spaces = merge_spaces

    def encode(self, text: str) -> list[int]:
        """The ids llama.cpp's ``llama_tokenize(add_special=True, parse_special=False)`` gives."""
        return [self.bos, *self.pieces(text), self.eos]

    def pieces(self, text: str) -> list[int]:
        s = normalize(
            text, add_space_prefix=self._add_space_prefix, merge_spaces=self._merge_spaces
        )
        n = len(s)
        if n == 0:
            return []
        found = self._lookup(s[i : i + k] for i in range(n) for k in range(1, self._max + 1))
        neg = float("-inf")
        score = [neg] * (n + 1)
        token = [self.unk] * (n + 1)
        start = [0] * (n + 1)
        score[0] = 0.0
        for i in range(n):
            here = score[i]
            single = False
            for end in range(i + 1, min(n, i + self._max) + 1):
                hit = found.get(s[i:end])
                if hit is None:
                    continue
                if end == i + 1:
                    single = True
                challenger = here + hit[1]
                if challenger > score[end]:
                    score[end], token[end], start[end] = challenger, hit[0], i
            if not single:
                challenger = here + self._unknown_score
                if challenger > score[i + 1]:
                    score[i + 1], token[i + 1], start[i + 1] = challenger, self.unk, i
        out: list[int] = []
        pos = n
        prev_unknown = False
        while True:
            unknown = token[pos] == self.unk
            if not (prev_unknown and unknown):
                out.append(token[pos])
            if start[pos] == 0:
                break
            prev_unknown = unknown
            pos = start[pos]
        out.reverse()
        return out

    def _lookup(self, substrings: Iterable[str]) -> dict[str, tuple[int, float]]:
        wanted = list(dict.fromkeys(substrings))
        found: dict[str, tuple[int, float]] = {}
        for k in range(0, len(wanted), _LOOKUP_CHUNK):
            part = wanted[k : k + _LOOKUP_CHUNK]
            marks = ",".join("?" * len(part))
            for piece, tid, score in self._db.execute(
                f"SELECT piece, id, score FROM vocab WHERE piece IN ({marks})", part
            ):
                found[piece] = (tid, score)
        return found


def vocab_rows(
    tokens: list[bytes], scores: list[float], types: list[int]
) -> tuple[list[tuple[str, int, float]], float, int]:
    """The rows of the ``vocab`` table (the pieces llama.cpp's trie holds, user-defined ones
    scored 0), the unknown piece's score and the longest piece in code points."""
    rows = []
    lowest = float("inf")
    longest = 1
    for tid, (raw, score, kind) in enumerate(zip(tokens, scores, types, strict=True)):
        if kind == TOKEN_NORMAL:
            lowest = min(lowest, score)
        if kind in (TOKEN_NORMAL, TOKEN_USER_DEFINED, TOKEN_UNUSED):
            piece = raw.decode("utf-8")
            rows.append((piece, tid, 0.0 if kind == TOKEN_USER_DEFINED else score))
            longest = max(longest, len(piece))
    return rows, lowest - UNKNOWN_PENALTY, longest


def supported(fields: dict, types: list[int], tokens: list[bytes]) -> str | None:
    """Why this GGUF's tokenizer is not one ``UgmTokenizer`` reproduces, or None."""
    if fields.get("tokenizer.ggml.model") != "t5":
        return f"its tokenizer is {fields.get('tokenizer.ggml.model')!r}, not SentencePiece unigram"
    if fields.get("tokenizer.ggml.treat_whitespace_as_suffix"):
        return "its tokenizer treats whitespace as a suffix"
    if fields.get("tokenizer.ggml.escape_whitespaces") is False:
        return "its tokenizer does not escape whitespace"
    if TOKEN_USER_DEFINED in types:
        return "its vocabulary has user-defined pieces"
    try:
        for raw in tokens:
            raw.decode("utf-8")
    except UnicodeDecodeError:
        return "a piece of its vocabulary is not UTF-8"
    return None
