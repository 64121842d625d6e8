"""Interfaces of the hand-written RTL in hw/, declared once as data (DESIGN §10)."""

from __future__ import annotations

from fpdeep.hwlib.library import (
    ADD,
    ENGINE,
    ENGINE_OPERANDS,
    FANOUT,
    FOLDERS,
    LINK_MODEL,
    LINK_RX,
    LINK_TX,
    LOSS,
    MODULES,
    POOL,
    PSUM,
    RELU,
    SGD,
    SHIFT_WIDTH,
    compile_order,
    module,
)
from fpdeep.hwlib.signature import Module, Port, Signal, Stream

__all__ = ["ADD", "ENGINE", "ENGINE_OPERANDS", "FANOUT", "FOLDERS", "LINK_MODEL", "LINK_RX",
           "LINK_TX", "LOSS", "MODULES", "POOL", "PSUM", "RELU", "SGD", "SHIFT_WIDTH", "Module",
           "Port", "Signal", "Stream", "compile_order", "module"]
