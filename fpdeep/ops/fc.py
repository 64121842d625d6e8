"""FC (Gemm, MatMul): a compute layer, the 1x1 convolution of a 1x1 map (DESIGN §3); its numbers
are in ``fpdeep.golden.fc``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from fpdeep.golden import fc
from fpdeep.ir import Attrs, ConvAttrs, FCAttrs, Layer, Op, Shape
from fpdeep.ops.conv import bias_adds
from fpdeep.ops.spec import LoopNest, OpSpec

if TYPE_CHECKING:
    from fpdeep.golden.context import StepContext


def out_shape(attrs: Attrs, in_shapes: Sequence[Shape], weights: Sequence[Shape]) -> Shape:
    assert isinstance(attrs, FCAttrs)
    return (attrs.out_features,)


def nest(layer: Layer) -> LoopNest:
    assert isinstance(layer.attrs, FCAttrs)
    return LoopNest(ConvAttrs(kernel=(1, 1)), (layer.attrs.in_features, 1, 1),
                    (layer.attrs.out_features, 1, 1))


def refuse(layer: Layer) -> str | None:
    assert isinstance(layer.attrs, FCAttrs)
    if (layer.attrs.alpha, layer.attrs.beta) != (1, 1):
        return "Gemm with alpha/beta other than 1"
    return None


def stored_transposed(layer: Layer, role: str) -> bool:
    """Whether the initializer of parameter ``role`` is stored (in, out): the transpose of the
    (out, in) layout the golden model and the engines compute with (Gemm transB=0, MatMul)."""
    return role == "weight" and isinstance(layer.attrs, FCAttrs) and not layer.attrs.weight_out_in


def forward(ctx: StepContext, layer: Layer, ins: list, p: dict) -> np.ndarray:
    x = ins[0].reshape(ins[0].shape[0], -1)
    if not ctx.fixed:
        return fc.forward_float(x, p["weight"], p.get("bias"))
    return fc.forward(x, p["weight"], p.get("bias"), x_fmt=ctx.act(layer.inputs[0]),
                      w_fmt=ctx.fmt("weight", layer.name), out_fmt=ctx.act(layer.output),
                      acc_width=ctx.acc_width)


def backward(ctx: StepContext, layer: Layer, e: np.ndarray, ins: list, p: dict) -> tuple:
    if not ctx.fixed:
        dx = fc.backward_float(e, p["weight"])
    else:
        dx = fc.backward(e, p["weight"], e_fmt=ctx.err(layer.output),
                         w_fmt=ctx.fmt("weight", layer.name), out_fmt=ctx.err(layer.inputs[0]),
                         acc_width=ctx.acc_width)
    return (dx.reshape(ins[0].shape),)


def weight_gradient(ctx: StepContext, layer: Layer, e: np.ndarray, x: np.ndarray) -> tuple:
    x = x.reshape(x.shape[0], -1)
    if not ctx.fixed:
        return fc.weight_gradient_float(e, x)
    return fc.weight_gradient(e, x, acc_width=ctx.acc_width)


SPECS = (
    OpSpec(Op.FC, out_shape, bias_adds, nest=nest, trainable=("weight", "bias"),
           forward=forward, backward=backward, weight_gradient=weight_gradient, refuse=refuse),
)
