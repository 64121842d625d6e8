"""`fpdeep report DIR`: the plan's figures beside what the simulation of the build measured."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fpdeep.errors import FpdeepError
from fpdeep.tables import format_table


def load_outcome(folder: str | Path) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """(plan.json, sim/result.json or None) of a build folder."""
    root = Path(folder)
    plan_file = root / "plan.json"
    if not plan_file.is_file():
        raise FpdeepError(f"{str(root)!r} is not an fpdeep build folder (no plan.json); "
                          "create one with `fpdeep build MODEL ... -o DIR`")
    result_file = root / "sim" / "result.json"
    result = json.loads(result_file.read_text()) if result_file.is_file() else None
    return json.loads(plan_file.read_text()), result


def outcome_json(plan: dict[str, Any], result: dict[str, Any] | None) -> dict[str, Any]:
    """Plan totals and measured figures side by side (the `--json` form of the report)."""
    t = plan["totals"]
    out: dict[str, Any] = {"model": plan["model"], "boards": len(plan["boards"]),
                           "strategy": plan["strategy"], "plan": t, "simulation": result}
    if result is not None:
        batch = result["batch"]
        out["comparison"] = {
            "planner_batch_cycles": (batch - 1) * t["ii_cycles"] + t["latency_cycles"],
            "generated_model_cycles": result["modelled_cycles"],
            "measured_cycles": result["cycles"],
            "planner_images_per_s": t["images_per_s"],
            "measured_images_per_s": result["images_per_s_at_clock"],
        }
    return out


def outcome_text(plan: dict[str, Any], result: dict[str, Any] | None) -> str:
    t = plan["totals"]
    lines = [f"{plan['model']} on {len(plan['boards'])} board(s) "
             f"({', '.join(sorted(set(b['board'] for b in plan['boards'])))}), partition "
             f"{plan['strategy']}, {t['clock_mhz']:g} MHz", ""]
    if result is None:
        lines.append("not simulated yet: run `fpdeep sim DIR` for the measured figures")
        return "\n".join(lines) + "\n"
    batch = result["batch"]
    planner = (batch - 1) * t["ii_cycles"] + t["latency_cycles"]
    measured = sum(result["cycles"]) / len(result["cycles"])
    rows = [
        [f"cycles per step (batch {batch})", f"{planner:,}", f"{result['modelled_cycles']:,}",
         f"{measured:,.0f}"],
        ["images/s", f"{t['images_per_s_batch']:,.0f}", "",
         f"{result['images_per_s_at_clock']:,.0f}"],
        ["engine phases (cycles)", "", f"{result['engine_phases']['modelled']:,}",
         f"{result['engine_phases']['measured']:,}"],
    ]
    lines.append(format_table(["figure", "planner (pipelined)", "generated design model",
                               "simulated"], rows))
    lines.append("")
    lines.append(f"cycle error of the generated design's model: {result['cycle_error']:+.2%}")
    lines.append("the planner models a fully overlapped pipeline; this generation runs phases in "
                 "order (see the build's README)")
    if result.get("breakdown"):
        total = sum(v["measured"] for v in result["breakdown"].values()) or 1
        lines.append("")
        lines.append("where a step's cycles go (first step):")
        lines.append(format_table(
            ["phases", "simulated", "modelled", "share"],
            [[k, f"{v['measured']:,}", f"{v['modelled']:,}", f"{v['measured'] / total:.0%}"]
             for k, v in result["breakdown"].items()], right=[False, True, True, True]))
        lines.append("")
    losses = ", ".join(f"{v:.4f}" for v in result["loss"])
    verdict = "bit-exact with the golden model" if result["match"] else (
        f"{len(result['mismatches'])} MISMATCHES with the golden model")
    lines.append(f"{result['steps']} step(s) of batch {batch}: {verdict}; loss per step {losses}")
    for m in result["mismatches"][:10]:
        lines.append(f"  {m}")
    return "\n".join(lines) + "\n"
