"""Board database: one TOML file per FPGA board, each figure with its public source.

The bundled boards live in ``fpdeep/planning/boards/*.toml``; a user's own board is read from
any path with :func:`load_board_file`. Every malformed file raises :class:`FpdeepError` naming
the file and the line.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any

from fpdeep.errors import FpdeepError
from fpdeep.planning.shell import BoardShell, parse_shell, shell_support

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

PRECISIONS = (8, 16, 32)


@dataclass(frozen=True)
class Board:
    """One FPGA board: resources, links, memory, clock, power, and where each figure comes from."""

    name: str
    title: str
    vendor: str
    part: str
    dsp: int
    bram_blocks: int
    bram_block_bits: int
    uram_blocks: int
    uram_block_bits: int
    lut: int
    ff: int
    dsp_per_mac: Mapping[int, float]  # precision bits -> DSP slices per MAC lane
    cages: str
    lanes: int
    lanes_per_neighbour: int
    lane_gbps: float
    memory_kind: str
    memory_gbytes: float
    memory_gbytes_per_s: float
    clock_mhz: float
    watts: float
    watts_is_estimate: bool
    sources: Mapping[str, str]  # section -> public document
    shell: BoardShell | None = None  # the pins a vendor shell needs, where the file gives them
    # a read's round trip through the memory controller; 0: the file gives none
    memory_latency_ns: float = 0.0

    @property
    def shell_note(self) -> str:
        """Why this board gets no vendor project ("" when it gets one)."""
        return shell_support(self.vendor, self.shell)

    @property
    def bram_bits(self) -> int:
        return self.bram_blocks * self.bram_block_bits

    @property
    def uram_bits(self) -> int:
        return self.uram_blocks * self.uram_block_bits

    @property
    def link_gbps(self) -> float:
        """Line rate per direction to one chain neighbour."""
        return self.lanes_per_neighbour * self.lane_gbps

    def mac_lanes(self, precision: int, util_cap: float) -> int:
        """MAC lanes the DSP budget allows at ``precision`` bits under the routing cap."""
        return math.floor(self.dsp * util_cap / self.dsp_per_mac[precision] + 1e-9)


# section -> {key: (type, must be positive)}; "source" is required in every section.
_SCHEMA: dict[str, dict[str, tuple[type, bool]]] = {
    "device": {
        "dsp": (int, True),
        "bram_blocks": (int, False),
        "bram_block_bits": (int, False),
        "uram_blocks": (int, False),
        "uram_block_bits": (int, False),
        "lut": (int, True),
        "ff": (int, True),
    },
    "dsp_per_mac": {str(bits): (float, True) for bits in PRECISIONS},
    "links": {
        "cages": (str, False),
        "lanes": (int, True),
        "lanes_per_neighbour": (int, True),
        "lane_gbps": (float, True),
    },
    "memory": {"kind": (str, False), "gbytes": (float, False), "gbytes_per_s": (float, False)},
    "clock": {"default_mhz": (float, True)},
    "power": {"watts": (float, True), "estimate": (bool, False)},
}
_TOP = {"name": str, "title": str, "vendor": str, "part": str}


def _line_of(text: str, section: str | None, key: str | None) -> int:
    """1-based line of ``key`` inside ``[section]`` (or of the section header), 1 if not found."""
    lines = text.splitlines()
    start = 0
    if section is not None:
        header = re.compile(rf"^\s*\[\s*{re.escape(section)}\s*\]")
        for i, line in enumerate(lines):
            if header.match(line):
                start = i
                break
        else:
            return 1
        if key is None:
            return start + 1
    pattern = re.compile(rf"^\s*[\"']?{re.escape(key or '')}[\"']?\s*=")
    for i in range(start, len(lines)):
        if i > start and section is not None and lines[i].lstrip().startswith("["):
            break
        if section is None and lines[i].lstrip().startswith("["):
            break
        if pattern.match(lines[i]):
            return i + 1
    return start + 1


def _check(value: Any, kind: type, positive: bool) -> bool:
    if kind is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        return ok and math.isfinite(value) and (value > 0 if positive else value >= 0)
    if kind is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
        return ok and (value > 0 if positive else value >= 0)
    if kind is str:
        return isinstance(value, str) and bool(value.strip())
    return isinstance(value, kind)


def parse_board(text: str, origin: str) -> Board:
    """Parse and validate a board file's text; ``origin`` names it in error messages."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        match = re.search(r"line (\d+)", str(exc))
        line = match.group(1) if match else "?"
        raise FpdeepError(f"board file {origin}, line {line}: malformed TOML: {exc}") from None

    def fail(section: str | None, key: str | None, what: str) -> FpdeepError:
        line = _line_of(text, section, key)
        return FpdeepError(f"board file {origin}, line {line}: {what}")

    for key, kind in _TOP.items():
        if key not in data:
            raise fail(None, None, f"missing top-level key {key!r}")
        if not _check(data[key], kind, False):
            raise fail(None, key, f"{key!r} must be a non-empty string, got {data[key]!r}")
    for section, keys in _SCHEMA.items():
        table = data.get(section)
        if not isinstance(table, dict):
            raise fail(None, None, f"missing section [{section}]")
        for key, (kind, positive) in {**keys, "source": (str, False)}.items():
            if key not in table:
                raise fail(section, None, f"[{section}] is missing {key!r}")
            if not _check(table[key], kind, positive):
                need = {int: "an integer", float: "a number", str: "a string", bool: "true/false"}
                sign = " > 0" if positive else (" >= 0" if kind in (int, float) else "")
                raise fail(
                    section, key,
                    f"[{section}] {key} must be {need[kind]}{sign}, got {table[key]!r}",
                )
    dev, links, mem = data["device"], data["links"], data["memory"]
    if dev["bram_blocks"] + dev["uram_blocks"] == 0:
        raise fail("device", "bram_blocks", "the board has no on-chip RAM blocks")
    for kind in ("bram", "uram"):
        if dev[f"{kind}_blocks"] > 0 and dev[f"{kind}_block_bits"] == 0:
            raise fail("device", f"{kind}_block_bits", f"{kind}_block_bits must be > 0")
    if links["lanes_per_neighbour"] * 2 > links["lanes"]:
        raise fail(
            "links", "lanes_per_neighbour",
            f"lanes_per_neighbour ({links['lanes_per_neighbour']}) times two neighbours exceeds "
            f"the board's {links['lanes']} lanes",
        )
    if (mem["gbytes"] > 0) != (mem["gbytes_per_s"] > 0):
        raise fail("memory", "gbytes", "memory size and bandwidth must both be zero or both > 0")
    latency = mem.get("latency_ns", 0.0)
    if not _check(latency, float, False):
        raise fail("memory", "latency_ns",
                   f"[memory] latency_ns must be a number >= 0, got {latency!r}")
    if latency and not _check(mem.get("latency_source"), str, False):
        raise fail("memory", "latency_ns", "[memory] latency_ns needs a latency_source naming "
                   "the public document (or the estimate) it comes from")
    return Board(
        name=data["name"].strip().lower(),
        title=data["title"],
        vendor=data["vendor"],
        part=data["part"],
        dsp=dev["dsp"],
        bram_blocks=dev["bram_blocks"],
        bram_block_bits=dev["bram_block_bits"],
        uram_blocks=dev["uram_blocks"],
        uram_block_bits=dev["uram_block_bits"],
        lut=dev["lut"],
        ff=dev["ff"],
        dsp_per_mac=MappingProxyType(
            {bits: float(data["dsp_per_mac"][str(bits)]) for bits in PRECISIONS}
        ),
        cages=links["cages"],
        lanes=links["lanes"],
        lanes_per_neighbour=links["lanes_per_neighbour"],
        lane_gbps=float(links["lane_gbps"]),
        memory_kind=mem["kind"],
        memory_gbytes=float(mem["gbytes"]),
        memory_gbytes_per_s=float(mem["gbytes_per_s"]),
        clock_mhz=float(data["clock"]["default_mhz"]),
        watts=float(data["power"]["watts"]),
        watts_is_estimate=data["power"]["estimate"],
        sources=MappingProxyType({section: data[section]["source"] for section in _SCHEMA}),
        shell=parse_shell(data, fail),
        memory_latency_ns=float(latency),
    )


def load_board_file(path: str | Path) -> Board:
    """Read a user's board file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise FpdeepError(f"cannot read board file {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise FpdeepError(f"board file {path} is not UTF-8 text") from None
    return parse_board(text, str(path))


def _bundled() -> dict[str, Any]:
    folder = resources.files("fpdeep.planning") / "boards"
    return {
        entry.name[: -len(".toml")]: entry
        for entry in folder.iterdir()
        if entry.name.endswith(".toml")
    }


def known_boards() -> tuple[str, ...]:
    """Names of the bundled boards, sorted."""
    return tuple(sorted(_bundled()))


def get_board(name: str) -> Board:
    """A bundled board by name (case-insensitive)."""
    entries = _bundled()
    key = name.strip().lower() if isinstance(name, str) else name
    if key not in entries:
        raise FpdeepError(
            f"unknown board {name!r}; known boards: {', '.join(sorted(entries))} "
            "(or describe your own with --board-file FILE.toml)"
        )
    entry = entries[key]
    board = parse_board(entry.read_text(encoding="utf-8"), f"fpdeep/planning/boards/{entry.name}")
    if board.name != key:
        raise FpdeepError(f"bundled board file {entry.name} names itself {board.name!r}")
    return board
