"""Regenerate the example outputs in the docs by running their commands on the fixture workspace.

    python scripts/gen_doc_examples.py WORKSPACE           # rewrite the examples in place
    python scripts/gen_doc_examples.py WORKSPACE --check   # exit 1 if an example is out of date

WORKSPACE is an indexed copy of ``fixtures/workspace`` (``cp -r fixtures/workspace /tmp/notes &&
clawmem -w /tmp/notes index``); tests/test_doc_examples.py runs the check on the real model's
index. An example is a fenced block right after a marker line naming its command:

    <!-- example: recall "DEC-0054" -k 2 -->
    ```console
    $ clawmem recall "DEC-0054" -k 2
    …the output, as the command prints it…
    ```

A JSON output keeps its first result only (the rest is shown as "…"); the workspace's path and
the time a recall took are written as in a user's /tmp/notes, so the example does not change with
where or how fast it ran. Decimals are compared with a tolerance (``same_output``): the last digits
of a cosine are the CPU's SIMD kernels' to decide (an AVX-512 machine prints 0.879042 where
another prints 0.87905), so an example is out of date only where its text, its integers or a
decimal beyond that tolerance changed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOCS = [REPO / "README.md", REPO / "docs" / "cli.md", REPO / "docs" / "agents.md"]
MARKER = re.compile(
    r"^<!-- example: (?P<cmd>.+?) -->\n```(?P<lang>\w*)\n(?P<body>.*?)```\n", re.M | re.S
)
SHOWN_AS = "/tmp/notes"
# A decimal number on its own (not part of a version such as v0.1.9, a date or a file name).
_DECIMAL = re.compile(r"(?<![\w.])-?\d+\.\d+(?![\w.])")
# How far two printed decimals may be apart and still be the same result. Cosines differ from
# 1e-6 to 1e-5 between CPUs, and a score fused from them a little more; a figure printed with two
# decimals (a relevance) may round the other way, one unit in its last place. One decimal or
# none: exact.
DECIMAL_TOLERANCE = 2e-3


def _close(a: str, b: str) -> bool:
    places = min(len(a.split(".")[1]), len(b.split(".")[1]))
    if places < 2:
        return a == b
    return abs(float(a) - float(b)) <= max(DECIMAL_TOLERANCE, 1.01 * 10.0**-places)


def same_output(expected: str, actual: str) -> bool:
    """Whether two renderings of an example say the same: equal text around the decimals (runs
    of spaces count as one: a longer number may shift a column) and decimals within tolerance."""
    want, got = _DECIMAL.split(expected), _DECIMAL.split(actual)
    if len(want) != len(got):
        return False
    if any(re.sub(" +", " ", w) != re.sub(" +", " ", g) for w, g in zip(want, got, strict=True)):
        return False
    return all(
        _close(a, b)
        for a, b in zip(_DECIMAL.findall(expected), _DECIMAL.findall(actual), strict=True)
    )


def run(workspace: Path, command: str) -> str:
    args = shlex.split(command)
    env = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1", "TERM": "dumb"}
    proc = subprocess.run(
        [sys.executable, "-m", "clawmem", "-w", str(workspace), *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    out = proc.stdout
    if "--json" in args:
        out = _json_example(out, workspace)
    # The resident embedder's process id changes with every start (issue 29).
    out = re.sub(r"resident embedder \(pid \d+\)", "resident embedder (pid 4242)", out)
    return out.replace(str(workspace), SHOWN_AS)


def _json_example(text: str, workspace: Path) -> str:
    data = json.loads(text)
    if "seconds" in data:
        data["seconds"] = 0.0
    more = isinstance(data.get("results"), list) and len(data["results"]) > 1
    if more:
        data["results"] = data["results"][:1] + ["…"]
    rendered = json.dumps(data, ensure_ascii=False, indent=2)
    return rendered.replace('"…"', "…") + "\n"


def render(workspace: Path, document: str) -> str:
    def one(m: re.Match) -> str:
        cmd = m.group("cmd")
        body = f"$ clawmem {cmd}\n" + run(workspace, cmd)
        if same_output(m.group("body"), body):
            return m.group(0)  # only digits the CPU decides differ: keep the doc as it is
        return f"<!-- example: {cmd} -->\n```{m.group('lang')}\n{body}```\n"

    return MARKER.sub(one, document)


def _steady(workspace: Path, timeout: float = 60.0) -> None:
    """Wait until the user's resident embedder answers: the examples show what every call but
    a session's first prints (a first call embeds its query with the NumPy query path, whose
    cosines differ from the model's in the sixth decimal, and says so in ``query_by``)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        out = run(workspace, "recall warm --json")
        if '"resident embedder (pid' in out or '"query_by"' not in out:
            return
        time.sleep(0.5)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="gen_doc_examples")
    ap.add_argument("workspace", type=Path)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    _steady(args.workspace.resolve())
    stale = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        new = render(args.workspace.resolve(), text)
        if new != text:
            stale.append(doc)
            if not args.check:
                doc.write_text(new, encoding="utf-8")
    if args.check and stale:
        names = ", ".join(str(d.relative_to(REPO)) for d in stale)
        print(
            f"gen_doc_examples: out of date: {names}; run python scripts/gen_doc_examples.py WORKSPACE"
        )
        return 1
    print("gen_doc_examples: " + ("up to date" if not stale else f"updated {len(stale)} file(s)"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
