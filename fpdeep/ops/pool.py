"""MaxPool, AveragePool and GlobalAveragePool; their numbers are in ``fpdeep.golden.pool``."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from fpdeep.golden import pool
from fpdeep.ir import Attrs, Layer, Op, PoolAttrs, Shape
from fpdeep.ops.spec import OpSpec

if TYPE_CHECKING:
    from fpdeep.golden.context import StepContext

Window = Callable[[Layer], PoolAttrs]


def out_shape(attrs: Attrs, in_shapes: Sequence[Shape], weights: Sequence[Shape]) -> Shape:
    assert isinstance(attrs, PoolAttrs)
    c, h, w = in_shapes[0]
    return (c, *pool.out_hw(attrs, (h, w)))


def global_shape(attrs: Attrs, in_shapes: Sequence[Shape], weights: Sequence[Shape]) -> Shape:
    return (in_shapes[0][0], 1, 1)


def own_window(layer: Layer) -> PoolAttrs:
    assert isinstance(layer.attrs, PoolAttrs)
    return layer.attrs


def global_window(layer: Layer) -> PoolAttrs:
    return pool.global_attrs(layer.in_shape[1:])


def window_taps(layer: Layer) -> int:
    """One compare or add per window tap of every output."""
    kh, kw = own_window(layer).kernel
    return math.prod(layer.out_shape) * kh * kw


def global_taps(layer: Layer) -> int:
    return math.prod(layer.in_shape)


def max_forward(ctx: StepContext, layer: Layer, ins: list, p: dict) -> np.ndarray:
    if not ctx.fixed:
        return pool.max_forward_float(ins[0], attrs=layer.attrs)
    return pool.max_forward(ins[0], attrs=layer.attrs, x_fmt=ctx.act(layer.inputs[0]),
                            out_fmt=ctx.act(layer.output))


def max_backward(ctx: StepContext, layer: Layer, e: np.ndarray, ins: list, p: dict) -> tuple:
    if not ctx.fixed:
        return (pool.max_backward_float(e, ins[0], attrs=layer.attrs),)
    return (pool.max_backward(e, ins[0], attrs=layer.attrs, e_fmt=ctx.err(layer.output),
                              out_fmt=ctx.err(layer.inputs[0]), acc_width=ctx.acc_width),)


def _average(window: Window) -> dict:
    """The golden rules of an average pool over ``window``."""
    def forward(ctx: StepContext, layer: Layer, ins: list, p: dict) -> np.ndarray:
        attrs = window(layer)
        if not ctx.fixed:
            return pool.avg_forward_float(ins[0], attrs=attrs)
        return pool.avg_forward(ins[0], attrs=attrs, x_fmt=ctx.act(layer.inputs[0]),
                                out_fmt=ctx.act(layer.output), acc_width=ctx.acc_width)

    def backward(ctx: StepContext, layer: Layer, e: np.ndarray, ins: list, p: dict) -> tuple:
        attrs, in_hw = window(layer), ins[0].shape[2:]
        if not ctx.fixed:
            return (pool.avg_backward_float(e, attrs=attrs, in_hw=in_hw),)
        return (pool.avg_backward(e, attrs=attrs, in_hw=in_hw, e_fmt=ctx.err(layer.output),
                                  out_fmt=ctx.err(layer.inputs[0]), acc_width=ctx.acc_width),)

    return {"forward": forward, "backward": backward, "window": window}


SPECS = (
    OpSpec(Op.MAXPOOL, out_shape, window_taps, forward=max_forward, backward=max_backward,
           window=own_window),
    OpSpec(Op.AVGPOOL, out_shape, window_taps, **_average(own_window)),
    OpSpec(Op.GLOBAL_AVGPOOL, global_shape, global_taps, **_average(global_window)),
)
