"""What a board file says about the board's pins, for the vendor shell around a board top.

The optional ``[shell]`` tables of a board file give the reference clock, the reset button, the
host bridge (XDMA on a PCIe card, the Zynq UltraScale+ PS on an MPSoC board) and, per chain
neighbour, the transceiver quad, first lane and reference clock that its Aurora core uses.
Each table names its public source like every other figure. A board without them parses as
before; `shell_support` says what is missing, and `fpdeep build` writes no Vivado project for
it. Every value ends up in Tcl or XDC, so each is checked against a strict pattern here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from fpdeep.errors import FpdeepError

#: The host bridges a shell can have.
HOSTS = ("xdma", "zynq_ps")
#: Vendors with a Vivado backend.
VIVADO_VENDORS = ("xilinx",)

_PIN = re.compile(r"[A-Z]{1,2}[0-9]{1,3}")
_STANDARD = re.compile(r"[A-Z][A-Z0-9_]{1,31}")
_SITE = re.compile(r"X[0-9]{1,2}Y[0-9]{1,3}")
_REFCLK = re.compile(r"MGTREFCLK[01]")
_PCIE_QUAD = re.compile(r"GT[HY]_Quad_[0-9]{3}")


@dataclass(frozen=True)
class ClockPins:
    """A differential clock input: its package pins, I/O standard (none on a GT refclk) and
    frequency."""

    p: str
    n: str
    mhz: float
    standard: str = ""

    @property
    def period_ns(self) -> float:
        return 1000.0 / self.mhz


@dataclass(frozen=True)
class ResetPin:
    pin: str
    standard: str
    active_high: bool


@dataclass(frozen=True)
class GtSite:
    """Where one neighbour's Aurora lanes are: the quad, its first lane, and the quad's
    reference clock input (``MGTREFCLK0``/``1``) with its pins."""

    quad: str
    first_lane: str
    refclk_input: str
    refclk: ClockPins


@dataclass(frozen=True)
class PcieSite:
    """The PCIe edge of a card: lanes and generation the XDMA bridge uses, its GT quad, its
    100 MHz reference clock and PERST# pin."""

    lanes: int
    gen: int
    quad: str
    refclk: ClockPins
    perst: ResetPin


@dataclass(frozen=True)
class BoardShell:
    host: str
    clock: ClockPins
    reset: ResetPin
    gt: Mapping[str, GtSite]  # side ("east"/"west") -> its transceivers
    pcie: PcieSite | None
    sources: Mapping[str, str]  # table -> public document


Fail = Callable[[str | None, str | None, str], FpdeepError]


def _get(table: Mapping[str, Any], section: str, key: str, kind: type, fail: Fail) -> Any:
    if key not in table:
        raise fail(section, None, f"[{section}] is missing {key!r}")
    value = table[key]
    ok = (isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0
          if kind is float else isinstance(value, kind) and not
          (kind is int and isinstance(value, bool)))
    if not ok:
        need = {float: "a number > 0", int: "an integer", str: "a string", bool: "true/false"}
        raise fail(section, key, f"[{section}] {key} must be {need[kind]}, got {value!r}")
    return value


def _match(table: Mapping[str, Any], section: str, key: str, pattern: re.Pattern[str],
           example: str, fail: Fail) -> str:
    value = _get(table, section, key, str, fail)
    if not pattern.fullmatch(value):
        raise fail(section, key, f"[{section}] {key} {value!r} is not valid (like {example!r})")
    return value


def _table(data: Mapping[str, Any], section: str, fail: Fail) -> Mapping[str, Any]:
    node: Any = data
    for part in section.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    if not isinstance(node, dict):
        raise fail(None, None, f"missing section [{section}]")
    _get(node, section, "source", str, fail)
    return node


def _clock(t: Mapping[str, Any], section: str, prefix: str, fail: Fail, *,
           standard: bool) -> ClockPins:
    return ClockPins(
        p=_match(t, section, f"{prefix}_p", _PIN, "AY24", fail),
        n=_match(t, section, f"{prefix}_n", _PIN, "AY23", fail),
        mhz=float(_get(t, section, f"{prefix}_mhz", float, fail)),
        standard=(_match(t, section, f"{prefix}_standard", _STANDARD, "LVDS", fail)
                  if standard else ""))


def parse_shell(data: Mapping[str, Any], fail: Fail) -> BoardShell | None:
    """The ``[shell]`` tables of a parsed board file, None if it has none; ``fail`` makes the
    error naming the file and line."""
    if "shell" not in data:
        return None
    top = _table(data, "shell", fail)
    host = _get(top, "shell", "host", str, fail)
    if host not in HOSTS:
        raise fail("shell", "host", f"[shell] host {host!r} is not known; valid: "
                   f"{', '.join(HOSTS)}")
    sources = {"shell": top["source"]}
    gt = {}
    for side in ("east", "west"):
        section = f"shell.{side}"
        t = _table(data, section, fail)
        sources[section] = t["source"]
        gt[side] = GtSite(
            quad=_match(t, section, "quad", _SITE, "X1Y12", fail),
            first_lane=_match(t, section, "first_lane", _SITE, "X1Y48", fail),
            refclk_input=_match(t, section, "refclk_input", _REFCLK, "MGTREFCLK0", fail),
            refclk=_clock(t, section, "refclk", fail, standard=False))
    pcie = None
    if host == "xdma":
        t = _table(data, "shell.pcie", fail)
        sources["shell.pcie"] = t["source"]
        pcie = PcieSite(
            lanes=_get(t, "shell.pcie", "lanes", int, fail),
            gen=_get(t, "shell.pcie", "gen", int, fail),
            quad=_match(t, "shell.pcie", "quad", _PCIE_QUAD, "GTY_Quad_227", fail),
            refclk=_clock(t, "shell.pcie", "refclk", fail, standard=False),
            perst=ResetPin(_match(t, "shell.pcie", "perst_pin", _PIN, "AM17", fail),
                           _match(t, "shell.pcie", "perst_standard", _STANDARD, "LVCMOS18",
                                  fail), active_high=False))
        if pcie.lanes not in (1, 2, 4, 8, 16) or pcie.gen not in (1, 2, 3):
            raise fail("shell.pcie", "lanes", "[shell.pcie] lanes must be 1, 2, 4, 8 or 16 "
                       f"and gen 1, 2 or 3, got x{pcie.lanes} gen {pcie.gen}")
    return BoardShell(
        host=host,
        clock=_clock(top, "shell", "clock", fail, standard=True),
        reset=ResetPin(_match(top, "shell", "reset_pin", _PIN, "L19", fail),
                       _match(top, "shell", "reset_standard", _STANDARD, "LVCMOS12", fail),
                       _get(top, "shell", "reset_active_high", bool, fail)),
        gt=gt, pcie=pcie, sources=sources)


def shell_support(vendor: str, shell: BoardShell | None) -> str:
    """Why a board gets no vendor project ("" when it gets one)."""
    if vendor not in VIVADO_VENDORS:
        return (f"not yet supported: no vendor project backend for {vendor!r} boards "
                f"(Vivado projects are written for: {', '.join(VIVADO_VENDORS)})")
    if shell is None:
        return ("not yet supported: the board file has no [shell] tables (reference clock "
                "pins and standard, reset pin, host bridge, each neighbour's GT quad, first "
                "lane and reference clock, and for PCIe cards [shell.pcie])")
    return ""
