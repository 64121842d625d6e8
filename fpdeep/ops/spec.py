"""What fpdeep knows about one op kind, as plain values and functions (an ``OpSpec``).

Shapes are per sample, as in the IR. The golden callables take the step's ``StepContext`` (which
arithmetic, which formats), the layer, its input tensors (B, ...) and its parameters by role.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from fpdeep.ir import Attrs, ConvAttrs, Layer, Op, PoolAttrs, Shape

if TYPE_CHECKING:
    from fpdeep.golden.context import StepContext

#: (attrs, input shapes, weight shapes) -> output shape.
ShapeRule = Callable[[Attrs, Sequence[Shape], Sequence[Shape]], Shape]
Count = Callable[[Layer], int]
Forward = Callable[["StepContext", Layer, list, dict], np.ndarray]
Backward = Callable[["StepContext", Layer, np.ndarray, list, dict], tuple]
#: (ctx, layer, output error, input) -> the WG sums of the weight and of the bias.
WeightGradient = Callable[["StepContext", Layer, np.ndarray, np.ndarray], tuple]
#: (ctx, layer, input, params) -> new values of the layer's non-trained state, by role.
Statistics = Callable[["StepContext", Layer, np.ndarray, dict], dict]


@dataclass(frozen=True)
class LoopNest:
    """A compute layer as the convolution its FP, BP and WG loop nests run (DESIGN §3): an FC
    layer is the 1x1 case on a 1x1 map. This is what the planner and the engines cost."""

    attrs: ConvAttrs
    in_shape: Shape  # (Ci, H, W)
    out_shape: Shape  # (Co, Ho, Wo)

    @property
    def macs(self) -> int:
        """MACs of one pass: Co·Ho·Wo·(Ci/g)·Kh·Kw."""
        kh, kw = self.attrs.kernel
        return math.prod(self.out_shape) * (self.in_shape[0] // self.attrs.groups) * kh * kw


@dataclass(frozen=True)
class OpSpec:
    """One op kind: its shape rule, workload, golden forward/backward and planner cost.

    ``out_shape`` is None for a view whose shape the model gives (any shape with the same
    elements). ``nest`` is None for a layer without MACs. ``forward``/``backward`` are None
    where the golden model does not run the op; an op the loss computes (``in_loss``: a final
    Softmax, part of softmax cross-entropy) has neither and is still supported. ``refuse``
    names a variant of the op that fpdeep can plan but neither simulates nor builds. A pooling
    layer's ``window`` is its kernel, stride and pads (a GlobalAveragePool's covers the map).

    ``trains`` says whether a layer trains its ``trainable`` roles (None: always; a frozen
    BatchNormalization does not). ``weight_gradient`` returns the WG sums in ``trainable``
    order; ``gradient_frac`` gives a sum's fractional bits in fixed point (None: the error's
    plus the input's for ``weight``, the error's for ``bias``, as Conv and FC). ``statistics``
    gives the state a training step leaves behind that SGD does not make (running statistics).
    """

    op: Op
    out_shape: ShapeRule | None
    element_ops: Count  # adds, compares, scalings outside the MAC arrays, per sample
    nest: Callable[[Layer], LoopNest] | None = None
    trainable: tuple[str, ...] = ()  # weight roles SGD updates
    forward: Forward | None = None
    backward: Backward | None = None
    weight_gradient: WeightGradient | None = None
    in_loss: bool = False
    refuse: Callable[[Layer], str | None] | None = None
    window: Callable[[Layer], PoolAttrs] | None = None  # a pooling layer's window
    trains: Callable[[Layer], bool] | None = None
    gradient_frac: Callable[[StepContext, Layer, str], int] | None = None
    statistics: Statistics | None = None
    #: whether a layer needs statistics of the whole batch before it can give any output (a
    #: BatchNormalization in training mode): a barrier to pipelining images
    batch_barrier: Callable[[Layer], bool] | None = None
    #: whether the op only renames its input's elements (Flatten, Reshape): no unit streams
    #: them, the controller plays it
    view: bool = False

    @property
    def golden(self) -> bool:
        """Whether the golden training step runs this op."""
        return self.forward is not None or self.in_loss


# ----- rules several ops share ------------------------------------------------------------------


def same_shape(attrs: Attrs, in_shapes: Sequence[Shape], weights: Sequence[Shape]) -> Shape:
    return tuple(in_shapes[0])


def no_element_ops(layer: Layer) -> int:
    """Pure data movement."""
    return 0


def per_output(factor: int) -> Count:
    """``factor`` element operations per output element."""
    def count(layer: Layer) -> int:
        return factor * math.prod(layer.out_shape)

    return count
