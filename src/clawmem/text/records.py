"""One rule for a result's JSON form, and for a record read from an index row.

A result of clawmem's library is a dataclass; ``--json``, the MCP tools and ``Memory``'s callers
read its ``to_dict()``. Where that form is the fields themselves, in their order, ``as_json``
writes it: tuples and lists become lists, dicts are copied, a nested result gives its own
``to_dict()``. A class says only what differs (a key named otherwise, a value shown otherwise),
so a field added to the class reaches the JSON without a second list to keep in step. A form
that is not the fields (computed keys, another order) stays written out by its class.

``from_row`` is the inverse for an index row (``sqlite3.Row``): each field read from the column
of its name unless the class says otherwise. tests/test_json_pinned.py pins the JSON byte for byte.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields, is_dataclass
from typing import Any, Protocol, TypeVar


class _Row(Protocol):
    def __getitem__(self, key: str) -> Any: ...


T = TypeVar("T")


def json_value(value: object) -> object:
    """``value`` as JSON holds it: a result by its ``to_dict()`` (or its fields), a tuple or
    list as a list, a dict copied; anything else as it is."""
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        return to_dict()
    if is_dataclass(value) and not isinstance(value, type):
        return as_json(value)
    if isinstance(value, (list, tuple)):
        return [json_value(v) for v in value]
    if isinstance(value, dict):
        return {k: json_value(v) for k, v in value.items()}
    return value


def as_json(
    result: object, *, keys: Mapping[str, str] | None = None, **shown: object
) -> dict[str, object]:
    """The fields of the dataclass ``result``, in their order, as JSON values (``json_value``).
    ``keys`` names a field's key otherwise (``{"day": "timestamp"}``); ``shown`` gives a key's
    value instead of the field's (``to=shown_path(self.to)``). Fields whose name starts with
    ``_`` are the object's own and are left out."""
    if not is_dataclass(result) or isinstance(result, type):
        raise TypeError(f"as_json takes a dataclass instance, not {type(result).__name__}")
    keys = keys or {}
    out: dict[str, object] = {}
    for f in fields(result):
        if f.name.startswith("_"):
            continue
        key = keys.get(f.name, f.name)
        out[key] = shown[key] if key in shown else json_value(getattr(result, f.name))
    unknown = set(shown) - set(out)
    if unknown:
        raise TypeError(
            f"as_json: {', '.join(sorted(unknown))} is no key of {type(result).__name__}"
        )
    return out


def from_row(
    cls: type[T], row: _Row, *, columns: Mapping[str, str] | None = None, **values: Any
) -> T:
    """An instance of the dataclass ``cls`` from an index row: each field from the column of its
    name (``columns`` names it otherwise: ``{"to": "dst"}``), unless ``values`` gives it."""
    columns = columns or {}
    given = {
        f.name: values[f.name] if f.name in values else row[columns.get(f.name, f.name)]
        for f in fields(cls)  # type: ignore[arg-type]
        if f.init
    }
    return cls(**given)
