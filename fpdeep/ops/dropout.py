"""Dropout: trained with the LFSR mask and 1/(1 − p) scaling, off at inference; its numbers are
in ``fpdeep.golden.dropout``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from fpdeep.golden import dropout
from fpdeep.ir import DropoutAttrs, Layer, Op
from fpdeep.ops.spec import OpSpec, per_output, same_shape

if TYPE_CHECKING:
    from fpdeep.golden.context import StepContext


def _ratio(layer: Layer) -> float:
    assert isinstance(layer.attrs, DropoutAttrs)
    return layer.attrs.ratio


def keep_mask(ctx: StepContext, layer: Layer, shape: tuple[int, ...]) -> np.ndarray:
    """The mask of this layer in this step: the layer's place among the network's Dropouts,
    the step number and each image's index seed the LFSR."""
    index = [lay.name for lay in ctx.network.layers if lay.op is Op.DROPOUT].index(layer.name)
    return dropout.keep_mask(shape, _ratio(layer), layer=index, step=ctx.step)


def forward(ctx: StepContext, layer: Layer, ins: list, p: dict) -> np.ndarray:
    x = ins[0]
    if not ctx.training:
        if not ctx.fixed:
            return np.asarray(x, np.float64)
        return dropout.inference(x, x_fmt=ctx.act(layer.inputs[0]), out_fmt=ctx.act(layer.output))
    keep = keep_mask(ctx, layer, x.shape)
    if not ctx.fixed:
        return dropout.forward_float(x, keep, _ratio(layer))
    return dropout.forward(x, keep, _ratio(layer), x_fmt=ctx.act(layer.inputs[0]),
                           out_fmt=ctx.act(layer.output))


def backward(ctx: StepContext, layer: Layer, e: np.ndarray, ins: list, p: dict) -> tuple:
    keep = keep_mask(ctx, layer, e.shape)
    if not ctx.fixed:
        return (dropout.backward_float(e, keep, _ratio(layer)),)
    return (dropout.backward(e, keep, _ratio(layer), e_fmt=ctx.err(layer.output),
                             out_fmt=ctx.err(layer.inputs[0])),)


def refuse(layer: Layer) -> str | None:
    if not 0 <= _ratio(layer) < 1:
        return f"Dropout with ratio {_ratio(layer)}; the ratio must be in [0, 1)"
    return None


# training: one multiply per element (the mask selects, 1/(1 - p) scales)
SPECS = (OpSpec(Op.DROPOUT, same_shape, per_output(1), forward=forward, backward=backward,
                refuse=refuse),)
