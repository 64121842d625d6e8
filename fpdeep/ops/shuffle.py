"""ChannelShuffle: ShuffleNet's Reshape–Transpose–Reshape as one channel permutation; its
numbers are in ``fpdeep.golden.shuffle``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from fpdeep.golden import shuffle
from fpdeep.ir import Layer, Op, ShuffleAttrs
from fpdeep.ops.spec import OpSpec, no_element_ops, same_shape

if TYPE_CHECKING:
    from fpdeep.golden.context import StepContext


def _groups(layer: Layer) -> int:
    assert isinstance(layer.attrs, ShuffleAttrs)
    return layer.attrs.groups


def forward(ctx: StepContext, layer: Layer, ins: list, p: dict) -> np.ndarray:
    if not ctx.fixed:
        return shuffle.forward_float(ins[0], _groups(layer))
    return shuffle.forward(ins[0], _groups(layer), x_fmt=ctx.act(layer.inputs[0]),
                           out_fmt=ctx.act(layer.output))


def backward(ctx: StepContext, layer: Layer, e: np.ndarray, ins: list, p: dict) -> tuple:
    if not ctx.fixed:
        return (shuffle.backward_float(e, _groups(layer)),)
    return (shuffle.backward(e, _groups(layer), e_fmt=ctx.err(layer.output),
                             out_fmt=ctx.err(layer.inputs[0])),)


SPECS = (OpSpec(Op.CHANNEL_SHUFFLE, same_shape, no_element_ops, forward=forward,
                backward=backward),)
