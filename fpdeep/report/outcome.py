"""`fpdeep report DIR`: the plan's figures beside what the simulation of the build measured."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fpdeep.errors import FpdeepError
from fpdeep.files import read_json
from fpdeep.planning import perf
from fpdeep.tables import format_table, printable


def load_outcome(folder: str | Path) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """(plan.json, sim/result.json or None) of a build folder."""
    root = Path(folder)
    plan_file = root / "plan.json"
    if not plan_file.is_file():
        raise FpdeepError(f"{str(root)!r} is not an fpdeep build folder (no plan.json); "
                          "create one with `fpdeep build MODEL ... -o DIR`")
    result_file = root / "sim" / "result.json"
    resimulate = f"run `fpdeep sim {root}` again for the figures this report compares"
    result = read_json(result_file, resimulate) if result_file.is_file() else None
    if result is not None and not (isinstance(result, dict) and result.keys() >= RESULT_KEYS):
        raise FpdeepError(f"{result_file} was written by an older fpdeep or is damaged; "
                          + resimulate)
    return load_plan(root), result


def load_plan(root: Path) -> dict[str, Any]:
    """A build folder's plan.json, checked to be one fpdeep wrote."""
    plan_file = root / "plan.json"
    remake = f"rebuild the folder with `fpdeep build MODEL ... -o {root} --force`"
    plan = read_json(plan_file, remake)
    if not (isinstance(plan, dict) and plan.keys() >= PLAN_KEYS):
        raise FpdeepError(f"{plan_file} is not a plan fpdeep wrote; {remake}")
    return plan


PLAN_KEYS = frozenset({"model", "boards", "strategy", "totals"})

#: What a report reads of sim/result.json.
RESULT_KEYS = frozenset({"match", "mismatches", "steps", "batch", "cycles", "modelled_cycles",
                         "cycle_error", "images_per_s_at_clock", "loss", "planner_ii_cycles",
                         "planner_bottleneck", "resources"})


def ideal_batch_cycles(totals: Mapping[str, Any], batch: int) -> int:
    """The ideal pipeline's step from plan.json's totals."""
    return perf.ideal_batch_cycles(batch=batch, ii_cycles=totals["ii_cycles"],
                                   latency_cycles=totals["latency_cycles"])


def _per_s(batch: int, cycles: int, totals: Mapping[str, Any]) -> float:
    return perf.images_per_second_batch(batch=batch, batch_cycles=cycles,
                                        clock_mhz=totals["clock_mhz"])


def outcome_json(plan: dict[str, Any], result: dict[str, Any] | None) -> dict[str, Any]:
    """Plan totals and measured figures side by side (the `--json` form of the report)."""
    t = plan["totals"]
    out: dict[str, Any] = {"model": plan["model"], "boards": len(plan["boards"]),
                           "strategy": plan["strategy"], "plan": t, "simulation": result}
    if result is not None:
        batch = result["batch"]
        out["comparison"] = {
            "planner_batch_cycles": result["modelled_cycles"],
            "ideal_pipeline_cycles": ideal_batch_cycles(t, batch),
            "measured_cycles": result["cycles"],
            "planner_images_per_s": _per_s(batch, result["modelled_cycles"], t),
            "measured_images_per_s": result["images_per_s_at_clock"],
        }
    return out


def outcome_text(plan: dict[str, Any], result: dict[str, Any] | None) -> str:
    t = plan["totals"]
    lines = [f"{printable(plan['model'])} on {len(plan['boards'])} board(s) "
             f"({', '.join(sorted(set(b['board'] for b in plan['boards'])))}), partition "
             f"{plan['strategy']}, {t['clock_mhz']:g} MHz", ""]
    if result is None:
        lines.append("not simulated yet: run `fpdeep sim DIR` for the measured figures")
        return "\n".join(lines) + "\n"
    batch = result["batch"]
    ideal = ideal_batch_cycles(t, batch)
    measured = sum(result["cycles"]) / len(result["cycles"])
    modelled = result["modelled_cycles"]
    rows = [
        [f"cycles per step (batch {batch})", f"{modelled:,}", f"{measured:,.0f}", f"{ideal:,}"],
        ["images/s", f"{_per_s(batch, modelled, t):,.0f}",
         f"{result['images_per_s_at_clock']:,.0f}", f"{_per_s(batch, ideal, t):,.0f}"],
        ["II (cycles per image)", f"{result['planner_ii_cycles']:,}", "", f"{t['ii_cycles']:,}"],
    ]
    lines.append(format_table(["figure", "planner (generated design)", "simulated",
                               "ideal pipeline"], rows))
    lines.append("")
    lines.append(f"simulated vs planner: {result['cycle_error']:+.2%}; the pipeline's bottleneck "
                 f"is {result['planner_bottleneck']}")
    lines.append("ideal pipeline: the planner's figure (every engine, unit and link busy on "
                 "an image while the others work on others, operands loaded while an engine "
                 "computes), what later generations aim at")
    resources = result.get("resources") or []
    if resources:
        # engines and units; a link's receiving side counts the cycles it is armed, waiting
        busiest = max((r for r in resources if r["modelled"] is not None),
                      key=lambda r: r["busy"], default=max(resources, key=lambda r: r["busy"]))
        lines.append(f"busiest resource: board {busiest['board']} "
                     f"{printable(busiest['resource'])}, running "
                     f"{busiest['busy_share']:.1%} of the step")
        engines = [r for r in resources if r.get("engine")]
        if engines:
            top = max(engines, key=lambda r: r["busy"])
            lines.append(f"busiest engine: board {top['board']} {printable(top['resource'])}, "
                         f"running {top['busy']:,} of the {top['window']:,} cycles from its "
                         f"first start to its last done ({top['window_share']:.1%})")
        lines.append("")
        lines.append("cycles each engine, unit and link ran (an engine: its runs) and waited in "
                     "the first step, the cycles from its first to its last active one (CSR "
                     "counters), and the cycles the model gives it to run:")
        lines.append(format_table(
            ["board", "resource", "ran", "waited", "window", "modelled"],
            [[str(r["board"]), printable(r["resource"]), f"{r['busy']:,}", f"{r['stall']:,}",
              f"{r['window']:,}", "" if r["modelled"] is None else f"{r['modelled']:,}"]
             for r in resources],
            right=[True, False, True, True, True, True]))
        lines.append("")
    losses = ", ".join(f"{v:.4f}" for v in result["loss"])
    verdict = "bit-exact with the golden model" if result["match"] else (
        f"{len(result['mismatches'])} MISMATCHES with the golden model")
    lines.append(f"{result['steps']} step(s) of batch {batch}: {verdict}; loss per step {losses}")
    for m in result["mismatches"][:10]:
        lines.append(f"  {m}")
    return "\n".join(lines) + "\n"
