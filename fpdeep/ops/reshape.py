"""Data movement: Flatten and Identity (views of a tensor); the golden model's views are
``fpdeep.golden.flatten``."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from fpdeep.golden import flatten
from fpdeep.ir import Attrs, Layer, Op, Shape
from fpdeep.ops.spec import OpSpec, no_element_ops

if TYPE_CHECKING:
    from fpdeep.golden.context import StepContext


def flat_shape(attrs: Attrs, in_shapes: Sequence[Shape], weights: Sequence[Shape]) -> Shape:
    return (math.prod(in_shapes[0]),)


def view_forward(ctx: StepContext, layer: Layer, ins: list, p: dict) -> np.ndarray:
    """The same elements in C order, reshaped to the layer's output."""
    x = ins[0]
    if not ctx.fixed:
        return flatten.forward_float(x).reshape(x.shape[0], *layer.out_shape)
    out = flatten.forward(x, x_fmt=ctx.act(layer.inputs[0]), out_fmt=ctx.act(layer.output))
    return out.reshape(x.shape[0], *layer.out_shape)


def view_backward(ctx: StepContext, layer: Layer, e: np.ndarray, ins: list, p: dict) -> tuple:
    in_shape = ins[0].shape[1:]
    if not ctx.fixed:
        return (flatten.backward_float(e, in_shape=in_shape),)
    return (flatten.backward(e, in_shape=in_shape, e_fmt=ctx.err(layer.output),
                             out_fmt=ctx.err(layer.inputs[0])),)


SPECS = (
    OpSpec(Op.FLATTEN, flat_shape, no_element_ops, forward=view_forward, backward=view_backward,
           view=True),
    # a Reshape, Squeeze or no-op Transpose: the model gives the shape
    OpSpec(Op.IDENTITY, None, no_element_ops, forward=view_forward, backward=view_backward,
           view=True),
)
