"""One synchronous mini-batch SGD step over a Network: fixed point (golden) or float reference.

Walks ``network.layers`` in topological order for FP, in reverse for BP and WG, then updates
every trainable parameter once (Conv/FC weights and biases, BatchNormalization gamma and beta)
by SGD, with optional momentum and weight decay. Both modes share this walk; each layer's rules
come from its op's spec (``fpdeep.ops``), which calls the integer and the float arithmetic of
this package's per-op modules. See ``docs/numerics.md`` for the fixed-point definitions.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

import numpy as np

from fpdeep.errors import FpdeepError
from fpdeep.golden import loss as loss_ops
from fpdeep.golden import sgd
from fpdeep.golden.context import StepContext
from fpdeep.ir import Layer, Network, Op, WeightRef
from fpdeep.numerics import Format, Numerics, quantise
from fpdeep.ops import GOLDEN_OPS, needs_error, refusal, spec, stored_transposed, trainable_refs

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
    """``weights``: every parameter after the step (BatchNormalization running statistics
    included), float64, keyed by ONNX initializer name; ``state``: the SGD momentum buffers
    keyed likewise (empty without momentum), to pass as the next step's ``state``."""

    weights: dict[str, np.ndarray]
    loss: float  # batch mean, before the update
    trace: Trace
    state: dict[str, np.ndarray] = field(default_factory=dict)


def train_step(network: Network, weights: Mapping[str, np.ndarray], x: np.ndarray,
               y: np.ndarray, *, lr: float, momentum: float = 0.0, weight_decay: float = 0.0,
               state: Mapping[str, np.ndarray] | None = None,
               numerics: Numerics | str = DEFAULT_NUMERICS,
               loss: str = "softmax_ce", step: int = 0) -> StepResult:
    """One SGD step on the batch ``x`` (B, C, H, W) float, ``y`` (B,) int labels.

    ``numerics`` is a ``Numerics`` for the fixed-point golden model or ``"float"`` for the
    float64 reference. ``loss`` is ``"softmax_ce"`` or ``"mse"`` (against one-hot labels).
    ``momentum`` and ``weight_decay`` follow ``torch.optim.SGD`` (one parameter group, decay
    on every trainable parameter); ``state`` is the previous step's ``StepResult.state``.
    ``step`` is the step's number in the training run: it seeds the Dropout masks
    (docs/numerics.md §21), so chained steps pass 0, 1, 2, ...
    """
    if isinstance(step, bool) or not isinstance(step, int) or step < 0:
        raise FpdeepError(f"step must be a whole number >= 0 (the step's number in the "
                          f"training run), got {step!r}")
    ctx = replace(_context(network, numerics, loss), step=step)
    sgd.lr_constant(lr)
    sgd.check_optimiser(momentum, weight_decay)
    optimiser = _Optimiser(lr, momentum, weight_decay, load_velocities(network, state, ctx))
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
        rules = spec(layer.op)
        if rules.in_loss:
            continue
        ins = [acts[name] for name in layer.inputs]
        p = params.get(layer.name, {})
        e_out = None
        if needs.get(layer.output, False):
            parts = contributions.get(layer.output) or [np.zeros_like(acts[layer.output])]
            e_out = ctx.fan_in(parts, layer.output)
        in_errors: tuple[np.ndarray | None, ...] = (None,) * len(ins)
        if e_out is not None and any(needs.get(name, False) for name in layer.inputs):
            in_errors = rules.backward(ctx, layer, e_out, ins, p)
            for name, err in zip(layer.inputs, in_errors, strict=True):
                if needs.get(name, False):
                    contributions.setdefault(name, []).append(err)
        accs, grads, updated = {}, {}, {}
        if trainable_refs(layer):
            accs, grads, updated = _weight_update(ctx, layer, e_out, ins[0], p, optimiser)
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
    for layer in network.layers:
        for ref in trainable_refs(layer):
            out[ref.name] = ctx.to_float(new_weights[ref.name], ctx.fmt("weight", layer.name))
        rule = spec(layer.op).statistics
        if rule is not None:
            by_role = {ref.role: ref for ref in layer.weights}
            for role, value in rule(ctx, layer, acts[layer.inputs[0]], params[layer.name]).items():
                out[by_role[role].name] = value.reshape(by_role[role].shape)
    return StepResult(weights=out, loss=loss_value, trace=trace, state=optimiser.new_state)


def infer(network: Network, weights: Mapping[str, np.ndarray], x: np.ndarray, *,
          numerics: Numerics | str = DEFAULT_NUMERICS) -> np.ndarray:
    """Forward pass only: the (dequantised) outputs before any final Softmax, (B, N)."""
    ctx = replace(_context(network, numerics, "softmax_ce"), training=False)
    xb, _ = _check_batch(network, x, np.zeros(len(np.asarray(x)), dtype=np.int64))
    acts = _forward(ctx, load_params(network, weights, ctx), xb)
    name = logits_tensor(network, "softmax_ce")
    z = ctx.to_float(acts[name], ctx.act(name))
    return z.reshape(z.shape[0], -1)


def weight_formats(network: Network,
                   numerics: Numerics = DEFAULT_NUMERICS) -> dict[str, Format]:
    """The format of every trainable parameter, keyed by initializer name."""
    return {ref.name: numerics.fmt("weight", layer.name)
            for layer in network.layers for ref in trainable_refs(layer)}


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
        rules = spec(layer.op)
        if not rules.in_loss:
            ins = [acts[name] for name in layer.inputs]
            out = rules.forward(ctx, layer, ins, params.get(layer.name, {}))
            if tuple(out.shape[1:]) != tuple(layer.out_shape):
                raise FpdeepError(
                    f"layer {layer.name} ({layer.op}) computes per-sample shape "
                    f"{tuple(out.shape[1:])} but the network declares {tuple(layer.out_shape)}; "
                    "the golden model and the frontend disagree on this layer's geometry"
                )
            acts[layer.output] = out
    return acts


# ------------------------------------------------------------------------------- checks


def _context(network: Network, numerics: Numerics | str, loss_kind: str) -> StepContext:
    """The step's arithmetic, once the arguments are valid and every layer is supported."""
    ctx = StepContext.make(network, numerics, loss_kind)
    _check_supported(network)
    return ctx


def _check_supported(network: Network) -> None:
    bad = []
    for layer in network.layers:
        if layer.op not in GOLDEN_OPS:
            bad.append(f"{layer.name} ({layer.op})")
        elif (why := refusal(network, layer)) is not None:
            bad.append(f"{layer.name} ({why})")
    if bad:
        runs = [str(op) for op in Op if op in GOLDEN_OPS and not spec(op).in_loss]
        last = [str(op) for op in Op if op in GOLDEN_OPS and spec(op).in_loss]
        raise FpdeepError(
            "the golden model does not support these layers yet: " + ", ".join(bad)
            + ". Planning and analysis still work for this network; training-step simulation "
            f"needs a network of {', '.join(runs)} and a final {' or '.join(last)}."
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
    if spec(last.op).in_loss:
        if loss_kind != "softmax_ce":
            raise FpdeepError(
                f"network {network.name!r} ends in {last.op} ({last.name}); loss={loss_kind!r} "
                f"needs the raw outputs: use loss='softmax_ce' or remove the {last.op}"
            )
        return last.inputs[0]
    return network.output_name


def load_params(network: Network, weights: Mapping[str, np.ndarray],
                 ctx: StepContext) -> dict[str, dict[str, np.ndarray]]:
    if not isinstance(weights, Mapping):
        raise FpdeepError(
            f"weights must be a dict of arrays keyed by initializer name, got "
            f"{type(weights).__name__}"
        )
    missing = [ref.name for layer in network.layers for ref in layer.weights
               if ref.name not in weights]
    if missing:
        raise FpdeepError("weights lacks these parameters: " + ", ".join(missing))
    owners: dict[str, str] = {}
    for layer in network.layers:
        for ref in trainable_refs(layer):
            if ref.name in owners:
                raise FpdeepError(
                    f"parameter {ref.name!r} is shared by layers {owners[ref.name]} and "
                    f"{layer.name}; the golden model needs one parameter tensor per layer"
                )
            owners[ref.name] = layer.name
    params: dict[str, dict[str, np.ndarray]] = {}
    for layer in network.layers:
        trained = trainable_refs(layer)
        entry = {}
        for ref in layer.weights:
            value = np.asarray(weights[ref.name], dtype=np.float64)
            if tuple(value.shape) != tuple(ref.shape):
                raise FpdeepError(
                    f"weights[{ref.name!r}] has shape {tuple(value.shape)}, layer "
                    f"{layer.name} expects {tuple(ref.shape)}"
                )
            if ref not in trained:  # constants and running statistics: the op reads the float
                entry[ref.role] = value
                continue
            fmt = ctx.fmt("weight", layer.name)
            stored = quantise(value, fmt) if ctx.fixed else value
            entry[ref.role] = _compute_layout(layer, ref, stored)
        params[layer.name] = entry
    return params


def _compute_layout(layer: Layer, ref: WeightRef, w: np.ndarray) -> np.ndarray:
    """FC weights are handled as (out, in), an (in, out) initializer transposed; biases and
    per-channel scales flat."""
    if ref.role != "weight":
        return w.reshape(-1)
    return w.T if stored_transposed(layer, ref.role) else w


def _store_layout(layer: Layer, ref: WeightRef, w: np.ndarray) -> np.ndarray:
    """Inverse of ``_compute_layout``: back to the initializer's shape."""
    if stored_transposed(layer, ref.role):
        w = w.T
    return w.reshape(ref.shape)


# ----------------------------------------------------------------------- gradient, update


@dataclass
class _Optimiser:
    """The step's SGD settings, the momentum buffers it starts from (compute layout) and those it
    leaves (initializer layout, float64)."""

    lr: float
    momentum: float
    weight_decay: float
    velocities: dict[str, np.ndarray]
    new_state: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def plain(self) -> bool:
        return self.momentum == 0 and self.weight_decay == 0


def load_velocities(network: Network, state: Mapping[str, np.ndarray] | None,
                ctx: StepContext) -> dict[str, np.ndarray]:
    """The previous step's momentum buffers, checked, in compute layout (fixed: vel integers)."""
    if state is None:
        return {}
    if not isinstance(state, Mapping):
        raise FpdeepError(f"state must be the previous step's StepResult.state (a dict of "
                          f"arrays), got {type(state).__name__}")
    refs = {ref.name: (layer, ref) for layer in network.layers for ref in trainable_refs(layer)}
    unknown = sorted(set(state) - set(refs))
    if unknown:
        raise FpdeepError("state holds momentum buffers of no trainable parameter: "
                          + ", ".join(unknown))
    out = {}
    for name, value in state.items():
        layer, ref = refs[name]
        v = np.asarray(value, np.float64)
        if tuple(v.shape) != tuple(ref.shape):
            raise FpdeepError(f"state[{name!r}] has shape {tuple(v.shape)}, the parameter "
                              f"{tuple(ref.shape)}")
        out[name] = _compute_layout(layer, ref, quantise(v, ctx.fmt("vel", layer.name))
                                    if ctx.fixed else v)
    return out


def _weight_update(ctx: StepContext, layer: Layer, e: np.ndarray, x: np.ndarray, p: dict,
                   opt: _Optimiser) -> tuple[dict, dict, dict]:
    """WG accumulators over the batch, their batch mean, and the SGD update, per parameter."""
    batch = x.shape[0]
    rules = spec(layer.op)
    sums = dict(zip(rules.trainable, rules.weight_gradient(ctx, layer, e, x), strict=True))
    accs, grads, new = {}, {}, {}
    for ref in trainable_refs(layer):
        acc = sums[ref.role]
        v = opt.velocities.get(ref.name)
        v_new = None
        if ctx.fixed:
            g_fmt, w_fmt = ctx.fmt("grad", layer.name), ctx.fmt("weight", layer.name)
            g = sgd.mean_gradient(acc, acc_frac=accumulator_frac(ctx, layer, ref.role),
                                  batch=batch, out_fmt=g_fmt)
            if opt.plain:
                w_new = sgd.update(p[ref.role], g, lr=opt.lr, g_fmt=g_fmt, w_fmt=w_fmt)
            else:
                v_fmt = ctx.fmt("vel", layer.name)
                w_new, v_new = sgd.momentum_update(
                    p[ref.role], g, v, lr=opt.lr, momentum=opt.momentum,
                    weight_decay=opt.weight_decay, g_fmt=g_fmt, w_fmt=w_fmt, v_fmt=v_fmt)
                v_new = ctx.to_float(v_new, v_fmt)
        else:
            g = sgd.mean_gradient_float(acc, batch=batch)
            if opt.plain:
                w_new = sgd.update_float(p[ref.role], g, lr=opt.lr)
            else:
                w_new, v_new = sgd.momentum_update_float(
                    p[ref.role], g, v, lr=opt.lr, momentum=opt.momentum,
                    weight_decay=opt.weight_decay)
        if v_new is not None and opt.momentum > 0:
            opt.new_state[ref.name] = _store_layout(layer, ref, v_new)
        accs[ref.name] = _store_layout(layer, ref, acc)
        grads[ref.name] = _store_layout(layer, ref, g)
        new[ref.name] = _store_layout(layer, ref, w_new)
    return accs, grads, new


def accumulator_frac(ctx: StepContext, layer: Layer, role: str) -> int:
    """Fractional bits of a WG sum: the error's plus the input's for a weight, the error's for a
    bias (Conv, FC), or what the op says."""
    rule = spec(layer.op).gradient_frac
    if rule is not None:
        return rule(ctx, layer, role)
    e_frac = ctx.err(layer.output).frac
    return e_frac + (ctx.act(layer.inputs[0]).frac if role == "weight" else 0)

