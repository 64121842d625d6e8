"""Plain-text tables for terminal reports."""

from __future__ import annotations

from collections.abc import Sequence


def format_count(value: int | float) -> str:
    """1234567 -> '1.23M': compact and still exact enough to compare layers at a glance."""
    for limit, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= limit:
            return f"{value / limit:.2f}{suffix}"
    return f"{value:g}" if isinstance(value, float) else str(value)


def shorten(text: str, width: int) -> str:
    """Keep the start and the end of a long name, which are what tell layers apart."""
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
    body = [list(headers), *map(list, rows)] + ([list(footer)] if footer else [])
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
