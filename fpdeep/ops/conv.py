"""Conv: a compute layer (DESIGN §3); its numbers are in ``fpdeep.golden.conv``."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from fpdeep.golden import conv
from fpdeep.ir import Attrs, ConvAttrs, Layer, Op, Shape
from fpdeep.ops.spec import LoopNest, OpSpec

if TYPE_CHECKING:
    from fpdeep.golden.context import StepContext


def out_shape(attrs: Attrs, in_shapes: Sequence[Shape], weights: Sequence[Shape]) -> Shape:
    """(Co, Ho, Wo): Co from the weight (Co, Ci/g, Kh, Kw), Ho and Wo by the window rule."""
    assert isinstance(attrs, ConvAttrs)
    return (weights[0][0], *conv.out_hw(attrs, tuple(in_shapes[0][1:])))


def nest(layer: Layer) -> LoopNest:
    assert isinstance(layer.attrs, ConvAttrs)
    return LoopNest(layer.attrs, layer.in_shape, layer.out_shape)


def bias_adds(layer: Layer) -> int:
    return math.prod(layer.out_shape) if layer.weight("bias") is not None else 0


def forward(ctx: StepContext, layer: Layer, ins: list, p: dict) -> np.ndarray:
    if not ctx.fixed:
        return conv.forward_float(ins[0], p["weight"], p.get("bias"), attrs=layer.attrs)
    return conv.forward(ins[0], p["weight"], p.get("bias"), attrs=layer.attrs,
                        x_fmt=ctx.act(layer.inputs[0]), w_fmt=ctx.fmt("weight", layer.name),
                        out_fmt=ctx.act(layer.output), acc_width=ctx.acc_width)


def backward(ctx: StepContext, layer: Layer, e: np.ndarray, ins: list, p: dict) -> tuple:
    in_hw = ins[0].shape[2:]
    if not ctx.fixed:
        return (conv.backward_float(e, p["weight"], attrs=layer.attrs, in_hw=in_hw),)
    return (conv.backward(e, p["weight"], attrs=layer.attrs, in_hw=in_hw,
                          e_fmt=ctx.err(layer.output), w_fmt=ctx.fmt("weight", layer.name),
                          out_fmt=ctx.err(layer.inputs[0]), acc_width=ctx.acc_width),)


def weight_gradient(ctx: StepContext, layer: Layer, e: np.ndarray, x: np.ndarray) -> tuple:
    if not ctx.fixed:
        return conv.weight_gradient_float(e, x, attrs=layer.attrs)
    return conv.weight_gradient(e, x, attrs=layer.attrs, acc_width=ctx.acc_width)


SPECS = (
    OpSpec(Op.CONV, out_shape, bias_adds, nest=nest, trainable=("weight", "bias"),
           forward=forward, backward=backward, weight_gradient=weight_gradient),
)
