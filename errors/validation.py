"""pydantic validation errors as one `ConfigError` naming file, field, what was expected and what was found.

Every settings file (run specs, the mock server's config) goes through `config_error`, so a user meets one way of
being told: `run.toml: models[1].temperature: expected a number <= 2, got "hot"`; an unknown key names the known
ones and the closest match.
"""

from __future__ import annotations

import difflib
import enum
import json
import types
import typing
from typing import Any, Literal

from annotated_types import Ge, Gt, Le, Lt
from pydantic import BaseModel, ValidationError

from errors import ConfigError


class _Literal:
    """A value shown as TOML/JSON would write it (`"hot"`, not Python's `'hot'`) in a ConfigError."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def __repr__(self) -> str:
        return json.dumps(self.value, default=str, ensure_ascii=False)


Loc = tuple[str | int, ...]
"""Where a field is: table and key names, and list indexes."""


def config_error(exc: ValidationError, root: type[BaseModel], source: str, prefix: Loc = ()) -> ConfigError:
    """The first error of a pydantic `ValidationError` as a ConfigError naming file, field and expectation; an unknown
    key comes first (a misspelt required key is also a missing one, and the misspelling is what to fix)."""
    errors = exc.errors()
    error = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    loc = tuple(part for part in error["loc"] if not isinstance(part, str) or not part.startswith("function-"))
    field = _dotted(prefix + loc) or "(top level)"
    kind = error["type"]
    if kind == "extra_forbidden":
        known = _known_fields(root, loc[:-1])
        close = difflib.get_close_matches(str(loc[-1]), known, n=1) if loc else []
        hint = f" (did you mean {close[0]}?)" if close else ""
        return ConfigError(source, field, f"one of the fields {', '.join(known)}{hint}" if known else "no field here")
    if kind == "missing":
        return ConfigError(source, field, f"{_describe(root, loc)} (required)")
    if kind == "value_error":
        return ConfigError(source, field, str(error["msg"]).removeprefix("Value error, "))
    return ConfigError(source, field, _describe(root, loc) or error["msg"], _Literal(error.get("input")))


def _dotted(loc: Loc) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _field(root: type[BaseModel], loc: Loc) -> Any:
    """The FieldInfo at `loc` (list indexes skipped), or None."""
    model: Any = root
    info = None
    for part in loc:
        if isinstance(part, int):
            continue
        fields = getattr(model, "model_fields", None)
        if not fields or part not in fields:
            return None
        info = fields[part]
        model = _inner_model(info.annotation)
    return info


def _inner_model(annotation: Any) -> Any:
    """The pydantic model inside an annotation such as `list[ModelSpec]` or `Prices | None`, or None."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _inner_model(arg)
        if found is not None:
            return found
    return None


def _known_fields(root: type[BaseModel], loc: Loc) -> list[str]:
    """Field names of the table at `loc` (the root model when `loc` holds only list indexes)."""
    if all(isinstance(part, int) for part in loc):
        return sorted(root.model_fields)
    info = _field(root, loc)
    model = _inner_model(info.annotation) if info is not None else None
    return sorted(model.model_fields) if model is not None else []


_BOUNDS = {Ge: (">=", "ge"), Gt: (">", "gt"), Le: ("<=", "le"), Lt: ("<", "lt")}


def _describe(root: type[BaseModel], loc: Loc) -> str:
    """What the field at `loc` accepts, in words: `a number <= 2`, `one of "a", "b"`, `a list of strings`."""
    info = _field(root, loc)
    if info is None:
        return ""
    what = _type_words(info.annotation, list_item=bool(loc) and isinstance(loc[-1], int))
    bounds = [f"{_BOUNDS[type(m)][0]} {getattr(m, _BOUNDS[type(m)][1])}" for m in info.metadata if type(m) in _BOUNDS]
    return " ".join([what, " and ".join(bounds)]).strip()


def _type_words(annotation: Any, list_item: bool = False) -> str:
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        words = [_type_words(a, list_item) for a in args if a is not type(None)]
        return " or ".join(words)
    if origin is list:
        return _type_words(args[0]) if list_item else f"a list of {_type_words(args[0]).removeprefix('a ')}s"
    if origin is Literal:
        return "one of " + ", ".join(json.dumps(a) for a in args)
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return "one of " + ", ".join(json.dumps(m.value) for m in annotation)
    names = {bool: "true or false", int: "an integer", float: "a number", str: "a string", dict: "a table"}
    if annotation in names:
        return names[annotation]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "a table"
    return getattr(annotation, "__name__", str(annotation))
