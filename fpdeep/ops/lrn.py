"""LRN across channels (AlexNet, ZFNet, GoogLeNet), ONNX semantics; its numbers are in
``fpdeep.golden.lrn``."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from fpdeep.golden import lrn
from fpdeep.ir import Layer, LRNAttrs, Op
from fpdeep.ops.spec import OpSpec, same_shape

if TYPE_CHECKING:
    from fpdeep.golden.context import StepContext


def _attrs(layer: Layer) -> LRNAttrs:
    assert isinstance(layer.attrs, LRNAttrs)
    return layer.attrs


def element_ops(layer: Layer) -> int:
    """The window's sum of squares, a power and a multiply per output element."""
    return math.prod(layer.out_shape) * (_attrs(layer).size + 2)


def forward(ctx: StepContext, layer: Layer, ins: list, p: dict) -> np.ndarray:
    if not ctx.fixed:
        return lrn.forward_float(ins[0], _attrs(layer))
    return lrn.forward(ins[0], attrs=_attrs(layer), x_fmt=ctx.act(layer.inputs[0]),
                       out_fmt=ctx.act(layer.output))


def backward(ctx: StepContext, layer: Layer, e: np.ndarray, ins: list, p: dict) -> tuple:
    if not ctx.fixed:
        return (lrn.backward_float(e, ins[0], _attrs(layer)),)
    return (lrn.backward(e, ins[0], attrs=_attrs(layer), x_fmt=ctx.act(layer.inputs[0]),
                         e_fmt=ctx.err(layer.output), out_fmt=ctx.err(layer.inputs[0])),)


def refuse(layer: Layer) -> str | None:
    return lrn.check(_attrs(layer))


SPECS = (OpSpec(Op.LRN, same_shape, element_ops, forward=forward, backward=backward,
                refuse=refuse),)
