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

from typing import TYPE_CHECKING

from fpdeep.numerics import Format, Numerics, dequantise, quantise

if TYPE_CHECKING:
    from fpdeep.golden.step import (
        LayerTrace,
        StepResult,
        Trace,
        infer,
        quantise_weights,
        train_step,
        weight_formats,
    )

#: The step's names load on first use. The step walks a network through the op registry
#: (``fpdeep.ops``), and the registry calls this package's per-op modules: importing the step
#: here would make the registry's first import (the frontend's) meet itself half-built.
_STEP = ("LayerTrace", "StepResult", "Trace", "infer", "quantise_weights", "train_step",
         "weight_formats")


def __getattr__(name: str) -> object:
    if name in _STEP:
        from fpdeep.golden import step

        return getattr(step, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
