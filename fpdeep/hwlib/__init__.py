"""Interfaces of the hand-written RTL in hw/, declared once as data (DESIGN §10)."""

from __future__ import annotations

from fpdeep.hwlib.library import (
    ADD,
    AXIL_SLAVE,
    CONVERT,
    CRC32,
    CSR,
    DROPOUT,
    ENGINE,
    FANOUT,
    FOLDERS,
    LINK_CHANNEL,
    LINK_DEFRAMER,
    LINK_END,
    LINK_FRAMER,
    LINK_KEEP,
    LINK_MODEL,
    LINK_PACK,
    LINK_RX,
    LINK_TX,
    LINK_UNPACK,
    LOOP_NEST,
    LOSS,
    MAC_ARRAY,
    MODULES,
    POOL,
    PSUM,
    RELU,
    REQUANT,
    SDP_RAM,
    SGD,
    SHIFT_WIDTH,
    SKID_BUFFER,
    STREAM_FIFO,
    TENSOR_WALKER,
    compile_order,
    module,
)
from fpdeep.hwlib.signature import Module, Port, Signal, Stream

__all__ = ["ADD", "AXIL_SLAVE", "CONVERT", "CRC32", "CSR", "DROPOUT", "ENGINE", "FANOUT",
           "FOLDERS", "LINK_CHANNEL", "LINK_DEFRAMER", "LINK_END", "LINK_FRAMER", "LINK_KEEP",
           "LINK_MODEL", "LINK_PACK", "LINK_RX", "LINK_TX", "LINK_UNPACK", "LOOP_NEST", "LOSS",
           "MAC_ARRAY", "MODULES", "POOL", "PSUM", "RELU", "REQUANT", "SDP_RAM", "SGD",
           "SHIFT_WIDTH", "SKID_BUFFER", "STREAM_FIFO", "TENSOR_WALKER", "Module", "Port",
           "Signal", "Stream", "compile_order", "module"]
