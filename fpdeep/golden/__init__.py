"""Fixed-point golden model of a training step, and its float reference.

The numerics are specified in ``docs/numerics.md``; one module per op holds the integer
functions the RTL is checked against bit for bit, and ``train_step`` runs a whole step.
"""

from __future__ import annotations

from fpdeep.golden.numerics import Format, Numerics, dequantise, quantise
from fpdeep.golden.step import (
    LayerTrace,
    StepResult,
    Trace,
    infer,
    quantise_weights,
    train_step,
    weight_formats,
)

__all__ = [
    "Format",
    "LayerTrace",
    "Numerics",
    "StepResult",
    "Trace",
    "dequantise",
    "infer",
    "quantise",
    "quantise_weights",
    "train_step",
    "weight_formats",
]
