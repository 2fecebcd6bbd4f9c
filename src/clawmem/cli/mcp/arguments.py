"""A tool call's arguments, checked against the tool's own JSON schema.

The schema an agent is shown is the one its arguments are held to: ``jsonschema`` (Draft 2020-12,
the dialect MCP names) finds what is wrong, and this module only says it in one line, the way the
CLI says it (``memory_search: 'k' must be an integer, got "five"``; a number below its minimum is
the library's own ``k=0: must be at least 1``). Before checking, the forms LLMs commonly send for
what they mean are read as meant: ``null`` for "not given", ``"W"`` for ``["W"]``, ``3.0`` for 3.
"""

from __future__ import annotations

import json
from functools import cache
from typing import TYPE_CHECKING, Any

from clawmem.errors import BadArgument, ClawmemError, UsageError

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError
    from jsonschema.protocols import Validator

    from clawmem.cli.mcp.catalogue import ToolSpec

_TYPE_WORDS = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "array": "a list",
    "boolean": "true or false",
    "object": "an object",
}
# Which of several problems is told first: a call naming an argument the tool does not have, then
# one missing, then each given argument in the order given (``rank``).
_FIRST = {"additionalProperties": 0, "required": 1}


def _describe(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "..."


@cache
def _validator(schema_json: str) -> Validator:
    from jsonschema import Draft202012Validator

    schema = json.loads(schema_json)
    Draft202012Validator.check_schema(schema)  # a malformed catalogue fails loudly, at once
    return Draft202012Validator(schema)


def _as_meant(props: dict[str, Any], given: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in given.items():
        if value is None:
            continue  # an LLM often sends null for "not given"
        want = props.get(name, {}).get("type")
        if want == "array" and isinstance(value, str):
            value = [value]  # "kind": "W" for ["W"]
        if want == "integer" and isinstance(value, float) and value.is_integer():
            value = int(value)
        out[name] = value
    return out


def validate_arguments(spec: ToolSpec, args: object) -> dict:
    """``args`` as the tool's handler receives them, or ``UsageError`` with a one-line message
    naming the tool and the argument."""
    where = spec.name
    if args is not None and not isinstance(args, dict):
        raise UsageError(f"{where}: arguments must be an object, got {_describe(args)}")
    props: dict[str, Any] = spec.schema.get("properties", {})
    given = _as_meant(props, dict(args or {}))
    order = list(given)
    validator = _validator(json.dumps(spec.schema, sort_keys=True))
    errors = list(validator.iter_errors(given))
    if not errors:
        return given

    def rank(e: ValidationError) -> tuple[int, int, int]:
        first = _FIRST.get(str(e.validator))
        if first is not None:
            return first, 0, 0
        name = e.absolute_path[0] if e.absolute_path else None
        # Of one value's problems, its type first: [1] is not a list of strings before 1 is
        # not a known kind.
        return 2, order.index(name) if name in order else len(order), e.validator != "type"

    raise _in_words(where, spec.schema, given, min(errors, key=rank))


def _in_words(where: str, schema: dict, given: dict, e: ValidationError) -> ClawmemError:
    props: dict[str, Any] = schema.get("properties", {})
    kind = str(e.validator)
    if kind == "additionalProperties":
        unknown = sorted(set(given) - set(props))
        known = ", ".join(props) or "none"
        return UsageError(f"{where}: unknown argument {unknown[0]!r}", hint=f"arguments: {known}")
    if kind == "required":
        missing = [n for n in schema.get("required", []) if n not in given]
        return UsageError(f"{where}: {missing[0]!r} is required")
    path = list(e.absolute_path)
    name = str(path[0]) if path else "arguments"
    value, rule = e.instance, e.schema
    in_item = len(path) > 1
    if kind == "type":
        want = _TYPE_WORDS.get(str(rule.get("type")), str(rule.get("type")))
        if in_item:
            return UsageError(
                f"{where}: every item of {name!r} must be {want}, got {_describe(value)}"
            )
        return UsageError(f"{where}: {name!r} must be {want}, got {_describe(value)}")
    if kind == "enum":
        choices = ", ".join(str(c) for c in rule["enum"])
        return UsageError(f"{where}: unknown {name} {_describe(value)}", hint=f"{name}: {choices}")
    if kind in ("minimum", "maximum"):
        low, high = rule.get("minimum"), rule.get("maximum")
        if rule.get("type") == "number" and low is not None and high is not None:
            return BadArgument(name, value, f"must be between {low} and {high}")
        if kind == "minimum":
            return BadArgument(name, value, f"must be at least {low}")
        # The maximum is the tool's promise to the agent (k at most 50); the library takes more.
        return UsageError(f"{where}: {name!r} is {value}; the maximum is {high}")
    if kind == "maxLength":
        if in_item:
            return UsageError(
                f"{where}: an item of {name!r} is longer than {rule['maxLength']} characters"
            )
        return UsageError(
            f"{where}: {name!r} is {len(value):,} characters; the limit is {rule['maxLength']:,}",
            hint="shorten it: search with the key words, not a whole document",
        )
    if kind in ("minLength", "pattern"):
        return UsageError(f"{where}: {name!r} is empty")
    if kind == "maxItems":
        return UsageError(
            f"{where}: {name!r} has {len(value)} items; the limit is {rule['maxItems']}"
        )
    # A keyword the catalogue may use one day: jsonschema's own sentence, still one line.
    return UsageError(f"{where}: {name!r}: {e.message.splitlines()[0]}")
