"""Stage outputs to and from JSON: frozen dataclasses written field by field and read back by
their type hints, so a file round-trips exactly what the typed object holds.

Supported field types: dataclasses, ``tuple[X, ...]``, ``tuple[X, Y]``, ``list[X]``,
``dict``/``Mapping[str, X]``, ``X | None``, enums, ``int``/``float``/``str``/``bool`` and
``Any`` (plain JSON data).
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from collections.abc import Mapping
from functools import cache
from typing import Any, TypeVar

T = TypeVar("T")


class FormatError(ValueError):
    """The data does not have the shape of the type it is read as (path says where)."""


def to_data(value: Any) -> Any:
    """``value`` as JSON data: dataclasses become objects of their fields."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_data(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, Mapping):
        return {str(k): to_data(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return [to_data(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def from_data(kind: Any, data: Any, path: str = "$") -> Any:
    """``data`` read back as type ``kind``; FormatError naming the path where it does not fit."""
    origin = typing.get_origin(kind)
    args = typing.get_args(kind)
    if kind is Any:
        return data
    if origin in (typing.Union, types.UnionType):
        if data is None and type(None) in args:
            return None
        rest = [a for a in args if a is not type(None)]
        for option in rest:
            try:
                return from_data(option, data, path)
            except FormatError:
                continue
        raise FormatError(f"{path}: {data!r} is none of {kind}")
    if dataclasses.is_dataclass(kind):
        if not isinstance(data, dict):
            raise FormatError(f"{path}: expected an object for {kind.__name__}")
        hints = _hints(kind)
        values = {}
        for f in dataclasses.fields(kind):
            if not f.init:
                continue
            if f.name not in data:
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                    raise FormatError(f"{path}.{f.name}: missing")
                continue
            values[f.name] = from_data(hints[f.name], data[f.name], f"{path}.{f.name}")
        return kind(**values)
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        try:
            return kind(data)
        except ValueError:
            raise FormatError(f"{path}: {data!r} is not a {kind.__name__}") from None
    if origin in (tuple, list):
        if not isinstance(data, list):
            raise FormatError(f"{path}: expected a list")
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            if len(args) != len(data):
                raise FormatError(f"{path}: expected {len(args)} items, got {len(data)}")
            return tuple(from_data(a, d, f"{path}[{i}]")
                         for i, (a, d) in enumerate(zip(args, data, strict=True)))
        item = args[0] if args else Any
        items = [from_data(item, d, f"{path}[{i}]") for i, d in enumerate(data)]
        return tuple(items) if origin is tuple else items
    if origin in _MAPPINGS or kind in _MAPPINGS:
        if not isinstance(data, dict):
            raise FormatError(f"{path}: expected an object")
        key, value = args if len(args) == 2 else (str, Any)
        read = {_key(key, k, path): from_data(value, v, f"{path}.{k}") for k, v in data.items()}
        # a Mapping field is read-only, as the frozen object it came from
        return read if (origin or kind) is dict else types.MappingProxyType(read)
    if kind is float:
        if isinstance(data, bool) or not isinstance(data, (int, float)):
            raise FormatError(f"{path}: expected a number, got {data!r}")
        return float(data)
    if kind in (int, str, bool):
        if type(data) is not kind:
            raise FormatError(f"{path}: expected {kind.__name__}, got {data!r}")
        return data
    raise TypeError(f"{path}: cannot read type {kind!r}")


_MAPPINGS = (dict, Mapping, types.MappingProxyType)


def _key(kind: Any, text: str, path: str) -> Any:
    """A mapping key back from its JSON string (JSON keys are strings; ints come back)."""
    if kind is int:
        try:
            return int(text)
        except ValueError:
            raise FormatError(f"{path}: key {text!r} is not an integer") from None
    return text


class Serial:
    """Mixin for a frozen dataclass: ``to_json()`` and ``cls.from_json(data)``."""

    def to_json(self) -> dict[str, Any]:
        return to_data(self)

    @classmethod
    def from_json(cls: type[T], data: Any) -> T:
        return from_data(cls, data)
