"""Element-wise layers: Relu, Add, Softmax; the numbers of those the golden model runs are in
``fpdeep.golden.relu`` and ``fpdeep.golden.add``."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from fpdeep.golden import add, relu
from fpdeep.ir import Layer, Op
from fpdeep.ops.spec import OpSpec, per_output, same_shape

if TYPE_CHECKING:
    from fpdeep.golden.context import StepContext


def relu_forward(ctx: StepContext, layer: Layer, ins: list, p: dict) -> np.ndarray:
    if not ctx.fixed:
        return relu.forward_float(ins[0])
    return relu.forward(ins[0], x_fmt=ctx.act(layer.inputs[0]), out_fmt=ctx.act(layer.output))


def relu_backward(ctx: StepContext, layer: Layer, e: np.ndarray, ins: list, p: dict) -> tuple:
    if not ctx.fixed:
        return (relu.backward_float(e, ins[0]),)
    return (relu.backward(e, ins[0], e_fmt=ctx.err(layer.output),
                          out_fmt=ctx.err(layer.inputs[0])),)


def add_forward(ctx: StepContext, layer: Layer, ins: list, p: dict) -> np.ndarray:
    if not ctx.fixed:
        return add.forward_float(ins)
    return add.forward(ins, x_fmts=[ctx.act(name) for name in layer.inputs],
                       out_fmt=ctx.act(layer.output))


def add_backward(ctx: StepContext, layer: Layer, e: np.ndarray, ins: list, p: dict) -> tuple:
    if not ctx.fixed:
        return add.backward_float(e, len(ins))
    return add.backward(e, e_fmt=ctx.err(layer.output),
                        out_fmts=[ctx.err(name) for name in layer.inputs])


def sums(layer: Layer) -> int:
    """One add per output element for every input after the first."""
    return math.prod(layer.out_shape) * (len(layer.inputs) - 1)


SPECS = (
    OpSpec(Op.RELU, same_shape, per_output(1), forward=relu_forward, backward=relu_backward),
    OpSpec(Op.ADD, same_shape, sums, forward=add_forward, backward=add_backward),
    # exp, sum, divide; the loss computes it (softmax cross-entropy)
    OpSpec(Op.SOFTMAX, same_shape, per_output(3), in_loss=True),
)
