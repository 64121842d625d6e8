"""The op registry: everything fpdeep knows about an op kind, in one ``OpSpec`` per kind.

The frontend takes its shapes from here, analysis its workload, the planner its loop nests and
the golden step its forward and backward rules; adding an op is one new entry in one of the
family modules (``conv``, ``fc``, ``pool``, ``eltwise``, ``reshape``, ``batchnorm``,
``lrn``, ``concat``, ``dropout``, ``shuffle``, ``affine``). Which RTL runs an op is the
design stage's table (``fpdeep.design.mapping``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from types import MappingProxyType

from fpdeep.errors import FpdeepError
from fpdeep.ir import Attrs, Layer, Network, Op, PoolAttrs, Shape, WeightRef
from fpdeep.ops import (
    affine,
    batchnorm,
    concat,
    conv,
    dropout,
    eltwise,
    fc,
    lrn,
    pool,
    reshape,
    shuffle,
)
from fpdeep.ops.fc import stored_transposed
from fpdeep.ops.spec import LoopNest, OpSpec

_FAMILIES = (conv, fc, pool, eltwise, reshape, batchnorm, lrn, concat, dropout, shuffle, affine)
_SPECS = {s.op: s for family in _FAMILIES for s in family.SPECS}
OPS: Mapping[Op, OpSpec] = MappingProxyType({op: _SPECS[op] for op in Op if op in _SPECS})
#: Ops the golden training step runs.
GOLDEN_OPS = frozenset(op for op, s in OPS.items() if s.golden)


def spec(op: Op) -> OpSpec:
    try:
        return OPS[op]
    except KeyError:
        raise FpdeepError(
            f"{str(op)!r} is not an op kind fpdeep knows; it knows {', '.join(map(str, OPS))}"
        ) from None


def output_shape(op: Op, attrs: Attrs, in_shapes: Sequence[Shape],
                 weight_shapes: Sequence[Shape] = (), given: Shape | None = None) -> Shape:
    """The per-sample output shape of an ``op`` layer; ``given`` is a view's shape (the model
    states it), which must keep the input's elements."""
    rule = spec(op).out_shape
    if rule is not None:
        return tuple(int(d) for d in rule(attrs, in_shapes, weight_shapes))
    if given is None or math.prod(given) != math.prod(in_shapes[0]):
        raise FpdeepError(f"a {op} layer views its {in_shapes[0]} input as another shape of as "
                          f"many elements; {given} is not one")
    return tuple(given)


def loop_nest(layer: Layer) -> LoopNest:
    """The convolution a compute layer's FP, BP and WG run; FpdeepError for other layers."""
    rule = spec(layer.op).nest
    if rule is None:
        raise FpdeepError(f"layer {layer.name!r} ({layer.op}) is not a Conv or FC layer, so not "
                          "a compute layer with a loop nest")
    return rule(layer)


def element_ops(layer: Layer) -> int:
    """Element operations (adds, compares, scalings) outside the MAC arrays, per sample."""
    return spec(layer.op).element_ops(layer)


def pool_window(layer: Layer) -> PoolAttrs:
    """Kernel, stride and pads of a pooling layer (a GlobalAveragePool's covers the map)."""
    rule = spec(layer.op).window
    if rule is None:
        raise FpdeepError(f"layer {layer.name!r} ({layer.op}) is not a pooling layer")
    return rule(layer)


def trainable_refs(layer: Layer) -> tuple[WeightRef, ...]:
    """The parameters of ``layer`` that SGD updates (not, e.g., batch-norm running statistics)."""
    s = spec(layer.op)
    if s.trains is not None and not s.trains(layer):
        return ()
    roles = s.trainable
    return tuple(ref for ref in layer.weights if ref.role in roles)


def batch_barrier(layer: Layer) -> bool:
    """Whether ``layer`` waits for the whole mini-batch in FP and in BP (batch statistics)."""
    rule = spec(layer.op).batch_barrier
    return rule is not None and rule(layer)


def needs_error(network: Network) -> dict[str, bool]:
    """Per tensor, whether a training step computes its error: whether a trainable layer lies
    upstream of it (FPDeep: the first compute layer does no BP)."""
    needs = {network.input_name: False}
    for layer in network.layers:
        needs[layer.output] = bool(trainable_refs(layer)) or any(
            needs.get(name, False) for name in layer.inputs
        )
    return needs


def needs_input_error(network: Network) -> set[str]:
    """Names of the layers whose input error is computed (``needs_error`` of an input)."""
    needs = needs_error(network)
    return {layer.name for layer in network.layers
            if any(needs.get(name, False) for name in layer.inputs)}


def refusal(network: Network, layer: Layer) -> str | None:
    """Why fpdeep can plan ``layer`` but neither simulate nor build it (None when it can)."""
    s = spec(layer.op)
    if s.in_loss and layer is not network.layers[-1]:
        return f"a {layer.op} that is not the last layer"
    return s.refuse(layer) if s.refuse is not None else None


__all__ = [
    "GOLDEN_OPS",
    "OPS",
    "LoopNest",
    "OpSpec",
    "batch_barrier",
    "element_ops",
    "loop_nest",
    "needs_error",
    "needs_input_error",
    "output_shape",
    "pool_window",
    "refusal",
    "spec",
    "stored_transposed",
    "trainable_refs",
]
