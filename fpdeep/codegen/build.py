"""`fpdeep build`: a plan turned into a folder of per-board RTL, a cluster top and a README.

The folder is written whole or not at all (``staged_output``), never over files fpdeep did not
write unless forced, and byte for byte the same for the same inputs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import fpdeep
from fpdeep.codegen.board import board_values, cluster_values, watchdog_limit
from fpdeep.codegen.fusesoc import core_files
from fpdeep.codegen.layout import board_layouts, program_words
from fpdeep.codegen.ports import board_modules, cluster_modules
from fpdeep.codegen.render import render
from fpdeep.codegen.vivado import SHELL_LIBRARY, project_files
from fpdeep.design.lower import BuildInfo, Design, design_document
from fpdeep.files import staged_output
from fpdeep.ir import Network
from fpdeep.ops.batchnorm import batchnorm_mode
from fpdeep.planning.planner import Plan
from fpdeep.resources import data_dir
from fpdeep.tables import markdown_text


def _json(data: Any) -> str:
    return json.dumps(data, indent=2, sort_keys=False) + "\n"


def board_tops(d: Design, network: Network, *, batch: int,
               layouts: list | None = None, step_cycles: int | None = None) -> list[str]:
    """The SystemVerilog of every board top, for stores of ``batch`` images; ``step_cycles``:
    the modelled step of that batch, which sets the watchdog (`watchdog_limit`)."""
    layouts = layouts or board_layouts(d, network, batch=batch)
    words = program_words(d, network, layouts)
    watchdog = watchdog_limit(step_cycles)
    return [render("board.sv.j2", board_values(d, b, layouts[b.index], words[b.index],
                                               watchdog=watchdog))
            for b in d.boards]


def board_units(d: Design, network: Network, *, batch: int,
                layouts: list | None = None) -> list[list[tuple[str, dict[str, Any], str]]]:
    """Per board, (module, parameters, instance name) of every instance its top has, in the
    top's order: what `fpdeep.planning.resources` costs."""
    layouts = layouts or board_layouts(d, network, batch=batch)
    words = program_words(d, network, layouts)
    return [[(inst.module, dict(inst.params), inst.name)
             for inst in board_values(d, b, layouts[b.index], words[b.index])["instances"]]
            for b in d.boards]


def store_figures(layouts: list) -> list[dict[str, Any]]:
    """Per board, the tensor store the RTL has: each bank's item, depth, word width and read
    ports (a port is a copy), its bits and BRAM36 blocks, and the board's totals."""
    return [layout.store.as_dict() for layout in layouts]


#: The top-level entries of a build folder (besides the model files).
BUILD_ENTRIES = ("plan.json", "design.json", "rtl", "sim", "vivado", "Makefile", "README.md")
MODEL_FILE = "model.onnx"


def emit(d: Design, plan: Plan, out: str | Path, *, network: Network,
         plan_report: dict[str, Any],
         model_files: dict[str, bytes], input_shape: tuple[int, ...] | None = None,
         force: bool = False, keep: tuple[str | Path, ...] = ()) -> Path:
    """Write the build folder ``out`` for design ``d`` lowered from ``plan``; returns its path.

    ``plan_report`` is ``plan.json`` (the `fpdeep plan --json` figures); ``model_files`` is the
    ONNX model (``model.onnx``, and its external data file if any), copied so the folder can be
    simulated on its own; ``keep`` are inputs that must not lie inside ``out``. The boards'
    stores hold the plan's mini-batch.
    """
    layouts = board_layouts(d, network, batch=plan.totals.batch)
    generated = plan_report.get("generated")
    step = generated.get("batch_cycles") if isinstance(generated, dict) else None
    tops = board_tops(d, network, batch=plan.totals.batch, layouts=layouts, step_cycles=step)
    if isinstance(plan_report.get("generated"), dict):
        plan_report = {**plan_report, "generated": {**plan_report["generated"],
                                                    "store": store_figures(layouts)}}
    if MODEL_FILE not in model_files:
        raise ValueError(f"model_files must hold {MODEL_FILE!r}")
    hw = data_dir("hw")
    # the library keeps hw/'s folders: rtl/hw/<component>/<module>.sv
    library = [m.path for m in cluster_modules()] + list(SHELL_LIBRARY)
    board_files = [f"../hw/{m.path}" for m in board_modules()]
    vendor = project_files(d, plan, board_sources=board_files)
    with staged_output(out, force=force, ours=(*BUILD_ENTRIES, *model_files),
                       keep=keep) as stage:
        for name, data in model_files.items():
            stage.write_bytes(name, data)
        stage.write("plan.json", _json(plan_report))
        info = BuildInfo(MODEL_FILE, tuple(input_shape) if input_shape else None,
                         batchnorm_mode(network))
        stage.write("design.json", _json(design_document(d, plan, info)))
        for path in library:
            stage.write_bytes(f"rtl/hw/{path}", (hw / path).read_bytes())
        summaries = []
        for b in d.boards:
            folder = f"rtl/board_{b.index}"
            stage.write(f"{folder}/{b.module}.sv", tops[b.index])
            stage.write(f"{folder}/files.f", render("filelist.f.j2", {
                "what": f"board {b.index}", "files": [*board_files, f"{b.module}.sv"]}))
            summaries.append(", ".join(markdown_text(f"{s.layer}[{s.lo}:{s.hi}]")
                                       for s in b.slices))
        stage.write("sim/cluster_top.sv", render("cluster_top.sv.j2", cluster_values(
            d, [layout.dram_bytes for layout in layouts])))
        stage.write("sim/files.f", render("filelist.f.j2", {
            "what": "the cluster simulation top",
            "files": [f"../rtl/hw/{path}" for path in library]
            + [f"../rtl/board_{b.index}/{b.module}.sv" for b in d.boards] + ["cluster_top.sv"]}))
        for path, text in vendor.files.items():
            stage.write(path, text)
        cores = core_files(d, library=[m.path for m in board_modules()] + list(SHELL_LIBRARY),
                           version=fpdeep.__version__)
        for path, text in cores.items():
            stage.write(path, text)
        names = sorted({b.name for b in plan.cluster.boards})
        stage.write("README.md", render("README.md.j2", {
            "model": markdown_text(d.model), "board_name": " + ".join(names),
            "strategy": plan.strategy,
            "precision": plan.cluster.precision, "clock_mhz": f"{plan.cluster.clock_mhz:g}",
            "boards": [{"index": b.index, "module": b.module, "summary": summary}
                       for b, summary in zip(d.boards, summaries, strict=True)],
            "vivado_boards": sorted({int(p.split("/")[1][len("board_"):])
                                     for p in vendor.files if p.startswith("vivado/")}),
            "vivado_notes": [markdown_text(n) for n in vendor.notes]}))
    return Path(out)


def source_list(file_list: str | Path) -> list[Path]:
    """The sources a build folder's ``files.f`` names, in its order, as paths (its entries are
    relative to its folder; ``#`` lines are comments)."""
    path = Path(file_list)
    return [path.parent / line.strip() for line in path.read_text().splitlines()
            if line.strip() and not line.lstrip().startswith("#")]
