"""Which arithmetic a training step computes in (fixed point or float) and which format each
tensor has: what every per-op golden rule is given."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from fpdeep.errors import FpdeepError
from fpdeep.golden import add
from fpdeep.golden import loss as loss_ops
from fpdeep.ir import Layer, Network
from fpdeep.numerics import Format, Numerics, dequantise, quantise


@dataclass(frozen=True)
class StepContext:
    """Which arithmetic (fixed or float) and which format each tensor has."""

    network: Network
    numerics: Numerics | None  # None: float reference
    loss: str
    step: int = 0  # the training step's number: it seeds the Dropout masks
    training: bool = True  # False: a forward pass at inference (Dropout off)

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
