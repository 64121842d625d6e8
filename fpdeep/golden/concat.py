"""Concat along channels and its error split (``docs/numerics.md`` §17).

Forward: each input re-expressed in the output's activation format, then the channels laid
one after the other in input order. Backward: the output error cut at the same channel
boundaries, each part re-expressed in its input's error format.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from fpdeep.numerics import Format, as_int, convert


def bounds(channels: Sequence[int]) -> list[tuple[int, int]]:
    """[start, stop) of each input's channels in the output."""
    ends = np.cumsum([0, *channels])
    return [(int(a), int(b)) for a, b in zip(ends[:-1], ends[1:], strict=True)]


def forward(xs: Sequence[np.ndarray], *, x_fmts: Sequence[Format], out_fmt: Format) -> np.ndarray:
    return np.concatenate([convert(as_int(x, "Concat input"), f, out_fmt)
                           for x, f in zip(xs, x_fmts, strict=True)], axis=1)


def backward(e: np.ndarray, channels: Sequence[int], *, e_fmt: Format,
             out_fmts: Sequence[Format]) -> tuple[np.ndarray, ...]:
    e = as_int(e, "Concat error")
    return tuple(convert(e[:, a:b], e_fmt, f)
                 for (a, b), f in zip(bounds(channels), out_fmts, strict=True))


def forward_float(xs: Sequence[np.ndarray]) -> np.ndarray:
    return np.concatenate([np.asarray(x, np.float64) for x in xs], axis=1)


def backward_float(e: np.ndarray, channels: Sequence[int]) -> tuple[np.ndarray, ...]:
    e = np.asarray(e, np.float64)
    return tuple(e[:, a:b] for a, b in bounds(channels))
