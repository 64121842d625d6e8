"""Resource figures from a synthesis tool's cells: Yosys' Xilinx primitives counted the way
Vivado's utilisation report counts them (CLB LUTs with LUT RAM and shift registers, CLB
registers, DSP slices, 36 Kb block RAMs with a RAMB18 as a half, UltraRAMs)."""

from __future__ import annotations

import re
from collections.abc import Mapping

from fpdeep.errors import FpdeepError
from fpdeep.planning.resources import Resources

#: LUTs a LUT RAM or shift-register primitive takes (Xilinx UG574 "CLB Slices": a RAM64M8 or
#: RAM32M16 takes a whole SLICEM's eight LUTs, a RAM64M or RAM32M four).
LUTS_PER_CELL = {
    "LUT1": 1, "LUT2": 1, "LUT3": 1, "LUT4": 1, "LUT5": 1, "LUT6": 1, "LUT6_2": 1,
    "INV": 1,  # Vivado implements an inverter in a LUT1
    "RAM32X1S": 1, "RAM64X1S": 1, "RAM128X1S": 2, "RAM256X1S": 4, "RAM512X1S": 8,
    "RAM32X1D": 2, "RAM64X1D": 2, "RAM128X1D": 4, "RAM256X1D": 8,
    "RAM32M": 4, "RAM64M": 4, "RAM32M16": 8, "RAM64M8": 8, "RAM64X8SW": 8,
    "RAM32X16DR8": 8, "SRL16E": 1, "SRLC16E": 1, "SRLC32E": 1,
}
_FF = re.compile(r"^(FD[RSCP]E(_1)?|LD[CP]E)$")  # flip-flops and latches: CLB registers
BRAM36_PER_CELL = {"RAMB36E1": 1.0, "RAMB36E2": 1.0, "RAMB18E1": 0.5, "RAMB18E2": 0.5,
                   "FIFO36E1": 1.0, "FIFO18E1": 0.5, "FIFO36E2": 1.0, "FIFO18E2": 0.5}
DSP_CELLS = ("DSP48E1", "DSP48E2")
URAM_CELLS = ("URAM288", "URAM288_BASE")
#: Cells that take none of the five counted resources: carry chains, wide multiplexers inside
#: a slice, clock and I/O buffers of a top synthesised on its own, constants.
UNCOUNTED = ("CARRY4", "CARRY8", "MUXF7", "MUXF8", "MUXF9", "BUFG", "IBUF", "OBUF", "IOBUF",
             "OBUFT", "GND", "VCC")


def resources_of(cells: Mapping[str, int], *, hard_blocks_only: bool = False) -> Resources:
    """The five figures of ``cells`` (primitive name -> count, as `synth_xilinx` returns);
    FpdeepError on a cell that is not a known primitive (e.g. an unmapped ``$mul``), so a
    figure is never silently missing. ``hard_blocks_only``: the cells of a synthesis stopped
    once DSPs and RAMs are mapped, the logic not yet: DSP, BRAM36 and URAM only (LUT and FF
    are 0)."""
    lut = ff = dsp = uram = 0
    bram36 = 0.0
    unknown = []
    for cell, count in cells.items():
        name = cell.removeprefix("\\")
        if hard_blocks_only and name not in (*BRAM36_PER_CELL, *DSP_CELLS, *URAM_CELLS):
            continue
        if name in LUTS_PER_CELL:
            lut += LUTS_PER_CELL[name] * count
        elif _FF.match(name):
            ff += count
        elif name in BRAM36_PER_CELL:
            bram36 += BRAM36_PER_CELL[name] * count
        elif name in DSP_CELLS:
            dsp += count
        elif name in URAM_CELLS:
            uram += count
        elif name not in UNCOUNTED:
            unknown.append(f"{name} x{count}")
    if unknown:
        raise FpdeepError("the synthesised netlist has cells fpdeep cannot count as LUT, FF, "
                          "DSP, BRAM or URAM: " + ", ".join(sorted(unknown)))
    return Resources(lut=lut, ff=ff, dsp=dsp, bram36=bram36, uram=uram)
