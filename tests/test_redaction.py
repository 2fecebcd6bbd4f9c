"""Credentials never reach the index: twenty kinds planted in transcripts (and a note) are found in
no byte of the database, its WAL or its shared-memory file, nor in any output; the transcript is
not modified. Secrets are assembled at run time so that this file holds none."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from clawmem import open_workspace
from clawmem.ingest.retain import looks_like_secret
from clawmem.text.redact import REDACTED, find_secret, redact

from .conftest import cli


def _r(*parts: str) -> str:
    return "".join(parts)


# (kind as find_secret names it, text holding one)
PLANTED = [
    (
        "a private key",
        _r(
            "-----BEGIN RSA PRIV",
            "ATE KEY-----\nMIIEowIBAAKCAQEAq7vQm4Zc9Lk2pW8sX1yN3fT6hR0jD5gB\n",
            "k2pW8sX1yN3fT6hR0jD5gBq7vQm4Zc9L\n-----END RSA PRIV",
            "ATE KEY-----",
        ),
    ),
    ("an AWS access key", _r("AKIA", "QZ7X4TRN2PLM8VWB")),
    (
        "an AWS secret key",
        _r("aws_secret_access_key = ", "wJalrXUtnFEMI9K7MDENG9bPxRfiCYQZ7X4TRN2P"),
    ),
    ("a GitHub token", _r("ghp_", "R8dkq2LmX7vPz4TnW9yB3cF6hJ1sA5eG0uQi")),
    (
        "a GitHub fine-grained token",
        _r("github_pat_", "11ABCDEFG0qZ7x4TRN2pLm_8VWBcd3kQ9rT5yU7iO1pA2sD4fG6hJ8kL0zX"),
    ),
    ("a GitLab token", _r("glpat-", "Xq7Z4TRN2pLm8VWBcd3k")),
    ("an Anthropic API key", _r("sk-ant-", "api03-Zq7X4TRN2pLm8VWBcd3kQ9rT5yU7iO1p")),
    ("an OpenAI-style API key", _r("sk-", "proj-Mq7X4TRN2pLm8VWBcd3kQ9rT5yU7iO1pA2s")),
    ("a Slack token", _r("xoxb-", "2417349812-7781250913-Qz7X4TRN2pLm8VWB")),
    (
        "a Slack webhook",
        _r("https://hooks.slack", ".com/services/T024BE7LD/B01Q2R3S4T5/Zq7X4TRN2pLm8VWBcd3kQ9rT"),
    ),
    ("a Google API key", _r("AIza", "SyQz7X4TRN2pLm8VWBcd3kQ9rT5yU7iO1pA")),
    ("a Stripe key", _r("sk_live_", "51Hq7X4TRN2pLm8VWBcd3kQ9")),
    ("a Hugging Face token", _r("hf_", "Qz7X4TRN2pLm8VWBcd3kQ9rT5yU7iO1pAs")),
    ("an npm token", _r("npm_", "Qz7X4TRN2pLm8VWBcd3kQ9rT5yU7iO1pA2sD")),
    ("a SendGrid key", _r("SG.", "Qz7X4TRN2pLm8VWBcd3kQ9.rT5yU7iO1pA2sD4fG6hJ8kL0zXcV")),
    ("a Telegram bot token", _r("7412589630", ":AAHq7X4TRN2pLm8VWBcd3kQ9rT5yU7iO1pA")),
    (
        "a JSON web token",
        _r(
            "eyJhbGciOiJIUzI1NiJ9",
            ".eyJzdWIiOiJwZXRlciIsImV4cCI6OTk5OTk5OTk5OX0.Qz7X4TRN2pLm8VWBcd3kQ9rT5yU7",
        ),
    ),
    (
        "a connection string with a password",
        _r("postgres://billing:", "Tr0ub4dor-Zq7x", "@db.internal:5432/payments"),
    ),
    ("a bearer token", _r("Authorization: Bearer ", "Qz7X4TRN2pLm8VWBcd3kQ9rT5yU7")),
    ("a password or token assignment", _r("DB_PASSWORD=", "correct-horse-Zq7x-battery")),
]
# The part of each that must never be stored (assignments keep their name: "DB_PASSWORD=").
SECRET_PART = {
    "an AWS secret key": "wJalrXUtnFEMI9K7MDENG9bPxRfiCYQZ7X4TRN2P",
    "a connection string with a password": "Tr0ub4dor-Zq7x",
    "a bearer token": "Qz7X4TRN2pLm8VWBcd3kQ9rT5yU7",
    "a password or token assignment": "correct-horse-Zq7x-battery",
    "a private key": "MIIEowIBAAKCAQEAq7vQm4Zc9Lk2pW8sX1yN3fT6hR0jD5gB",
}


def secret_of(kind: str, text: str) -> str:
    return SECRET_PART.get(kind, text)


def test_twenty_kinds_each_recognised_and_redacted():
    assert len(PLANTED) == 20 and len({k for k, _ in PLANTED}) == 20
    for kind, text in PLANTED:
        assert find_secret(text) == kind, kind
        assert looks_like_secret(f"note: {text}") is not None  # retain refuses the same shapes
        out = redact(f"before {text} after")
        assert secret_of(kind, text) not in out, kind
        assert REDACTED in out and out.startswith("before ") and out.endswith(" after")
        assert out.count("\n") == text.count("\n")  # lines keep their numbers


def test_ordinary_text_is_left_alone():
    for text in (
        "We picked the sk-learn pipeline and password rules review",
        "max_tokens = 4096 and the token budget is 1500",
        "see https://example.com/docs and postgres://db.internal:5432/payments",
        "The API key rotation is on Fridays; bearer of bad news.",
    ):
        assert redact(text) == text and find_secret(text) is None, text


def _transcript(path: Path) -> None:
    lines = [{"type": "session", "version": 3, "id": "sec-1", "timestamp": "2025-12-06T09:00:00Z"}]
    for i, (kind, text) in enumerate(PLANTED):
        role = "user" if i % 2 == 0 else "assistant"
        said = f"Here is {kind} for the staging box, keep it safe: {text} thanks"
        lines.append(
            {
                "type": "message",
                "timestamp": f"2025-12-06T09:{i:02d}:00Z",
                "message": {"role": role, "content": [{"type": "text", "text": said}]},
            }
        )
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")


def _all_bytes(memory_dir: Path) -> bytes:
    blob = b""
    for p in sorted(memory_dir.iterdir()):
        if p.is_file() and p.name.startswith("index.sqlite"):
            blob += p.read_bytes()
    return blob


@pytest.mark.parametrize("vectors", [False, True])
def test_planted_secrets_reach_no_byte_of_the_index(ws, tmp_path, hash_model, vectors):
    folder = tmp_path / "transcripts"
    folder.mkdir()
    _transcript(folder / "sec-1.jsonl")
    original = (folder / "sec-1.jsonl").read_bytes()
    note = "\n".join(f"- {kind}: {text}" for kind, text in PLANTED[:5])
    (ws / "memory" / "2025-12-06.md").write_text(f"# 2025-12-06\n\n{note}\n", encoding="utf-8")
    (ws / "clawmem.toml").write_text(
        f"vectors = {'true' if vectors else 'false'}\n[sessions]\npaths = [{json.dumps(str(folder))}]\n",
        encoding="utf-8",
    )
    mem = open_workspace(ws, environ={})
    mem.index()
    # Grow the transcript (an append) and edit the note (cache entries of the old texts).
    with (folder / "sec-1.jsonl").open("a", encoding="utf-8") as f:
        kind, text = PLANTED[3]
        f.write(
            json.dumps(
                {
                    "type": "message",
                    "timestamp": "2025-12-06T10:00:00Z",
                    "message": {"role": "user", "content": f"again {text}"},
                }
            )
            + "\n"
        )
    (ws / "memory" / "2025-12-06.md").write_text(
        f"# 2025-12-06\n\nEdited.\n{note}\n", encoding="utf-8"
    )
    grown = (folder / "sec-1.jsonl").read_bytes()
    mem.index()
    res = mem.recall("staging box keep it safe", k=30)
    shown = json.dumps(res.to_dict(explain=True))
    got = mem.get("sessions/sec-1.jsonl")["text"] + mem.get("memory/2025-12-06.md")["text"]
    cli_out = cli("-w", str(ws), "recall", "staging box", "--json", "-k", "30").out
    cli_get = cli("-w", str(ws), "get", "sessions/sec-1.jsonl", "--json").out

    stored = _all_bytes(ws / ".memory")
    assert stored and res.hits and REDACTED in shown and REDACTED in got
    for kind, text in PLANTED:
        secret = secret_of(kind, text)
        for probe in {secret, secret[4:20]}:  # the whole secret and a piece of it
            for where, data in (
                ("index bytes", stored),
                ("recall", shown.encode()),
                ("get", got.encode()),
                ("cli recall", cli_out.encode()),
                ("cli get", cli_get.encode()),
            ):
                assert probe.encode() not in data, f"{kind} found in {where}"
                if "\n" not in probe:
                    assert json.dumps(probe)[1:-1].encode() not in data, f"{kind} in {where}"
    # The transcript itself is never written to.
    assert (folder / "sec-1.jsonl").read_bytes() == grown and grown.startswith(original)


def test_redaction_survives_a_forced_rebuild(ws, tmp_path, lexical):
    folder = tmp_path / "t"
    folder.mkdir()
    _transcript(folder / "sec-1.jsonl")
    (ws / "clawmem.toml").write_text(f"[sessions]\npaths = [{json.dumps(str(folder))}]\n")
    assert cli("-w", str(ws), "index").code == 0
    assert cli("-w", str(ws), "index", "--force").code == 0
    stored = _all_bytes(ws / ".memory")
    for kind, text in PLANTED:
        assert secret_of(kind, text).encode() not in stored, kind
    shutil.rmtree(ws / ".memory")


def test_every_shape_has_lower_case_needles_its_matches_contain():
    """The substring prefilter must never hide a secret: each shape's needles are lower-case and
    every planted example of it contains one."""
    from clawmem.text.redact import SHAPES

    by_kind = {s.kind: s for s in SHAPES}
    assert all(s.needles and all(n == n.lower() for n in s.needles) for s in SHAPES)
    for kind, text in PLANTED:
        m = by_kind[kind].pattern.search(text)
        assert m and any(n in m.group(0).lower() for n in by_kind[kind].needles), kind
