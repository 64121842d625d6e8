"""Per-channel Scale and Bias (Mul and Add by a (C, 1, 1) or scalar initializer, the "Scale"
layers of DenseNet and Inception), trained like a weight and a bias; their numbers are in
``fpdeep.golden.affine``."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from fpdeep.golden import affine
from fpdeep.ir import Layer, Op
from fpdeep.ops.spec import OpSpec, per_output, same_shape

if TYPE_CHECKING:
    from fpdeep.golden.context import StepContext


def _size(layer: Layer, role: str) -> int:
    ref = layer.weight(role)
    assert ref is not None
    return math.prod(ref.shape)


def scale_forward(ctx: StepContext, layer: Layer, ins: list, p: dict) -> np.ndarray:
    s = p["scale"]
    if not ctx.fixed:
        return affine.scale_forward_float(ins[0], s)
    return affine.scale_forward(ins[0], s, x_fmt=ctx.act(layer.inputs[0]),
                                s_fmt=ctx.fmt("weight", layer.name), out_fmt=ctx.act(layer.output))


def scale_backward(ctx: StepContext, layer: Layer, e: np.ndarray, ins: list, p: dict) -> tuple:
    s = p["scale"]
    if not ctx.fixed:
        return (affine.scale_backward_float(e, s),)
    return (affine.scale_backward(e, s, e_fmt=ctx.err(layer.output),
                                  s_fmt=ctx.fmt("weight", layer.name),
                                  out_fmt=ctx.err(layer.inputs[0])),)


def scale_gradient(ctx: StepContext, layer: Layer, e: np.ndarray, x: np.ndarray) -> tuple:
    size = _size(layer, "scale")
    if not ctx.fixed:
        return (affine.scale_gradient_float(e, x, size),)
    return (affine.scale_gradient(e, x, size, acc_width=ctx.acc_width),)


def bias_forward(ctx: StepContext, layer: Layer, ins: list, p: dict) -> np.ndarray:
    b = p["bias"]
    if not ctx.fixed:
        return affine.bias_forward_float(ins[0], b)
    return affine.bias_forward(ins[0], b, x_fmt=ctx.act(layer.inputs[0]),
                               b_fmt=ctx.fmt("weight", layer.name), out_fmt=ctx.act(layer.output))


def bias_backward(ctx: StepContext, layer: Layer, e: np.ndarray, ins: list, p: dict) -> tuple:
    if not ctx.fixed:
        return (np.asarray(e, np.float64),)
    return (affine.bias_backward(e, e_fmt=ctx.err(layer.output),
                                 out_fmt=ctx.err(layer.inputs[0])),)


def bias_gradient(ctx: StepContext, layer: Layer, e: np.ndarray, x: np.ndarray) -> tuple:
    size = _size(layer, "bias")
    if not ctx.fixed:
        return (affine.bias_gradient_float(e, size),)
    return (affine.bias_gradient(e, size, acc_width=ctx.acc_width),)


def _error_frac(ctx: StepContext, layer: Layer, role: str) -> int:
    """A bias sums errors."""
    return ctx.err(layer.output).frac


def _error_input_frac(ctx: StepContext, layer: Layer, role: str) -> int:
    """A scale sums error times input."""
    return ctx.err(layer.output).frac + ctx.act(layer.inputs[0]).frac


SPECS = (
    OpSpec(Op.SCALE, same_shape, per_output(1), trainable=("scale",), forward=scale_forward,
           backward=scale_backward, weight_gradient=scale_gradient,
           gradient_frac=_error_input_frac),
    OpSpec(Op.BIAS, same_shape, per_output(1), trainable=("bias",), forward=bias_forward,
           backward=bias_backward, weight_gradient=bias_gradient,
           gradient_frac=_error_frac),
)
