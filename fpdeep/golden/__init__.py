"""Fixed-point golden model of a training step, and its float reference.

The numerics are specified in ``docs/numerics.md``; one module per op (``conv``, ``fc``,
``relu``, ``pool``, ``add``, ``flatten``, ``loss``, ``sgd``) holds the integer functions the
RTL is checked against bit for bit, and ``train_step`` runs a whole step::

    net = fpdeep.load_onnx("model.onnx")
    res = train_step(net, dict(net.params), x, y, lr=0.05)   # fixed point, default formats
    res.trace["conv1"].output          # int64 activations of layer conv1, (B, C, H, W)
    res.trace["conv1"].accumulators    # 48-bit WG batch sums keyed by initializer name
    ref = train_step(net, dict(net.params), x, y, lr=0.05, numerics="float")
"""

from __future__ import annotations

from fpdeep.golden.step import (
    LayerTrace,
    StepResult,
    Trace,
    infer,
    quantise_weights,
    train_step,
    weight_formats,
)
from fpdeep.numerics import Format, Numerics, dequantise, quantise

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
