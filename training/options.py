"""Config dataclasses → command-line options and config files, with one set of checks.

A field's help text, bounds and choices live once in its metadata (`option(...)`); the
argparse options, the TOML/YAML config file keys and the range checks are all derived from
it. Precedence: command line, then the config file, then the field's default.
"""

from __future__ import annotations

import argparse
import dataclasses
import tomllib
import types
import typing
from pathlib import Path
from typing import Any

from training.errors import UsageError

REQUIRED = dataclasses.MISSING


def option(default: Any = REQUIRED, help: str = "", *, low: float | None = None,  # noqa: A002
           high: float | None = None, choices: tuple[Any, ...] | None = None,
           positional: bool = False) -> Any:
    """A config field: its default (none: required), help text, and the values it accepts."""
    meta = {"help": help, "low": low, "high": high, "choices": choices, "positional": positional}
    if default is REQUIRED:
        return dataclasses.field(metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def _base_type(cls: type, name: str) -> tuple[type, bool]:
    """(the field's scalar type, whether None is allowed)."""
    hint = typing.get_type_hints(cls)[name]
    args = typing.get_args(hint)
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        return inner[0], True
    return hint, False


def flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def add_fields(parser: argparse.ArgumentParser, cls: type, skip: frozenset[str] = frozenset(),
               seen: set[str] | None = None) -> None:
    """One option per field of `cls` (all defaulting to 'not given', so a config file can fill
    them); `seen` names options already added by another dataclass (a `run` shares them)."""
    for f in dataclasses.fields(cls):
        if f.name in skip or (seen is not None and f.name in seen):
            continue
        if seen is not None:
            seen.add(f.name)
        kind, _ = _base_type(cls, f.name)
        meta = f.metadata
        required = f.default is REQUIRED
        text = meta["help"]
        if required:
            text += " (required)"
        elif f.default is not None:  # None: not set unless given
            text += f" (default: {f.default})"
        if meta["choices"]:
            text += f"; one of {', '.join(map(str, meta['choices']))}"
        if meta["positional"]:
            parser.add_argument(f.name, metavar=f.name.upper(), help=text, nargs="?",
                                default=argparse.SUPPRESS)
        elif kind is bool:
            parser.add_argument(flag(f.name), dest=f.name, action=argparse.BooleanOptionalAction,
                                help=text, default=argparse.SUPPRESS)
        else:
            # Values arrive as text and are checked in `build`, with the config file's.
            parser.add_argument(flag(f.name), dest=f.name, metavar=f.name.split("_")[-1].upper(),
                                help=text, default=argparse.SUPPRESS)


def read_config_file(path: str) -> dict[str, Any]:
    """A TOML (`.toml`) or YAML (`.yaml`, `.yml`) mapping of option names to values."""
    file = Path(path)
    if not file.is_file():
        raise UsageError(f"--config {path}: no such file")
    try:
        if file.suffix == ".toml":
            data = tomllib.loads(file.read_text())
        elif file.suffix in (".yaml", ".yml"):
            import yaml

            data = yaml.safe_load(file.read_text()) or {}
        else:
            raise UsageError(f"--config {path}: use a .toml, .yaml or .yml file")
    except (tomllib.TOMLDecodeError, ValueError) as exc:
        raise UsageError(f"--config {path} is not valid: {exc}") from None
    except ImportError:
        raise UsageError("YAML config files need PyYAML (pip install pyyaml)") from None
    if not isinstance(data, dict):
        raise UsageError(f"--config {path} must hold a mapping of option names to values")
    return {str(k).replace("-", "_"): v for k, v in data.items()}


def _convert(cls: type, f: dataclasses.Field, value: Any) -> Any:
    kind, optional = _base_type(cls, f.name)
    where = flag(f.name)
    if value is None or (optional and isinstance(value, str) and value.lower() in ("", "none")):
        if optional:
            return None
        raise UsageError(f"{where} needs a value")
    try:
        if kind is bool:
            if isinstance(value, str) and value.lower() in ("true", "false", "yes", "no"):
                value = value.lower() in ("true", "yes")
            if not isinstance(value, bool):
                raise ValueError
        elif kind is int:
            if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                raise ValueError
            value = int(value)
        elif kind is float:
            if isinstance(value, bool):
                raise ValueError
            value = float(value)
        elif kind is str:
            value = str(value)
    except (TypeError, ValueError):
        raise UsageError(f"{where}: {value!r} is not a {kind.__name__}") from None
    meta = f.metadata
    if meta["choices"] and value not in meta["choices"]:
        raise UsageError(f"{where}: {value!r} is not one of {', '.join(map(str, meta['choices']))}")
    if meta["low"] is not None and value < meta["low"]:
        raise UsageError(f"{where} must be at least {meta['low']} (got {value})")
    if meta["high"] is not None and value > meta["high"]:
        raise UsageError(f"{where} must be at most {meta['high']} (got {value})")
    if kind is float and value != value:  # NaN passes every comparison above
        raise UsageError(f"{where} must be a number (got {value})")
    return value


def build(cls: type, values: dict[str, Any], *, strict: bool = True) -> Any:
    """`cls(**values)` after type, range and required checks. Unknown keys are an error when
    `strict` (a config file's typo should not be ignored)."""
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(values) - set(fields))
    if unknown and strict:
        raise UsageError(f"unknown option(s): {', '.join(flag(u) for u in unknown)}")
    kwargs = {}
    for name, f in fields.items():
        if name in values:
            kwargs[name] = _convert(cls, f, values[name])
        elif f.default is REQUIRED:
            where = name.upper() if f.metadata["positional"] else flag(name)
            raise UsageError(f"{where} is required (on the command line or in --config)")
    config = cls(**kwargs)
    check = getattr(config, "check", None)
    if check is not None:
        check()
    return config
