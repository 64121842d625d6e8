"""One synchronous mini-batch SGD step over a Network: fixed point (golden) or float reference.

Walks ``network.layers`` in topological order for FP, in reverse for BP and WG, then updates
every Conv/FC weight and bias once. Both modes share this walk; each op module supplies the
integer and the float arithmetic. See ``docs/numerics.md`` for the fixed-point definitions.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

from fpdeep.errors import FpdeepError
from fpdeep.golden import add, conv, fc, flatten, pool, relu, sgd
from fpdeep.golden import loss as loss_ops
from fpdeep.ir import FCAttrs, Layer, Network, Op, WeightRef
from fpdeep.numerics import Format, Numerics, dequantise, quantise

#: Ops the step can run; everything else is refused up front with the layers named.
SUPPORTED_OPS = frozenset(
    {Op.CONV, Op.FC, Op.RELU, Op.MAXPOOL, Op.AVGPOOL, Op.GLOBAL_AVGPOOL, Op.ADD, Op.FLATTEN,
     Op.IDENTITY, Op.SOFTMAX}
)
TRAINABLE_ROLES = ("weight", "bias")
DEFAULT_NUMERICS = Numerics()


@dataclass(frozen=True)
class LayerTrace:
    """Every tensor of one layer in one step: integers in fixed point, float64 in float mode.

    ``output_error`` is the error on the layer's output after fan-in; ``input_errors`` are
    this layer's contributions to its inputs' errors (None where no error is needed);
    ``accumulators`` are the WG batch sums, ``gradients`` the batch means, ``weights`` and
    ``new_weights`` the parameters before and after the update, keyed by initializer name
    and in the initializer's layout. ``formats`` holds the layer's ``act``/``err``/
    ``weight``/``grad`` formats (empty in float).
    """

    layer: str
    output: np.ndarray
    output_error: np.ndarray | None = None
    input_errors: tuple[np.ndarray | None, ...] = ()
    accumulators: Mapping[str, np.ndarray] = field(default_factory=dict)
    gradients: Mapping[str, np.ndarray] = field(default_factory=dict)
    weights: Mapping[str, np.ndarray] = field(default_factory=dict)
    new_weights: Mapping[str, np.ndarray] = field(default_factory=dict)
    formats: Mapping[str, Format] = field(default_factory=dict)


@dataclass(frozen=True)
class Trace(Mapping[str, LayerTrace]):
    """Per-layer traces keyed by layer name, plus the input and the loss stage."""

    layers: Mapping[str, LayerTrace]
    input: np.ndarray
    logits: np.ndarray  # (B, N)
    probabilities: np.ndarray | None  # softmax_ce only; err-format integers in fixed point
    loss_error: np.ndarray  # error at the logits (B, N)
    fixed: bool

    def __getitem__(self, name: str) -> LayerTrace:
        return self.layers[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.layers)

    def __len__(self) -> int:
        return len(self.layers)


@dataclass(frozen=True)
class StepResult:
    weights: dict[str, np.ndarray]  # float64, keyed by ONNX initializer name
    loss: float  # batch mean, before the update
    trace: Trace


def train_step(network: Network, weights: Mapping[str, np.ndarray], x: np.ndarray,
               y: np.ndarray, *, lr: float, numerics: Numerics | str = DEFAULT_NUMERICS,
               loss: str = "softmax_ce") -> StepResult:
    """One SGD step on the batch ``x`` (B, C, H, W) float, ``y`` (B,) int labels.

    ``numerics`` is a ``Numerics`` for the fixed-point golden model or ``"float"`` for the
    float64 reference. ``loss`` is ``"softmax_ce"`` or ``"mse"`` (against one-hot labels).
    """
    ctx = StepContext.make(network, numerics, loss)
    sgd.lr_constant(lr)
    xb, yb = _check_batch(network, x, y)
    logits_name = logits_tensor(network, loss)
    params = load_params(network, weights, ctx)
    needs = needs_error(network)

    acts = _forward(ctx, params, xb)
    z = acts[logits_name]
    zb = z.reshape(z.shape[0], -1)
    n_out = zb.shape[1]
    if np.any(yb >= n_out):
        raise FpdeepError(f"labels y must be in 0..{n_out - 1} for {n_out} outputs")
    e_logits, probs = ctx.loss_error(zb, yb, logits_name)
    loss_value = loss_ops.loss_value(ctx.to_float(zb, ctx.act(logits_name)), yb, ctx.loss)

    contributions: dict[str, list[np.ndarray]] = {logits_name: [e_logits.reshape(z.shape)]}
    traces: dict[str, LayerTrace] = {}
    new_weights: dict[str, np.ndarray] = {}
    for layer in reversed(network.layers):
        if layer.op is Op.SOFTMAX:
            continue
        ins = [acts[name] for name in layer.inputs]
        p = params.get(layer.name, {})
        e_out = None
        if needs.get(layer.output, False):
            parts = contributions.get(layer.output) or [np.zeros_like(acts[layer.output])]
            e_out = ctx.fan_in(parts, layer.output)
        in_errors: tuple[np.ndarray | None, ...] = (None,) * len(ins)
        if e_out is not None and any(needs.get(name, False) for name in layer.inputs):
            in_errors = BACKWARD[layer.op](ctx, layer, e_out, ins, p)
            for name, err in zip(layer.inputs, in_errors, strict=True):
                if needs.get(name, False):
                    contributions.setdefault(name, []).append(err)
        accs, grads, updated = {}, {}, {}
        if layer.is_compute:
            accs, grads, updated = _weight_update(ctx, layer, e_out, ins[0], p, lr)
            new_weights.update(updated)
        traces[layer.name] = LayerTrace(
            layer=layer.name, output=acts[layer.output], output_error=e_out,
            input_errors=in_errors, accumulators=accs, gradients=grads,
            weights={ref.name: _store_layout(layer, ref, p[ref.role])
                     for ref in trainable_refs(layer)},
            new_weights=updated, formats=ctx.formats_of(layer),
        )

    ordered = {layer.name: traces[layer.name] for layer in network.layers if layer.name in traces}
    trace = Trace(layers=MappingProxyType(ordered), input=acts[network.input_name], logits=zb,
                  probabilities=probs, loss_error=e_logits, fixed=ctx.fixed)
    out = {name: np.asarray(value, np.float64) for name, value in weights.items()}
    for layer in network.compute_layers:
        for ref in trainable_refs(layer):
            out[ref.name] = ctx.to_float(new_weights[ref.name], ctx.fmt("weight", layer.name))
    return StepResult(weights=out, loss=loss_value, trace=trace)


def infer(network: Network, weights: Mapping[str, np.ndarray], x: np.ndarray, *,
          numerics: Numerics | str = DEFAULT_NUMERICS) -> np.ndarray:
    """Forward pass only: the (dequantised) outputs before any final Softmax, (B, N)."""
    ctx = StepContext.make(network, numerics, "softmax_ce")
    xb, _ = _check_batch(network, x, np.zeros(len(np.asarray(x)), dtype=np.int64))
    acts = _forward(ctx, load_params(network, weights, ctx), xb)
    name = logits_tensor(network, "softmax_ce")
    z = ctx.to_float(acts[name], ctx.act(name))
    return z.reshape(z.shape[0], -1)


def weight_formats(network: Network,
                   numerics: Numerics = DEFAULT_NUMERICS) -> dict[str, Format]:
    """The format of every trainable parameter, keyed by initializer name."""
    return {ref.name: numerics.fmt("weight", layer.name)
            for layer in network.compute_layers for ref in trainable_refs(layer)}


def quantise_weights(network: Network, weights: Mapping[str, np.ndarray],
                     numerics: Numerics = DEFAULT_NUMERICS) -> dict[str, np.ndarray]:
    """Float parameters to the integers the hardware loads (initializer layout)."""
    return {name: quantise(weights[name], fmt)
            for name, fmt in weight_formats(network, numerics).items()}


def _forward(ctx: StepContext, params: dict, xb: np.ndarray) -> dict[str, np.ndarray]:
    """Activations of every tensor, keyed by tensor name (the final Softmax is skipped: it is
    part of the loss)."""
    acts: dict[str, np.ndarray] = {ctx.network.input_name: ctx.input(xb)}
    for layer in ctx.network.layers:
        if layer.op is not Op.SOFTMAX:
            ins = [acts[name] for name in layer.inputs]
            out = FORWARD[layer.op](ctx, layer, ins, params.get(layer.name, {}))
            if tuple(out.shape[1:]) != tuple(layer.out_shape):
                raise FpdeepError(
                    f"layer {layer.name} ({layer.op}) computes per-sample shape "
                    f"{tuple(out.shape[1:])} but the network declares {tuple(layer.out_shape)}; "
                    "the golden model and the frontend disagree on this layer's geometry"
                )
            acts[layer.output] = out
    return acts


# ----------------------------------------------------------------------------- context


@dataclass(frozen=True)
class StepContext:
    """Which arithmetic (fixed or float) and which format each tensor has."""

    network: Network
    numerics: Numerics | None  # None: float reference
    loss: str

    @staticmethod
    def make(network: Network, numerics: Numerics | str, loss_kind: str) -> StepContext:
        if not isinstance(network, Network):
            raise FpdeepError(
                f"train_step needs a Network (from fpdeep.load_onnx), got {type(network).__name__}"
            )
        if loss_kind not in loss_ops.LOSSES:
            raise FpdeepError(
                f"loss={loss_kind!r} is not valid; choose one of " + ", ".join(loss_ops.LOSSES)
            )
        if isinstance(numerics, str):
            if numerics != "float":
                raise FpdeepError(
                    f"numerics={numerics!r} is not valid: give a Numerics or the string 'float'"
                )
            numerics_obj = None
        elif isinstance(numerics, Numerics):
            numerics_obj = numerics
        else:
            raise FpdeepError(
                f"numerics must be a Numerics or 'float', got {type(numerics).__name__}"
            )
        _check_supported(network)
        return StepContext(network, numerics_obj, loss_kind)

    @property
    def fixed(self) -> bool:
        return self.numerics is not None

    @property
    def acc_width(self) -> int:
        return self.numerics.acc_width if self.numerics else 0

    def fmt(self, cls: str, owner: str) -> Format | None:
        return self.numerics.fmt(cls, owner) if self.numerics else None

    def _owner(self, tensor: str) -> str:
        producer = self.network.tensors[tensor].producer
        return tensor if producer is None else producer

    def act(self, tensor: str) -> Format | None:
        return self.fmt("act", self._owner(tensor))

    def err(self, tensor: str) -> Format | None:
        return self.fmt("err", self._owner(tensor))

    def formats_of(self, layer: Layer) -> Mapping[str, Format]:
        if not self.numerics:
            return {}
        return {cls: self.numerics.fmt(cls, layer.name) for cls in ("act", "err", "weight", "grad")}

    def input(self, x: np.ndarray) -> np.ndarray:
        return quantise(x, self.act(self.network.input_name)) if self.fixed else x

    def to_float(self, q: np.ndarray, fmt: Format | None) -> np.ndarray:
        return dequantise(q, fmt) if self.fixed else np.asarray(q, np.float64)

    def fan_in(self, parts: list[np.ndarray], tensor: str) -> np.ndarray:
        if len(parts) == 1:
            return parts[0]
        if self.fixed:
            return add.error_fan_in(parts, fmt=self.err(tensor))
        return add.error_fan_in_float(parts)

    def loss_error(self, z: np.ndarray, y: np.ndarray,
                   tensor: str) -> tuple[np.ndarray, np.ndarray | None]:
        if not self.fixed:
            if self.loss == "mse":
                return loss_ops.mse_error_float(z, y), None
            return loss_ops.softmax_ce_error_float(z, y)
        z_fmt, e_fmt = self.act(tensor), self.err(tensor)
        if self.loss == "mse":
            return loss_ops.mse_error(z, y, z_fmt=z_fmt, e_fmt=e_fmt), None
        return loss_ops.softmax_ce_error(z, y, z_fmt=z_fmt, e_fmt=e_fmt)


# ------------------------------------------------------------------------------- checks


def _check_supported(network: Network) -> None:
    bad = []
    last = network.layers[-1] if network.layers else None
    for layer in network.layers:
        if layer.op not in SUPPORTED_OPS:
            bad.append(f"{layer.name} ({layer.op})")
        elif isinstance(layer.attrs, FCAttrs) and (layer.attrs.alpha, layer.attrs.beta) != (1, 1):
            bad.append(f"{layer.name} (Gemm with alpha/beta other than 1)")
        elif layer.op is Op.SOFTMAX and layer is not last:
            bad.append(f"{layer.name} (Softmax that is not the last layer)")
    if bad:
        raise FpdeepError(
            "the golden model does not support these layers yet: " + ", ".join(bad)
            + ". Planning and analysis still work for this network; training-step simulation "
            "needs a network of Conv, Gemm/MatMul, Relu, MaxPool, AveragePool, "
            "GlobalAveragePool, Add, Flatten, Identity and a final Softmax."
        )


def _check_batch(network: Network, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    xb = np.asarray(x, dtype=np.float64)
    if xb.ndim != len(network.input_shape) + 1 or tuple(xb.shape[1:]) != network.input_shape:
        raise FpdeepError(
            f"x has shape {tuple(xb.shape)}; network {network.name!r} takes a batch of shape "
            f"(B, {', '.join(map(str, network.input_shape))})"
        )
    yb = np.asarray(y)
    if yb.dtype.kind not in "iu" or yb.shape != (xb.shape[0],) or np.any(yb < 0):
        raise FpdeepError(
            f"y must be non-negative integer labels of shape ({xb.shape[0]},), got dtype "
            f"{yb.dtype} and shape {yb.shape}"
        )
    return xb, yb.astype(np.int64)


def logits_tensor(network: Network, loss_kind: str) -> str:
    last = network.layers[-1]
    if last.op is Op.SOFTMAX:
        if loss_kind != "softmax_ce":
            raise FpdeepError(
                f"network {network.name!r} ends in Softmax ({last.name}); loss={loss_kind!r} "
                "needs the raw outputs: use loss='softmax_ce' or remove the Softmax"
            )
        return last.inputs[0]
    return network.output_name


def needs_error(network: Network) -> dict[str, bool]:
    """A tensor needs an error if a trainable layer lies upstream of it (FPDeep: the first
    compute layer does no BP)."""
    needs = {network.input_name: False}
    for layer in network.layers:
        needs[layer.output] = bool(trainable_refs(layer)) or any(
            needs.get(name, False) for name in layer.inputs
        )
    return needs


def trainable_refs(layer: Layer) -> tuple[WeightRef, ...]:
    return tuple(ref for ref in layer.weights if ref.role in TRAINABLE_ROLES)


def load_params(network: Network, weights: Mapping[str, np.ndarray],
                 ctx: StepContext) -> dict[str, dict[str, np.ndarray]]:
    if not isinstance(weights, Mapping):
        raise FpdeepError(
            f"weights must be a dict of arrays keyed by initializer name, got "
            f"{type(weights).__name__}"
        )
    missing = [ref.name for layer in network.compute_layers for ref in trainable_refs(layer)
               if ref.name not in weights]
    if missing:
        raise FpdeepError("weights lacks these parameters: " + ", ".join(missing))
    owners: dict[str, str] = {}
    for layer in network.compute_layers:
        for ref in trainable_refs(layer):
            if ref.name in owners:
                raise FpdeepError(
                    f"parameter {ref.name!r} is shared by layers {owners[ref.name]} and "
                    f"{layer.name}; the golden model needs one parameter tensor per layer"
                )
            owners[ref.name] = layer.name
    params: dict[str, dict[str, np.ndarray]] = {}
    for layer in network.compute_layers:
        entry = {}
        for ref in trainable_refs(layer):
            value = np.asarray(weights[ref.name], dtype=np.float64)
            if tuple(value.shape) != tuple(ref.shape):
                raise FpdeepError(
                    f"weights[{ref.name!r}] has shape {tuple(value.shape)}, layer "
                    f"{layer.name} expects {tuple(ref.shape)}"
                )
            fmt = ctx.fmt("weight", layer.name)
            stored = quantise(value, fmt) if ctx.fixed else value
            entry[ref.role] = _compute_layout(layer, ref, stored)
        params[layer.name] = entry
    return params


def _compute_layout(layer: Layer, ref: WeightRef, w: np.ndarray) -> np.ndarray:
    """FC weights are handled as (out, in), an (in, out) initializer transposed; biases flat."""
    if ref.role == "bias":
        return w.reshape(-1)
    if isinstance(layer.attrs, FCAttrs) and not layer.attrs.weight_out_in:
        return w.T
    return w


def _store_layout(layer: Layer, ref: WeightRef, w: np.ndarray) -> np.ndarray:
    """Inverse of ``_compute_layout``: back to the initializer's shape."""
    if ref.role == "weight" and isinstance(layer.attrs, FCAttrs) and not layer.attrs.weight_out_in:
        w = w.T
    return w.reshape(ref.shape)


# ----------------------------------------------------------------------------- forward


def _fwd_conv(ctx: StepContext, layer: Layer, ins: list, p: dict) -> np.ndarray:
    if not ctx.fixed:
        return conv.forward_float(ins[0], p["weight"], p.get("bias"), attrs=layer.attrs)
    return conv.forward(ins[0], p["weight"], p.get("bias"), attrs=layer.attrs,
                        x_fmt=ctx.act(layer.inputs[0]), w_fmt=ctx.fmt("weight", layer.name),
                        out_fmt=ctx.act(layer.output), acc_width=ctx.acc_width)


def _fwd_fc(ctx: StepContext, layer: Layer, ins: list, p: dict) -> np.ndarray:
    x = ins[0].reshape(ins[0].shape[0], -1)
    if not ctx.fixed:
        return fc.forward_float(x, p["weight"], p.get("bias"))
    return fc.forward(x, p["weight"], p.get("bias"), x_fmt=ctx.act(layer.inputs[0]),
                      w_fmt=ctx.fmt("weight", layer.name), out_fmt=ctx.act(layer.output),
                      acc_width=ctx.acc_width)


def _fwd_relu(ctx: StepContext, layer: Layer, ins: list, p: dict) -> np.ndarray:
    if not ctx.fixed:
        return relu.forward_float(ins[0])
    return relu.forward(ins[0], x_fmt=ctx.act(layer.inputs[0]), out_fmt=ctx.act(layer.output))


def _pool_attrs(layer: Layer):
    if layer.op is Op.GLOBAL_AVGPOOL:
        return pool.global_attrs(layer.in_shape[1:])
    return layer.attrs


def _fwd_maxpool(ctx: StepContext, layer: Layer, ins: list, p: dict) -> np.ndarray:
    if not ctx.fixed:
        return pool.max_forward_float(ins[0], attrs=layer.attrs)
    return pool.max_forward(ins[0], attrs=layer.attrs, x_fmt=ctx.act(layer.inputs[0]),
                            out_fmt=ctx.act(layer.output))


def _fwd_avgpool(ctx: StepContext, layer: Layer, ins: list, p: dict) -> np.ndarray:
    attrs = _pool_attrs(layer)
    if not ctx.fixed:
        return pool.avg_forward_float(ins[0], attrs=attrs)
    return pool.avg_forward(ins[0], attrs=attrs, x_fmt=ctx.act(layer.inputs[0]),
                            out_fmt=ctx.act(layer.output), acc_width=ctx.acc_width)


def _fwd_add(ctx: StepContext, layer: Layer, ins: list, p: dict) -> np.ndarray:
    if not ctx.fixed:
        return add.forward_float(ins)
    return add.forward(ins, x_fmts=[ctx.act(name) for name in layer.inputs],
                       out_fmt=ctx.act(layer.output))


def _fwd_flatten(ctx: StepContext, layer: Layer, ins: list, p: dict) -> np.ndarray:
    x = ins[0].reshape(ins[0].shape[0], *layer.out_shape) if layer.op is Op.IDENTITY else ins[0]
    if not ctx.fixed:
        return flatten.forward_float(x).reshape(x.shape[0], *layer.out_shape)
    out = flatten.forward(x, x_fmt=ctx.act(layer.inputs[0]), out_fmt=ctx.act(layer.output))
    return out.reshape(x.shape[0], *layer.out_shape)


FORWARD = {
    Op.CONV: _fwd_conv, Op.FC: _fwd_fc, Op.RELU: _fwd_relu, Op.MAXPOOL: _fwd_maxpool,
    Op.AVGPOOL: _fwd_avgpool, Op.GLOBAL_AVGPOOL: _fwd_avgpool, Op.ADD: _fwd_add,
    Op.FLATTEN: _fwd_flatten, Op.IDENTITY: _fwd_flatten,
}


# ---------------------------------------------------------------------------- backward


def _bwd_conv(ctx: StepContext, layer: Layer, e: np.ndarray, ins: list, p: dict) -> tuple:
    in_hw = ins[0].shape[2:]
    if not ctx.fixed:
        return (conv.backward_float(e, p["weight"], attrs=layer.attrs, in_hw=in_hw),)
    return (conv.backward(e, p["weight"], attrs=layer.attrs, in_hw=in_hw,
                          e_fmt=ctx.err(layer.output), w_fmt=ctx.fmt("weight", layer.name),
                          out_fmt=ctx.err(layer.inputs[0]), acc_width=ctx.acc_width),)


def _bwd_fc(ctx: StepContext, layer: Layer, e: np.ndarray, ins: list, p: dict) -> tuple:
    if not ctx.fixed:
        dx = fc.backward_float(e, p["weight"])
    else:
        dx = fc.backward(e, p["weight"], e_fmt=ctx.err(layer.output),
                         w_fmt=ctx.fmt("weight", layer.name), out_fmt=ctx.err(layer.inputs[0]),
                         acc_width=ctx.acc_width)
    return (dx.reshape(ins[0].shape),)


def _bwd_relu(ctx: StepContext, layer: Layer, e: np.ndarray, ins: list, p: dict) -> tuple:
    if not ctx.fixed:
        return (relu.backward_float(e, ins[0]),)
    return (relu.backward(e, ins[0], e_fmt=ctx.err(layer.output),
                          out_fmt=ctx.err(layer.inputs[0])),)


def _bwd_maxpool(ctx: StepContext, layer: Layer, e: np.ndarray, ins: list, p: dict) -> tuple:
    if not ctx.fixed:
        return (pool.max_backward_float(e, ins[0], attrs=layer.attrs),)
    return (pool.max_backward(e, ins[0], attrs=layer.attrs, e_fmt=ctx.err(layer.output),
                              out_fmt=ctx.err(layer.inputs[0]), acc_width=ctx.acc_width),)


def _bwd_avgpool(ctx: StepContext, layer: Layer, e: np.ndarray, ins: list, p: dict) -> tuple:
    attrs, in_hw = _pool_attrs(layer), ins[0].shape[2:]
    if not ctx.fixed:
        return (pool.avg_backward_float(e, attrs=attrs, in_hw=in_hw),)
    return (pool.avg_backward(e, attrs=attrs, in_hw=in_hw, e_fmt=ctx.err(layer.output),
                              out_fmt=ctx.err(layer.inputs[0]), acc_width=ctx.acc_width),)


def _bwd_add(ctx: StepContext, layer: Layer, e: np.ndarray, ins: list, p: dict) -> tuple:
    if not ctx.fixed:
        return add.backward_float(e, len(ins))
    return add.backward(e, e_fmt=ctx.err(layer.output),
                        out_fmts=[ctx.err(name) for name in layer.inputs])


def _bwd_flatten(ctx: StepContext, layer: Layer, e: np.ndarray, ins: list, p: dict) -> tuple:
    in_shape = ins[0].shape[1:]
    if not ctx.fixed:
        return (flatten.backward_float(e, in_shape=in_shape),)
    return (flatten.backward(e, in_shape=in_shape, e_fmt=ctx.err(layer.output),
                             out_fmt=ctx.err(layer.inputs[0])),)


BACKWARD = {
    Op.CONV: _bwd_conv, Op.FC: _bwd_fc, Op.RELU: _bwd_relu, Op.MAXPOOL: _bwd_maxpool,
    Op.AVGPOOL: _bwd_avgpool, Op.GLOBAL_AVGPOOL: _bwd_avgpool, Op.ADD: _bwd_add,
    Op.FLATTEN: _bwd_flatten, Op.IDENTITY: _bwd_flatten,
}


# ----------------------------------------------------------------------- gradient, update


def _weight_update(ctx: StepContext, layer: Layer, e: np.ndarray, x: np.ndarray, p: dict,
                   lr: float) -> tuple[dict, dict, dict]:
    """WG accumulators over the batch, their batch mean, and the SGD update, per parameter."""
    batch = x.shape[0]
    if layer.op is Op.CONV:
        wg = conv.weight_gradient_float if not ctx.fixed else conv.weight_gradient
        kwargs = {"attrs": layer.attrs}
    else:
        x = x.reshape(batch, -1)
        wg = fc.weight_gradient_float if not ctx.fixed else fc.weight_gradient
        kwargs = {}
    if ctx.fixed:
        kwargs["acc_width"] = ctx.acc_width
    acc_w, acc_b = wg(e, x, **kwargs)
    accs, grads, new = {}, {}, {}
    for ref in trainable_refs(layer):
        acc = acc_w if ref.role == "weight" else acc_b
        if ctx.fixed:
            e_frac = ctx.err(layer.output).frac
            acc_frac = e_frac + (ctx.act(layer.inputs[0]).frac if ref.role == "weight" else 0)
            g_fmt, w_fmt = ctx.fmt("grad", layer.name), ctx.fmt("weight", layer.name)
            g = sgd.mean_gradient(acc, acc_frac=acc_frac, batch=batch, out_fmt=g_fmt)
            w_new = sgd.update(p[ref.role], g, lr=lr, g_fmt=g_fmt, w_fmt=w_fmt)
        else:
            g = sgd.mean_gradient_float(acc, batch=batch)
            w_new = sgd.update_float(p[ref.role], g, lr=lr)
        accs[ref.name] = _store_layout(layer, ref, acc)
        grads[ref.name] = _store_layout(layer, ref, g)
        new[ref.name] = _store_layout(layer, ref, w_new)
    return accs, grads, new

