"""Setting top-level keys in ``clawmem.toml`` without disturbing anything else in it.

A person's comments, order and formatting are kept: a key's line is replaced in place, or the key
is appended after the top-level block. Values are written as TOML basic strings.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

from clawmem.errors import ConfigError
from clawmem.files.atomic import write_atomic


def _toml_string(value: str) -> str:
    # JSON string escapes are valid TOML basic-string escapes (\\uXXXX included).
    return json.dumps(value, ensure_ascii=False)


def set_keys(path: Path, values: dict[str, str | None]) -> None:
    """Set (or, for None, remove) settings: at the top level, or inside ``[clawmem]`` when the
    file keeps its settings there (config.load_config reads one or the other)."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path.name}: {exc}", hint="fix the TOML syntax first") from None
    lines = text.splitlines(keepends=True)
    headers = [i for i, line in enumerate(lines) if re.match(r"\s*\[", line)]
    start, first_table = 0, headers[0] if headers else len(lines)
    if isinstance(data.get("clawmem"), dict):
        start = next(i for i in headers if re.match(r"\s*\[\s*clawmem\s*\]", lines[i])) + 1
        first_table = next((i for i in headers if i >= start), len(lines))
    for key, value in values.items():
        pattern = re.compile(rf"\s*{re.escape(key)}\s*=")
        at = next((i for i in range(start, first_table) if pattern.match(lines[i])), None)
        new = None if value is None else f"{key} = {_toml_string(value)}\n"
        if at is not None:
            if new is None:
                del lines[at]
                first_table -= 1
            else:
                lines[at] = new
        elif new is not None:
            end = first_table  # after the block's last non-blank line, keeping blank separators
            while end > start and not lines[end - 1].strip():
                end -= 1
            if end > 0 and not lines[end - 1].endswith("\n"):
                lines[end - 1] += "\n"
            lines.insert(end, new)
            first_table += 1
    write_atomic(path, "".join(lines))
