"""Fixed-point golden model of a training step, and its float reference.

The numerics are specified in ``docs/numerics.md``; one module per op holds the integer
functions the RTL is checked against bit for bit.
"""

from __future__ import annotations

from fpdeep.golden.numerics import Format, Numerics

__all__ = ["Format", "Numerics"]
