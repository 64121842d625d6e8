"""Running a compiled host session on a build's cluster top with either host, and reading
back what it recorded: the cocotb testbench (sim/tb_cluster.py, its build cached under
``DIR/sim/build``) or the native host (`fpdeep.cosim.native`, cached under ``DIR/sim/native``).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from fpdeep.errors import FpdeepError
from fpdeep.progress import Bar, Progress

from .script import read_outputs, write_script
from .session import Session, decode

if TYPE_CHECKING:
    from .run import Build

# in the work folder: the session compiled for the host, what it recorded, its progress
SCRIPT_FILE = "script.bin"
OUTPUTS_FILE = "outputs.bin"
PROGRESS_FILE = "progress.json"


def _follow(path: Path, stop: threading.Event, bar: Bar, unit: str,
            watch: Callable[[Bar], None] | None) -> None:
    """Show the host's progress file on ``bar`` (or let ``watch`` follow the run and show it)
    until ``stop`` is set."""
    speed = _Speed()
    while not stop.wait(0.5):
        if watch is not None:
            watch(bar)
            continue
        try:
            p = json.loads(path.read_text())
        except (OSError, ValueError):
            bar.update(0, "building the simulator")  # the host has not started yet
            continue
        detail = speed.show(p.get("cycle"))
        if p.get("configuring"):  # before the first step: weights and programs going in
            bar.update(0, "configuring the boards", detail=detail)
            continue
        bar.total = p["steps"] * p["tasks"]
        bar.update(p["step"] * p["tasks"] + p["task"],
                   step_note(unit, p["step"], p["steps"], reading=p.get("reading", False)),
                   detail=detail)


def step_note(unit: str, step: int, steps: int, *, reading: bool) -> str:
    """What a bar says at a host's PROGRESS operation: ``step 2 of 5`` (``, reading back``
    once the step has ended and its results are on their way back to the host)."""
    return f"{unit} {step + 1} of {steps}" + (", reading back" if reading else "")


class _Speed:
    """The simulated cycle a host's progress file reports, and the cycles per second since
    the file first reported one."""

    def __init__(self) -> None:
        self.first: tuple[int, float] | None = None

    def show(self, cycle: int | None) -> str:
        if cycle is None:
            return ""
        now = time.monotonic()
        if self.first is None or cycle < self.first[0]:
            self.first = (cycle, now)
        text = f"cycle {cycle:,}"
        done, seconds = cycle - self.first[0], now - self.first[1]
        if done and seconds > 0:
            text += f", {done / seconds:,.0f} cycles/s"
        return text


def cluster_sources(root: Path) -> list[Path]:
    """The cluster top's sources in compile order, as the build's sim/files.f lists them."""
    return [root / "sim" / line.strip() for line in
            (root / "sim" / "files.f").read_text().splitlines()
            if line.strip() and not line.startswith("#")]


def cocotb_model(root: Path, sources: list[Path],
                 simulator: str) -> tuple[Path, list[Path], Path | None]:
    """Where the cocotb host's model of the cluster top is built, from which sources, and
    where Verilator's run-time library is kept (None: in the build's folder):
    ``DIR/sim/build``; or, with a model cache ($FPDEEP_SIM_CACHE), its folder there named by
    the sources' content, built from a copy of them, so that every build folder of the same
    design finds it built (paths included: Verilator rebuilds for sources in new places)."""
    from fpdeep.cosim import simulator as sim

    cache = sim.model_cache()
    if cache is None:
        return root / "sim" / "build", sources, None
    names = []
    for k, source in enumerate(sources):
        name = Path(os.path.relpath(source, root))
        names.append(name if name.parts[0] != ".." else Path("outside", f"{k}_{source.name}"))
    digest = hashlib.sha256(sim.find_simulator(simulator).describe().encode() + b"\0")
    for name, source in zip(names, sources, strict=True):
        digest.update(name.as_posix().encode() + b"\0" + source.read_bytes() + b"\0")
    folder = cache / "cocotb" / digest.hexdigest()[:16]
    copies = [folder / "src" / name for name in names]
    folder.mkdir(parents=True, exist_ok=True)
    with sim.build_lock(folder):
        done = folder / "src" / ".complete"
        if not done.is_file():
            for source, copy in zip(sources, copies, strict=True):
                copy.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, copy)
            done.touch()
    return folder, copies, cache / "cocotb" / sim.RUNTIME_CACHE


def run_session(build: Build, session: Session, work: Path, *, host: str, simulator: str,
                threads: int, max_cycles: int, progress: Progress,
                bar: tuple[str, int], unit: str = "step", pause: bool = False,
                watch: Callable[[Bar], None] | None = None
                ) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Run ``session`` with ``host`` in folder ``work``: (the host's figures, every traced
    tensor), decoded by `fpdeep.cosim.session.decode`. Raises FpdeepError when the host cannot
    run or a packet or step failed. ``bar``: the progress bar's label and length, in ``unit``s.
    ``pause``: the cocotb host's stream drivers pause at times (back-pressure in both
    directions, as a busy host gives). ``watch(bar)``, when given, is called every half second
    from another thread while the host runs, instead of showing its progress file: it may
    follow the host's outputs file (`fpdeep.cosim.script.OutputsReader`) as it grows."""
    from fpdeep.cosim import native
    from fpdeep.cosim import simulator as sim

    root = build.root
    work.mkdir(parents=True, exist_ok=True)
    for stale in (OUTPUTS_FILE, PROGRESS_FILE):
        (work / stale).unlink(missing_ok=True)
    write_script(work / SCRIPT_FILE, session.script())
    sources = cluster_sources(root)
    if host == "native":
        progress.step("building cluster_top with its native host",
                      f"(cached in {root / 'sim' / 'native'})")
        exe = native.build_native(root, build.design, sources, threads=threads)
    else:
        build_root, model_sources, runtime = cocotb_model(root, sources, simulator)
        progress.step(f"building cluster_top with {simulator}", f"(cached in {build_root})")
    error = None
    with progress.bar(*bar) as shown:
        stop = threading.Event()
        follower = threading.Thread(target=_follow, daemon=True,
                                    args=(work / PROGRESS_FILE, stop, shown, unit, watch))
        follower.start()
        try:
            if host == "native":
                native.run_native(exe, work / SCRIPT_FILE, work / OUTPUTS_FILE,
                                  work / PROGRESS_FILE, work / "native.log")
            else:
                args = {"script": str(work / SCRIPT_FILE), "outputs": str(work / OUTPUTS_FILE),
                        "progress": str(work / PROGRESS_FILE), "pause": pause}
                sim.run_cocotb(toplevel="cluster_top", sources=model_sources,
                               test_module="tb_cluster", build_root=build_root,
                               test_dir=work, tb_args=args, simulator=simulator,
                               top_ports_only=True, runtime_cache=runtime)
        except FpdeepError as exc:
            error = exc
        finally:
            stop.set()
            follower.join()
    if error is not None:
        raise error
    if not (work / OUTPUTS_FILE).is_file():
        raise FpdeepError(f"the simulation of {root.name} wrote no results; see "
                          f"{work / ('native.log' if host == 'native' else 'sim.log')}")
    figures, record = decode(session, read_outputs(work / OUTPUTS_FILE), max_cycles=max_cycles)
    if figures["error"]:
        raise FpdeepError(f"simulation of {root.name} stopped: {figures['error']}")
    return figures, record
