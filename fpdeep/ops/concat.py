"""Concat along channels: a multi-input layer like the residual Add, its error split back to
the inputs; its numbers are in ``fpdeep.golden.concat``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from fpdeep.golden import concat
from fpdeep.ir import Attrs, Layer, Op, Shape
from fpdeep.ops.spec import OpSpec, no_element_ops

if TYPE_CHECKING:
    from fpdeep.golden.context import StepContext


def out_shape(attrs: Attrs, in_shapes: Sequence[Shape], weights: Sequence[Shape]) -> Shape:
    return (sum(s[0] for s in in_shapes), *in_shapes[0][1:])


def forward(ctx: StepContext, layer: Layer, ins: list, p: dict) -> np.ndarray:
    if not ctx.fixed:
        return concat.forward_float(ins)
    return concat.forward(ins, x_fmts=[ctx.act(name) for name in layer.inputs],
                          out_fmt=ctx.act(layer.output))


def backward(ctx: StepContext, layer: Layer, e: np.ndarray, ins: list, p: dict) -> tuple:
    channels = [s[0] for s in layer.in_shapes]
    if not ctx.fixed:
        return concat.backward_float(e, channels)
    return concat.backward(e, channels, e_fmt=ctx.err(layer.output),
                           out_fmts=[ctx.err(name) for name in layer.inputs])


SPECS = (OpSpec(Op.CONCAT, out_shape, no_element_ops, forward=forward, backward=backward),)
