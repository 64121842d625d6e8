"""BatchNormalization: trained with batch statistics (as PyTorch's ``model.train()``) or frozen
into a fixed per-channel affine (``--bn frozen``); the numbers are in ``fpdeep.golden.batchnorm``.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from fpdeep.errors import FpdeepError
from fpdeep.golden import batchnorm as bn
from fpdeep.ir import BatchNormAttrs, Layer, Network, Op
from fpdeep.numerics import dequantise, quantise
from fpdeep.ops.spec import OpSpec, same_shape

if TYPE_CHECKING:
    from fpdeep.golden.context import StepContext

#: How a training step treats BatchNormalization: ``train`` normalises with the batch's
#: statistics and trains gamma and beta; ``frozen`` is a fixed affine of the running statistics.
BN_MODES = ("train", "frozen")


def with_batchnorm(network: Network, mode: str) -> Network:
    """``network`` with every BatchNormalization in ``mode`` (one of ``BN_MODES``)."""
    if mode not in BN_MODES:
        raise FpdeepError(f"--bn {mode!r} is not known; valid: {', '.join(BN_MODES)}")
    layers = tuple(
        replace(layer, attrs=replace(layer.attrs, frozen=mode == "frozen"))
        if layer.op is Op.BATCHNORM else layer for layer in network.layers)
    return replace(network, layers=layers)


def batchnorm_mode(network: Network) -> str:
    """The mode ``with_batchnorm`` gave ``network``'s BatchNormalizations ("train" without
    any)."""
    frozen = any(layer.op is Op.BATCHNORM and not trains(layer) for layer in network.layers)
    return "frozen" if frozen else "train"


def trains(layer: Layer) -> bool:
    """Whether a BatchNormalization uses batch statistics and trains gamma and beta."""
    return not _attrs(layer).frozen


def _attrs(layer: Layer) -> BatchNormAttrs:
    assert isinstance(layer.attrs, BatchNormAttrs)
    return layer.attrs


def pass_ops(layer: Layer) -> dict[str, int]:
    """Element operations per sample of each pass. Training: FP sums x and the squared centred
    values, normalises and applies the affine (4 per element); BP centres the error twice and
    scales it (3); WG sums e and e * xhat (2). Frozen: one multiply-add forward, one multiply
    backward, no WG."""
    n = math.prod(layer.out_shape)
    if trains(layer):
        return {"fp": 4 * n, "bp": 3 * n, "wg": 2 * n}
    return {"fp": n, "bp": n, "wg": 0}


def element_ops(layer: Layer) -> int:
    return sum(pass_ops(layer).values())


# ----- golden rules -------------------------------------------------------------------------


def _fixed_state(ctx: StepContext, layer: Layer, x: np.ndarray, p: dict):
    """``(d, var, xhat, z, k)`` of the fixed-point layer, from the batch or the running stats."""
    a = _attrs(layer)
    x_fmt = ctx.act(layer.inputs[0])
    if a.frozen:
        mean, var = running_fixed(ctx, layer, p)
        d = bn.centred(x, mean)
    else:
        bn.check_count(x, layer.name)
        _, var, d = bn.batch_statistics(x, x_fmt=x_fmt, acc_width=ctx.acc_width)
    xhat, z, k = bn.normalise(d, var, epsilon=a.epsilon, x_fmt=x_fmt)
    return xhat, z, k


def running_fixed(ctx: StepContext, layer: Layer, p: dict) -> tuple[np.ndarray, np.ndarray]:
    """The running mean and variance as the fixed-point layer reads them."""
    mean_fmt, var_fmt = bn.running_formats(ctx.act(layer.inputs[0]))
    return quantise(p["mean"], mean_fmt), quantise(p["var"], var_fmt)


def frozen_constants(ctx: StepContext, layer: Layer, p: dict) -> dict[str, np.ndarray]:
    """Per channel, every constant of a frozen BatchNormalization in fixed point (the RTL
    unit's tables): forward ``x̂ = requant(((x << G) - mean) * z, xshift)`` then the affine
    of ``gamma``, ``beta``; backward ``requant((e << h) * factor, eshift)``."""
    x_fmt = ctx.act(layer.inputs[0])
    mean, var = running_fixed(ctx, layer, p)
    z, k = bn.rsqrt_fixed(var + bn.epsilon_fixed(_attrs(layer).epsilon, x_fmt))
    gamma, beta = _fixed_affine(ctx, layer, p)
    factor, eshift = bn.error_factor(gamma, z, k, x_fmt=x_fmt, e_fmt=ctx.err(layer.output),
                                     w_fmt=ctx.fmt("weight", layer.name),
                                     out_fmt=ctx.err(layer.inputs[0]))
    return {"mean": mean, "z": z, "xshift": bn.xhat_shift(k), "gamma": gamma, "beta": beta,
            "factor": factor, "eshift": eshift}


def _fixed_affine(ctx: StepContext, layer: Layer, p: dict) -> tuple[np.ndarray, np.ndarray]:
    """gamma and beta as weight-format integers (quantised here when frozen, i.e. not trained)."""
    if trains(layer):
        return p["scale"], p["bias"]
    w_fmt = ctx.fmt("weight", layer.name)
    return quantise(p["scale"], w_fmt), quantise(p["bias"], w_fmt)


def _float_state(layer: Layer, x: np.ndarray, p: dict) -> tuple[np.ndarray, np.ndarray]:
    a = _attrs(layer)
    if a.frozen:
        mean, var = p["mean"], p["var"]
    else:
        bn.check_count(x, layer.name)
        mean, var = bn.batch_statistics_float(x)
    return bn.normalise_float(x, mean, var, a.epsilon)


def forward(ctx: StepContext, layer: Layer, ins: list, p: dict) -> np.ndarray:
    if not ctx.fixed:
        xhat, _ = _float_state(layer, ins[0], p)
        return bn.affine_float(xhat, p["scale"], p["bias"])
    xhat, _, _ = _fixed_state(ctx, layer, ins[0], p)
    gamma, beta = _fixed_affine(ctx, layer, p)
    return bn.affine(xhat, gamma, beta, w_fmt=ctx.fmt("weight", layer.name),
                     out_fmt=ctx.act(layer.output))


def backward(ctx: StepContext, layer: Layer, e: np.ndarray, ins: list, p: dict) -> tuple:
    batch_stats = trains(layer)
    if not ctx.fixed:
        xhat, inv_sigma = _float_state(layer, ins[0], p)
        return (bn.backward_float(e, xhat if batch_stats else None, p["scale"], inv_sigma),)
    xhat, z, k = _fixed_state(ctx, layer, ins[0], p)
    gamma, _ = _fixed_affine(ctx, layer, p)
    return (bn.backward(e, xhat if batch_stats else None, gamma, z, k,
                        x_fmt=ctx.act(layer.inputs[0]), e_fmt=ctx.err(layer.output),
                        w_fmt=ctx.fmt("weight", layer.name), out_fmt=ctx.err(layer.inputs[0]),
                        acc_width=ctx.acc_width),)


def weight_gradient(ctx: StepContext, layer: Layer, e: np.ndarray, x: np.ndarray) -> tuple:
    """The WG sums of gamma and beta: ``sum e * xhat`` and ``sum e``."""
    if not ctx.fixed:
        return bn.gradient_sums_float(e, _float_state(layer, x, {})[0])
    xhat, _, _ = _fixed_state(ctx, layer, x, {})
    return bn.gradient_sums(e, xhat, acc_width=ctx.acc_width)


def gradient_frac(ctx: StepContext, layer: Layer, role: str) -> int:
    e_frac = ctx.err(layer.output).frac
    return e_frac + bn.XHAT.frac if role == "scale" else e_frac


def statistics(ctx: StepContext, layer: Layer, x: np.ndarray, p: dict) -> dict:
    """The running mean and variance after the step (float64), updated with the batch's mean and
    unbiased variance; a frozen layer keeps them."""
    a = _attrs(layer)
    if a.frozen:
        return {}
    m = bn.check_count(x, layer.name)
    if not ctx.fixed:
        mean, var = bn.batch_statistics_float(x)
        return {"mean": bn.running_update_float(p["mean"], mean, momentum=a.momentum),
                "var": bn.running_update_float(p["var"], var * m / (m - 1), momentum=a.momentum)}
    x_fmt = ctx.act(layer.inputs[0])
    mean_fmt, var_fmt = bn.running_formats(x_fmt)
    mean, var, _ = bn.batch_statistics(x, x_fmt=x_fmt, acc_width=ctx.acc_width)
    new_mean = bn.running_update(quantise(p["mean"], mean_fmt), mean, momentum=a.momentum,
                                 fmt=mean_fmt)
    new_var = bn.running_update(quantise(p["var"], var_fmt), bn.unbiased(var, m),
                                momentum=a.momentum, fmt=var_fmt)
    return {"mean": dequantise(new_mean, mean_fmt), "var": dequantise(new_var, var_fmt)}


SPECS = (
    OpSpec(Op.BATCHNORM, same_shape, element_ops, trainable=("scale", "bias"),
           forward=forward, backward=backward, weight_gradient=weight_gradient, trains=trains,
           gradient_frac=gradient_frac, statistics=statistics, batch_barrier=trains),
)
