"""Per-board Vivado projects (through edalize), the shells they build, and FuseSoC cores.

For every board whose board file has the `[shell]` tables, `project_files` gives
``vivado/board_<i>/``: the shell top, its IP script (`create_ip`), its XDC and the project
scripts and Makefile edalize's Vivado backend writes; ``Makefile`` at the top runs them all.
A board that cannot have a project yet gets a line saying why, never a broken project.
"""

from __future__ import annotations

import posixpath
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from fpdeep.codegen.render import render
from fpdeep.codegen.shell import Shell, neighbour_sides, shell_design
from fpdeep.design.lower import Design
from fpdeep.errors import FpdeepError
from fpdeep.hwlib.library import RESET_SYNC
from fpdeep.planning.planner import Plan

#: Vivado runs `make bitstreams` starts at once (each takes tens of GB on a large part).
VIVADO_JOBS = 2
#: The RTL of the shell besides the board's own sources, relative to rtl/hw/.
SHELL_LIBRARY = (RESET_SYNC.path,)


@dataclass(frozen=True)
class VendorProjects:
    files: dict[str, str]  # path in the build folder -> text
    notes: tuple[str, ...]  # why boards get no project, a line per reason


def board_notes(d: Design, plan: Plan) -> list[str]:
    """Why the boards that get no Vivado project get none, a line per reason (empty when all
    get one)."""
    return _notes(_shells(d, plan))


def _shells(d: Design, plan: Plan) -> list[tuple[int, str, Shell | None]]:
    """Each board's shell, or (board, why it has none, None)."""
    out = []
    for bd, board in zip(d.boards, plan.cluster.boards, strict=True):
        try:
            shell = shell_design(d, bd, board, sides=neighbour_sides(bd.index, len(d.boards)),
                                 clock_mhz=plan.cluster.clock_mhz)
        except FpdeepError as exc:
            out.append((bd.index, f"({board.name}): {exc}", None))
            continue
        out.append((bd.index, "", shell))
    return out


def _notes(shells: list[tuple[int, str, Shell | None]]) -> list[str]:
    """A line per reason boards get no project, naming the boards it holds for: a chain of 64
    boards without shell tables is one line."""
    reasons: dict[str, list[int]] = {}
    for index, why, shell in shells:
        if shell is None:
            reasons.setdefault(why, []).append(index)
    return [f"no Vivado project: board{'s' if len(boards) > 1 else ''} {_board_list(boards)} "
            f"{why}" for why, boards in reasons.items()]


def _board_list(boards: list[int]) -> str:
    """'0-3, 5, 7-9' for boards 0, 1, 2, 3, 5, 7, 8, 9 (in order)."""
    runs: list[list[int]] = []
    for b in boards:
        if runs and b == runs[-1][-1] + 1:
            runs[-1].append(b)
        else:
            runs.append([b])
    return ", ".join(f"{r[0]}-{r[-1]}" if len(r) > 2 else ", ".join(map(str, r)) for r in runs)


def _edalize(name: str, top: str, files: list[tuple[str, str]], part: str) -> dict[str, str]:
    """The project scripts and Makefile edalize's Vivado flow writes for ``files``
    ((path, file type), relative to the project folder)."""
    from edalize.flows.vivado import Vivado

    # SYNTHESIS: the RAMs leave their zero contents to configuration (hw/common/fpdeep_sdp_ram)
    edam = {"name": name, "toplevel": top,
            "files": [{"name": path, "file_type": kind} for path, kind in files],
            "parameters": {"SYNTHESIS": {"datatype": "bool", "paramtype": "vlogdefine",
                                         "default": True}},
            "flow_options": {"part": part, "jobs": VIVADO_JOBS}}
    with tempfile.TemporaryDirectory(prefix="fpdeep-vivado-") as tmp:
        Vivado(edam, tmp).configure()
        return {p.name: p.read_text() for p in sorted(Path(tmp).iterdir()) if p.is_file()}


def project_files(d: Design, plan: Plan, *, board_sources: Sequence[str]) -> VendorProjects:
    """The vendor project files of every board; ``board_sources`` are a board's RTL files
    before its top, relative to ``rtl/board_<i>/``."""
    files: dict[str, str] = {}
    built: list[int] = []
    shells = _shells(d, plan)
    for index, _, shell in shells:
        if shell is None:
            continue
        board = plan.cluster.boards[index]
        folder = f"vivado/board_{index}"
        values = {"index": index, "board_title": board.title, "s": shell,
                  "module": shell.module, "part": board.part, "cores": shell.cores,
                  "pins": shell.pins, "clocks": shell.clocks, "async_pins": shell.async_pins,
                  "plan_period": f"{1000.0 / shell.plan_mhz:.3f}",
                  "plan_mhz": f"{shell.plan_mhz:g}",
                  "sources": sorted(board.shell.sources.items()) if board.shell else []}
        files[f"{folder}/{shell.module}.sv"] = render("shell.sv.j2", values)
        files[f"{folder}/ip.tcl"] = render("shell_ip.tcl.j2", values)
        files[f"{folder}/{shell.module}.xdc"] = render("shell.xdc.j2", values)
        rtl = [posixpath.normpath(f"../../rtl/board_{index}/{path}") for path in
               (*board_sources, f"{shell.board_module}.sv")]
        rtl[:0] = [f"../../rtl/hw/{path}" for path in SHELL_LIBRARY]
        sources = [*((p, "systemVerilogSource") for p in rtl),
                   (f"{shell.module}.sv", "systemVerilogSource"), ("ip.tcl", "tclSource"),
                   (f"{shell.module}.xdc", "xdc")]
        for name, text in _edalize(f"board_{index}", shell.module, sources, board.part).items():
            files[f"{folder}/{name}"] = text
        built.append(index)
    files["Makefile"] = render("bitstreams.mk.j2", {"boards": built, "jobs": VIVADO_JOBS})
    return VendorProjects(files, tuple(_notes(shells)))
