"""Plain-text tables for terminal reports."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from fpdeep.errors import FpdeepError

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]<>()#+\-.!|~])")


def printable(text: str, *, newlines: bool = False) -> str:
    """``text`` safe for a terminal: control characters (ESC sequences, carriage returns...)
    shown as escapes, so a name from a model can never drive the user's terminal."""
    def show(c: str) -> str:
        if newlines and c == "\n":
            return c
        if unicodedata.category(c).startswith("C"):
            return c.encode("unicode_escape").decode("ascii")
        return c

    return "".join(map(show, text))


def markdown_text(text: str) -> str:
    """``text`` as literal Markdown: printable, one line, every markup character escaped."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", printable(text))


def format_count(value: int | float) -> str:
    """1234567 -> '1.23M': compact and still exact enough to compare layers at a glance."""
    for limit, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= limit:
            return f"{value / limit:.2f}{suffix}"
    return f"{value:g}" if isinstance(value, float) else str(value)


def shorten(text: str, width: int) -> str:
    """Keep the start and the end of a long name, which are what tell layers apart."""
    text = printable(text)
    if len(text) <= width:
        return text
    keep = width - 1
    return text[: keep // 2] + "…" + text[-(keep - keep // 2):]


def format_table(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    right: Sequence[bool] | None = None,
    footer: Sequence[str] | None = None,
) -> str:
    """Columns padded to their widest cell; ``right`` marks right-aligned (numeric) columns."""
    right = list(right) if right is not None else [False] * len(headers)
    rows = [[printable(cell) for cell in row] for row in rows]
    body = [list(headers), *rows] + ([list(footer)] if footer else [])
    widths = [max(len(row[i]) for row in body) for i in range(len(headers))]

    def line(row: Sequence[str]) -> str:
        cells = [
            cell.rjust(width) if align else cell.ljust(width)
            for cell, width, align in zip(row, widths, right, strict=True)
        ]
        return "  ".join(cells).rstrip()

    rule = "  ".join("-" * w for w in widths)
    out = [line(headers), rule, *(line(r) for r in rows)]
    if footer:
        out += [rule, line(footer)]
    return "\n".join(out)


def replace_part(text: str, begin: str, end: str, part: str, *, where: str) -> str:
    """``text`` with its generated part, from marker ``begin`` through marker ``end``,
    replaced by ``part`` (markers included); FpdeepError naming ``where`` unless each marker
    is there once, ``begin`` first."""
    if text.count(begin) != 1 or text.count(end) != 1 or text.index(begin) > text.index(end):
        raise FpdeepError(f"{where} must hold the markers {begin!r} and then {end!r}, once "
                          f"each")
    head, rest = text.split(begin)
    _, tail = rest.split(end)
    return head + part + tail
