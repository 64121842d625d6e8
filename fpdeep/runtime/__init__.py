"""The host runtime for a chain of real boards (`fpdeep run`).

A host session is compiled once (`fpdeep.cosim.session`) into a script of host operations
(`fpdeep.cosim.script`); here it is carried out through a `Transport` — four things a host
does to a board: write a packet on its host stream, read one back, read and write a CSR —
and decoded by the same `fpdeep.cosim.session.decode` the simulation hosts use:

- `DeviceChain` reaches real boards: XDMA character devices on PCIe cards
  (`XdmaBoard`: /dev/xdma0_h2c_0, _c2h_0, _user) or the Zynq UltraScale+ PS's AXI DMA and
  AXI-Lite window (`ZynqBoard`);
- `SimulatedChain` reaches the Verilated cluster of a build through a pipe to the native host
  (sim/native_host.cpp --serve), so the same runtime code runs without a board.
"""

from __future__ import annotations

from .execute import execute
from .simulated import SimulatedChain
from .transport import DeviceChain, Transport, XdmaBoard, ZynqBoard, open_chain

__all__ = ["DeviceChain", "SimulatedChain", "Transport", "XdmaBoard", "ZynqBoard", "execute",
           "open_chain"]
