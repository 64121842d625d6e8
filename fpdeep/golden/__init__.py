"""Fixed-point golden model of a training step, and its float reference.

The numerics are specified in ``docs/numerics.md``; one module per op holds the integer
functions the RTL is checked against bit for bit, and ``train_step`` runs a whole step.
"""

from __future__ import annotations

from fpdeep.golden.numerics import Format, Numerics, dequantise, quantise
from fpdeep.golden.step import LayerTrace, StepResult, Trace, infer, train_step

__all__ = [
    "Format",
    "LayerTrace",
    "Numerics",
    "StepResult",
    "Trace",
    "dequantise",
    "infer",
    "quantise",
    "train_step",
]
