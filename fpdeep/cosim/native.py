"""The compiled host: the cluster top Verilated together with sim/native_host.cpp, built once
per content and run on a host script (`fpdeep.cosim.script`) with no Python in the loop.

The build is cached under ``DIR/sim/native/<hash>``, the hash taken over everything that goes
into it (the RTL, the host program, the generated port bindings, Verilator's version and the
options), so a second run of the same design starts at once and a changed design rebuilds.
With $FPDEEP_SIM_CACHE set, the build is kept there under the same hash, for every build folder
of the same design, and ``DIR/sim/native/<hash>`` links to it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from fpdeep.codegen.board import top_ports
from fpdeep.codegen.render import header
from fpdeep.design.lower import Design
from fpdeep.errors import FpdeepError
from fpdeep.resources import data_dir

from .simulator import (
    RUNTIME_CACHE,
    VERILATOR_ARGS,
    VERILATOR_MAKE_ARGS,
    Simulator,
    build_lock,
    find_simulator,
    model_cache,
)

HOST_SOURCE = "native_host.cpp"
PORTS_HEADER = "fpdeep_host_ports.h"
EXECUTABLE = "native_host"
#: The host-facing ports of a board and the names the host program gives them.
_HOST_PREFIXES = {"s_axis_host_": "s_", "m_axis_host_": "m_", "s_axil_": ""}


def _ctype(width: int) -> str:
    """Verilator's C++ type of a port ``width`` bits wide."""
    for limit, name in ((8, "CData"), (16, "SData"), (32, "IData"), (64, "QData")):
        if width <= limit:
            return name
    raise FpdeepError(f"a host port of {width} bits is wider than the native host drives "
                      "(64 bits)")


def ports_header(design: Design) -> str:
    """The C++ binding of every board's host ports on the Verilated cluster top (its ports are
    named b<index>_<port>, as templates/cluster_top.sv.j2 names them)."""
    fields = []
    for port in top_ports(design):
        for prefix, short in _HOST_PREFIXES.items():
            if port.name.startswith(prefix):
                fields.append((short + port.name[len(prefix):], port.name, _ctype(port.width)))
    lines = [header(), "#pragma once", '#include "Vcluster_top.h"', "#include <vector>", "",
             "struct BoardPorts {"]
    lines += [f"    {ctype}* {name};" for name, _, ctype in fields]
    lines += ["};", "", "inline std::vector<BoardPorts> bind_ports(Vcluster_top* t) {",
              "    std::vector<BoardPorts> boards;"]
    for b in design.boards:
        lines.append("    boards.push_back(BoardPorts{" + ", ".join(
            f"&t->b{b.index}_{port}" for _, port, _ in fields) + "});")
    lines += ["    return boards;", "}", ""]
    return "\n".join(lines)


def compiler() -> str:
    """The C++ compiler the build uses ($CXX, else c++), or a clear error when there is none."""
    name = os.environ.get("CXX", "c++")
    found = shutil.which(name)
    if found is None:
        raise FpdeepError(f"the native host needs a C++ compiler and {name!r} was not found "
                          f"({'from $CXX' if 'CXX' in os.environ else 'on PATH'}); install "
                          "one (e.g. g++) or set CXX, or run with --host cocotb")
    return found


def build_native(root: Path, design: Design, sources: Sequence[Path], *,
                 threads: int = 1) -> Path:
    """The native host executable of the cluster top in ``sources`` (built unless cached)."""
    cxx = compiler()
    sim = find_simulator("verilator")
    host = data_dir("sim") / HOST_SOURCE
    bindings = ports_header(design)
    options = [*VERILATOR_ARGS,
               *(["--threads", str(threads), "-LDFLAGS", "-pthread"] if threads > 1 else [])]
    digest = hashlib.sha256()
    for part in (sim.describe(), cxx, " ".join([*options, *VERILATOR_MAKE_ARGS]), bindings):
        digest.update(part.encode() + b"\0")
    for path in (host, *sources):
        digest.update(Path(path).read_bytes() + b"\0")
    key = digest.hexdigest()[:16]
    cache = model_cache()
    folder = (root / "sim" if cache is None else cache) / "native" / key
    folder.parent.mkdir(parents=True, exist_ok=True)
    with build_lock(folder):  # another process building the same: wait for it and reuse it
        exe = folder / "obj" / EXECUTABLE
        if not exe.is_file():
            _build(sim, cxx, folder, bindings, options, [host, *sources])
    if cache is not None:
        _link(root / "sim" / "native" / key, folder)
    return exe


def _build(sim: Simulator, cxx: str, folder: Path, bindings: str, options: Sequence[str],
           sources: Sequence[Path]) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    obj = folder / "obj"
    obj.mkdir(parents=True)
    # beside the model, where make's -I. finds it (an -I of this folder would make the
    # run-time library's compile commands differ from design to design)
    (obj / PORTS_HEADER).write_text(bindings)
    env = sim.environ(os.environ)
    # the wheel's verilated.mk names the compiler of the machine the wheel was built on
    env["MAKEFLAGS"] = f"{env.get('MAKEFLAGS', '')} CXX={cxx} LINK={cxx}".strip()
    verilate = [str(sim.executable), "--cc", "--exe", "-Mdir", str(obj), "--top-module",
                "cluster_top", "--prefix", "Vcluster_top", "-o", EXECUTABLE, "--timescale",
                "1ns/1ps", *options, *(str(s) for s in sources)]
    # make through verilated_runtime: Verilator's run-time library compiled once per cache
    make = [sys.executable, str(Path(__file__).with_name("verilated_runtime.py")),
            str(folder.parent / RUNTIME_CACHE), str(obj), "make", "-C", str(obj), "-f",
            "Vcluster_top.mk", "-j", str(os.cpu_count() or 1), *VERILATOR_MAKE_ARGS]
    log = folder / "build.log"
    with log.open("w") as out:
        proc = subprocess.run(verilate, stdout=out, stderr=subprocess.STDOUT, env=env,
                              check=False)
        if proc.returncode == 0:
            proc = subprocess.run(make, stdout=out, stderr=subprocess.STDOUT, env=env,
                                  check=False)
    if proc.returncode != 0 or not (obj / EXECUTABLE).is_file():
        tail = log.read_text(errors="replace")[-2000:]
        raise FpdeepError(f"building the native host with {sim.describe()} failed; build log "
                          f"{log}:\n{tail}")


def _link(link: Path, target: Path) -> None:
    """``link`` names the build ``target`` in the model cache (a folder of an earlier build
    without the cache stays)."""
    if link.is_symlink() and link.resolve() == target:
        return
    if link.is_symlink():
        link.unlink()
    if not link.exists():
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(target, target_is_directory=True)


def run_native(exe: Path, script: Path, outputs: Path, progress: Path, log: Path) -> None:
    """Run the native host on ``script``; its answers go to ``outputs``."""
    with log.open("w") as out:
        proc = subprocess.run([str(exe), str(script), str(outputs), str(progress)], stdout=out,
                              stderr=subprocess.STDOUT, check=False)
    if proc.returncode != 0:
        raise FpdeepError(f"the native host stopped with exit status {proc.returncode}; log "
                          f"{log}:\n{log.read_text(errors='replace')[-2000:]}")
