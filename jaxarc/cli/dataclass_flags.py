"""Command-line flags generated from a frozen (nested) config dataclass.

Every field becomes one flag named after its path (``lr`` -> ``--lr``, ``grpo.eps_low`` ->
``--grpo-eps-low``), typed from its annotation: ``int``/``float``/``str``, ``bool``
(``--x``/``--no-x``), ``Literal[...]`` (choices), ``tuple[T, ...]`` (one or more values) and
``X | None`` (also accepts ``none``). Flags default to "not given", so they override a base
config (a preset or a checkpoint's config) field by field; nothing is listed by hand, so the
CLI cannot drift from the dataclass.
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import re
import types
import typing
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

ConfigT = TypeVar("ConfigT")
_NONE_WORDS = ("none", "null")


@dataclasses.dataclass(frozen=True)
class FlagSpec:
    """One generated flag: the field path it sets and its argparse destination."""

    path: tuple[str, ...]
    flag: str
    dest: str


def _strip_optional(hint: Any) -> tuple[Any, bool]:
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        args = typing.get_args(hint)
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1:
            return rest[0], len(rest) != len(args)
    return hint, False


def _scalar_parser(kind: type, optional: bool, flag: str) -> Callable[[str], Any]:
    def parse(text: str) -> Any:
        if optional and text.lower() in _NONE_WORDS:
            return None
        try:
            return kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{flag} expects {kind.__name__}{' or none' if optional else ''}, got {text!r}"
            ) from None

    parse.__name__ = kind.__name__  # argparse shows it in "invalid ... value" messages
    return parse


def field_docs(cls: type) -> dict[str, str]:
    """Help text per field: the ``Attributes:`` section of the class docstring, else the
    field line's trailing ``# comment`` in the source."""
    docs: dict[str, str] = {}
    current: list[str] = []
    in_attributes = False
    for line in (inspect.getdoc(cls) or "").splitlines():
        if line.strip() == "Attributes:":
            in_attributes = True
            continue
        if not in_attributes:
            continue
        entry = re.match(r"^ {4}([\w, ]+):\s*(.*)$", line)
        if entry:
            current = [name.strip() for name in entry[1].split(",")]
            for name in current:
                docs[name] = entry[2].strip()
        elif line.startswith(" " * 8) and current:
            for name in current:
                docs[name] += " " + line.strip()
        else:
            in_attributes = False
    try:
        source = inspect.getsource(cls)
    except (OSError, TypeError):
        return docs
    for match in re.finditer(r"^\s+(\w+)\s*:[^#\n]*#\s*(.+)$", source, re.MULTILINE):
        docs.setdefault(match[1], match[2].strip())
    return docs


def _describe_default(value: Any) -> str:
    if isinstance(value, tuple):
        return " ".join(str(v) for v in value) or "()"
    return "none" if value is None else str(value)


def add_dataclass_flags(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup,
    defaults: Any,
    *,
    exclude: Sequence[str] = (),
    _prefix: tuple[str, ...] = (),
) -> list[FlagSpec]:
    """Add one flag per (nested) field of the dataclass instance ``defaults``.

    Help texts show ``defaults``' values and a field's ``metadata["help"]`` if present.
    ``exclude``: dotted field paths to leave out. Returns the specs for
    :func:`overrides_from_args`.
    """
    cls = type(defaults)
    hints = typing.get_type_hints(cls, include_extras=False)
    docs = field_docs(cls)
    specs: list[FlagSpec] = []
    for field in dataclasses.fields(cls):
        path = (*_prefix, field.name)
        dotted = ".".join(path)
        if not field.init or dotted in exclude:
            continue
        value = getattr(defaults, field.name)
        hint, optional = _strip_optional(hints[field.name])
        if dataclasses.is_dataclass(hint) and isinstance(value, hint):
            specs += add_dataclass_flags(parser, value, exclude=exclude, _prefix=path)
            continue
        flag = "--" + "-".join(path).replace("_", "-")
        dest = "cfg__" + "__".join(path)
        help_text = field.metadata.get("help") or docs.get(field.name, "")
        help_text = help_text.replace("``", "").replace("%", "%%")  # argparse formats with %
        help_text = f"{help_text} (default: {_describe_default(value)})".strip()
        kwargs: dict[str, Any] = {"dest": dest, "default": argparse.SUPPRESS, "help": help_text}
        origin = typing.get_origin(hint)
        if hint is bool:
            kwargs["action"] = argparse.BooleanOptionalAction
        elif origin is typing.Literal:
            choices = typing.get_args(hint)
            kinds = {type(c) for c in choices}
            kind = kinds.pop() if len(kinds) == 1 else str
            kwargs["type"] = _scalar_parser(kind, optional, flag)
            kwargs["choices"] = (*choices, None) if optional else choices
            kwargs["metavar"] = "{" + ",".join(str(c) for c in choices) + "}"
        elif origin is tuple:
            item_types = typing.get_args(hint)
            if len(item_types) != 2 or item_types[1] is not Ellipsis:
                raise TypeError(f"{dotted}: only tuple[T, ...] fields can become flags")
            kwargs["type"] = _scalar_parser(item_types[0], optional, flag)
            kwargs["nargs"] = "+"
            kwargs["metavar"] = item_types[0].__name__.upper()
        elif hint in (int, float, str):
            kwargs["type"] = _scalar_parser(hint, optional, flag)
            kwargs["metavar"] = hint.__name__.upper()
        else:
            raise TypeError(f"{dotted}: no flag for fields of type {hint!r}")
        parser.add_argument(flag, **kwargs)
        specs.append(FlagSpec(path, flag, dest))
    return specs


def overrides_from_args(
    args: argparse.Namespace, specs: Sequence[FlagSpec]
) -> dict[tuple[str, ...], Any]:
    """The fields set on the command line: ``{field path: value}``."""
    overrides = {}
    for spec in specs:
        if hasattr(args, spec.dest):
            value = getattr(args, spec.dest)
            if isinstance(value, list):
                value = None if value == [None] else tuple(value)
                if value is not None and None in value:
                    raise ValueError(f"{spec.flag}: 'none' cannot be mixed with values")
            overrides[spec.path] = value
    return overrides


def apply_overrides(config: ConfigT, overrides: dict[tuple[str, ...], Any]) -> ConfigT:
    """``config`` with the fields at the given paths replaced (nested ``dataclasses.replace``;
    each touched dataclass's ``__post_init__`` validation runs again)."""
    direct = {path[0]: value for path, value in overrides.items() if len(path) == 1}
    nested: dict[str, dict[tuple[str, ...], Any]] = {}
    for path, value in overrides.items():
        if len(path) > 1:
            nested.setdefault(path[0], {})[path[1:]] = value
    for name, sub in nested.items():
        direct[name] = apply_overrides(getattr(config, name), sub)
    return dataclasses.replace(config, **direct) if direct else config  # type: ignore[type-var]


def describe_config(config: Any, *, indent: str = "  ") -> str:
    """Multi-line ``name = value`` listing of a nested dataclass, for printing at start."""
    lines = [type(config).__name__ + ":"]

    def walk(obj: Any, depth: int) -> None:
        for field in dataclasses.fields(obj):
            value = getattr(obj, field.name)
            if dataclasses.is_dataclass(value) and not isinstance(value, type):
                lines.append(f"{indent * depth}{field.name}: {type(value).__name__}")
                walk(value, depth + 1)
            else:
                lines.append(f"{indent * depth}{field.name} = {value!r}")

    walk(config, 1)
    return "\n".join(lines)
