"""FuseSoC CAPI2 cores of a build: ``rtl/hw/fpdeep_hw.core`` (the library, in compile order)
and ``rtl/board_<i>/fpdeep_board_<i>.core`` per board (its top, depending on the library),
so `fusesoc --cores-root DIR core list` finds them and each board's `lint` target runs
Verilator on it. Paths are relative to each core file, as CAPI2 wants."""

from __future__ import annotations

from collections.abc import Sequence

from fpdeep.design.lower import Design

#: The VLNV vendor and library of every core a build writes.
VENDOR = "fpdeep"
HW_CORE = f"{VENDOR}:hw:library"


def _core(name: str, description: str, files: Sequence[str], depend: Sequence[str],
          top: str | None, version: str) -> str:
    lines = ["CAPI=2:", "", f"name: {name}:{version}", f'description: "{description}"', "",
             "filesets:", "  rtl:", "    file_type: systemVerilogSource"]
    if depend:
        lines += ["    depend:", *(f"      - {d}" for d in depend)]
    lines += ["    files:", *(f"      - {f}" for f in files), "", "targets:", "  default:",
              "    filesets: [rtl]"]
    if top is not None:
        lines += ["  lint:", "    default_tool: verilator", "    filesets: [rtl]",
                  "    tools:", "      verilator:", "        mode: lint-only",
                  "        verilator_options: [-Wall]", f"    toplevel: {top}"]
    return "\n".join(lines) + "\n"


def core_files(d: Design, *, library: Sequence[str], version: str) -> dict[str, str]:
    """The cores of design ``d``; ``library`` are the library's files relative to rtl/hw/, in
    compile order. Keys are paths in the build folder."""
    files = {"rtl/hw/fpdeep_hw.core": _core(
        HW_CORE, "fpdeep hardware library", library, (), None, version)}
    for bd in d.boards:
        files[f"rtl/board_{bd.index}/{bd.module}.core"] = _core(
            f"{VENDOR}:board:board_{bd.index}", f"fpdeep board {bd.index} top", [
                f"{bd.module}.sv"], [f"{HW_CORE}:{version}"], bd.module, version)
    return files
