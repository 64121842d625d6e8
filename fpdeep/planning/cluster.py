"""Cluster spec: which boards form the chain, how they are linked, at what precision and clock."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from fpdeep.errors import (
    FpdeepError,
    require_number_in,
    require_positive_int,
    require_positive_number,
)
from fpdeep.numerics import ACC_WIDTH
from fpdeep.planning import perf
from fpdeep.planning.boards import PRECISIONS, Board, get_board, load_board_file

# Weight-gradient accumulators are kept wide across the mini-batch, as the DSP P register is:
# 48 bits for 16-bit data (DESIGN §7), and a proportionate width for 8 and 32 bits.
ACCUMULATOR_BITS = {8: 32, 16: ACC_WIDTH, 32: 64}

# Routing headroom: designs above ~85% DSP/RAM use rarely close timing (the figure vendor
# guides give for congestion-free placement), so plans leave 15% of every resource free.
DEFAULT_UTIL_CAP = 0.85

TOPOLOGIES = ("chain",)
# FPGA fabric clocks stay below 1 GHz (UltraScale+ DSP48E2 tops out at 891 MHz in the fastest
# speed grade, DS923; Stratix 10 HyperFlex at 1 GHz): a larger --clock is a typing error.
MAX_CLOCK_MHZ = 1000.0
# The longest chain fpdeep plans: FPDeep reports scaling to 100 boards; ten times that bounds
# what a sweep or a plan may ask for.
MAX_BOARDS = 1024
PIPELINING = ("image", "row")


@dataclass(frozen=True)
class Cluster:
    """A chain of boards; ``link_gbps[i]`` is the line rate per direction between i and i + 1."""

    boards: tuple[Board, ...]
    link_gbps: tuple[float, ...]
    precision: int = 16
    clock_mhz: float = 250.0
    util_cap: float = DEFAULT_UTIL_CAP
    topology: str = "chain"
    # "image": slices hand whole images on through ping-pong buffers (what codegen emits first);
    # "row": FPDeep's row-level fine-grained pipeline with line buffers and a two-image stash.
    pipelining: str = "image"
    # What-if only: output rows an engine may compute in parallel. The generated engine has 1;
    # larger values show how far the chain would scale with pixel-parallel engines.
    pixel_lanes: int = 1
    # Per board, the most DSPs its MAC lanes may take (0: the utilisation cap alone): set
    # where the board's lanes would otherwise need more block RAM than it has
    # (`fpdeep.flow` lowers, finds that, and plans again with the cap).
    dsp_caps: tuple[int, ...] = ()
    # The share of a board's on-chip RAM (block RAM and UltraRAM within the cap) the optimal
    # search lets its engines' banks take (`ChainLayer.bank_bits`, each layer's times its
    # ``bank_scale``, 1 where none); 0: not counted. Set where the partition of least II gives
    # some board more banks than it has (`fpdeep.flow`), which also measures the scales.
    bank_share: float = 0.0
    bank_scale: tuple[tuple[str, float], ...] = ()

    @property
    def size(self) -> int:
        return len(self.boards)

    @property
    def accumulator_bits(self) -> int:
        return ACCUMULATOR_BITS[self.precision]

    @property
    def link_port_bits(self) -> int:
        """tdata width of every board's link ports: wide enough for the fastest planned link
        at the cluster clock (the board file's link figures where the chain has no link)."""
        gbps = max(self.link_gbps or [b.link_gbps for b in self.boards])
        return perf.link_port_bits(gbps=gbps, clock_mhz=self.clock_mhz)

    def link_rate(self, index: int) -> perf.LinkRate:
        """What the link between boards ``index`` and ``index + 1`` carries per cycle."""
        return perf.link_rate(gbps=self.link_gbps[index], clock_mhz=self.clock_mhz,
                              data_bits=self.precision, port_bits=self.link_port_bits)

    def dsp_budget(self, index: int) -> int:
        budget = math.floor(self.boards[index].dsp * self.util_cap + 1e-9)
        cap = self.dsp_caps[index] if index < len(self.dsp_caps) else 0
        return min(budget, cap) if cap else budget

    def with_dsp_caps(self, caps: dict[int, int]) -> Cluster:
        """This chain with board ``b``'s MAC lanes held to ``caps[b]`` DSPs (others as they
        are)."""
        merged = list(self.dsp_caps) + [0] * (self.size - len(self.dsp_caps))
        for b, cap in caps.items():
            merged[b] = cap
        return replace(self, dsp_caps=tuple(merged))

    def dsp_per_mac(self, index: int) -> float:
        return self.boards[index].dsp_per_mac[self.precision]

    def mac_lanes(self, index: int) -> int:
        return self.boards[index].mac_lanes(self.precision, self.util_cap)


def _resolve(board: str | Board | Path) -> Board:
    if isinstance(board, Board):
        return board
    if isinstance(board, Path):
        return load_board_file(board)
    if isinstance(board, str):
        return get_board(board)
    raise FpdeepError(f"board must be a board name or a Board, got {board!r}")


def make_cluster(
    *,
    board: str | Board | Path | Sequence[str | Board | Path],
    boards: int | None = None,
    link_gbps: float | None = None,
    precision: int = 16,
    clock_mhz: float | None = None,
    util_cap: float = DEFAULT_UTIL_CAP,
    topology: str = "chain",
    pipelining: str = "image",
    pixel_lanes: int = 1,
) -> Cluster:
    """Build and validate a cluster: one board type times ``boards``, or a list (mixed cluster).

    ``link_gbps`` overrides the per-neighbour line rate the board files give (lanes x lane rate);
    ``clock_mhz`` defaults to the slowest board's default clock.
    """
    if isinstance(board, (str, Board, Path)):
        if boards is None:
            raise FpdeepError("boards: give the number of boards in the chain")
        require_positive_int("boards", boards)
        if boards > MAX_BOARDS:
            raise FpdeepError(f"boards: {boards} is more than the {MAX_BOARDS} boards fpdeep "
                              "plans in one chain")
        chain = (_resolve(board),) * boards
    else:
        chain = tuple(_resolve(b) for b in board)
        if not chain:
            raise FpdeepError("board: the list of boards is empty")
        if boards is not None and boards != len(chain):
            raise FpdeepError(
                f"boards ({boards!r}) does not match the {len(chain)} boards listed"
            )
    if precision not in PRECISIONS:
        raise FpdeepError(
            f"precision must be one of {', '.join(map(str, PRECISIONS))} bits, got {precision!r}"
        )
    if topology not in TOPOLOGIES:
        raise FpdeepError(f"topology {topology!r} is not supported; supported: chain")
    if pipelining not in PIPELINING:
        raise FpdeepError(f"pipelining must be one of image, row; got {pipelining!r}")
    require_positive_int("pixel_lanes", pixel_lanes)
    require_number_in("utilisation cap", util_cap, 0, 1)
    if link_gbps is not None:
        rate = require_positive_number("link rate", link_gbps, unit=" of Gb/s per direction")
        links = (rate,) * (len(chain) - 1)
    else:
        pairs = zip(chain[:-1], chain[1:], strict=True)
        links = tuple(min(a.link_gbps, b.link_gbps) for a, b in pairs)
    if clock_mhz is None:
        clock_mhz = min(b.clock_mhz for b in chain)
    require_number_in("clock", clock_mhz, 0, MAX_CLOCK_MHZ,
                      unit=" MHz (FPGA fabric clocks stay below 1 GHz)")
    return Cluster(
        boards=chain,
        link_gbps=links,
        precision=precision,
        clock_mhz=float(clock_mhz),
        util_cap=float(util_cap),
        topology=topology,
        pipelining=pipelining,
        pixel_lanes=pixel_lanes,
    )
