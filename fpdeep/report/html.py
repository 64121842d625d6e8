"""HTML reports: the page of `fpdeep plan --html` and the page of `fpdeep report DIR --html`.

Every plot is made in two steps: a pure values function turns the figures of the `--json`
output into a plain dict, and a renderer draws that dict with matplotlib as inline SVG. The page
embeds the same dict beside the plot as ``<script type="application/json" data-plot=NAME>``, so
what is drawn can be checked against `--json`. Pages are self-contained: no executable script,
nothing fetched.
"""

from __future__ import annotations

import html
import io
import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import matplotlib
from matplotlib.figure import Figure
from matplotlib.ticker import (
    EngFormatter,
    FixedLocator,
    MaxNLocator,
    PercentFormatter,
    StrMethodFormatter,
)

from fpdeep import __version__
from fpdeep.planning.planner import PASSES, Plan
from fpdeep.report.outcome import outcome_json, outcome_text
from fpdeep.report.plan import LINEAR_FRACTION, knees, plan_json, plan_text, sweep_text
from fpdeep.schedule.tasks import PipelineFigures

# Series key -> (legend label, colour); the colours are matplotlib's "tab10".
_STYLE = {
    "fp": ("FP", "#1f77b4"), "bp": ("BP", "#ff7f0e"), "wg": ("WG", "#2ca02c"),
    "dsp": ("DSP used", "#1f77b4"), "dsp_busy": ("DSP busy (% of II)", "#9467bd"),
    "bram": ("BRAM", "#ff7f0e"), "uram": ("URAM", "#2ca02c"),
    "link": ("line rate needed", "#d62728"),
    "planner": ("planner (generated design)", "#1f77b4"), "simulated": ("simulated", "#ff7f0e"),
    "ideal": ("ideal pipeline", "#7f7f7f"), "modelled": ("modelled", "#1f77b4"),
}

# Glyphs as paths: the browser then draws exactly the text matplotlib measured when it laid
# out the figure, so no label is clipped or overlaps whatever fonts the viewer has.
_RC = {"svg.fonttype": "path", "svg.hashsalt": "fpdeep", "text.parse_math": False,
       "font.size": 9, "axes.spines.top": False, "axes.spines.right": False}
_WIDTH_IN = 7.5


# ------------------------------------------------------------------------------ values (pure)


def _slowest(board: Mapping[str, Any], step: str) -> int | None:
    cycles = [s["engines"][step]["cycles"] for s in board["slices"] if s["engines"][step]]
    return max(cycles, default=None)


def _dsp_busy(board: Mapping[str, Any], ii: int) -> float:
    """Share of the allocated DSPs' cycles in one II that do work (engines idle once done)."""
    work = sum(e["cycles"] * e["dsp"] for s in board["slices"] for e in s["engines"].values()
               if e)
    return 100 * work / (board["dsp_used"] * ii) if board["dsp_used"] else 0.0


def board_load_values(plan: Mapping[str, Any]) -> dict[str, Any]:
    """Per board and pass, the cycles per image of its slowest engine (a board's engines run
    side by side, so the slowest sets its pace), with the planner's II and the generated
    design's; None where a board has no engine of that pass. ``plan`` is plan_json's dict."""
    return {
        "boards": [b["index"] for b in plan["boards"]],
        "cycles_per_image": {p: [_slowest(b, p) for b in plan["boards"]] for p in PASSES},
        "ii_cycles": plan["totals"]["ii_cycles"],
        "bottleneck": plan["totals"]["bottleneck"],
        "generated_ii_cycles": plan.get("generated", {}).get("ii_cycles"),
    }


def _percent(used: int, available: int) -> float | None:
    return 100 * used / available if available else None


def _memory_percent(board: Mapping[str, Any], kind: str) -> float | None:
    """% of the board's block RAM or UltraRAM ``kind``: the whole generated board's (engines,
    units and tensor store) once the plan is lowered, else the planner's estimate of its
    tensors' bits."""
    if board.get("resources"):
        used = board["resources"]["bram36" if kind == "bram" else "uram"]
        return _percent(used, board[f"{kind}_blocks_available"])
    return _percent(board[f"{kind}_bits_used"], board[f"{kind}_bits_available"])


def resource_values(plan: Mapping[str, Any]) -> dict[str, Any]:
    """Per board, % of its DSP, BRAM and URAM the plan uses (None: the board has none) and how
    busy the allocated DSPs are."""
    boards = plan["boards"]
    ii = plan["totals"]["ii_cycles"]
    return {
        "boards": [b["index"] for b in boards],
        "percent": {
            "dsp": [_percent(b["dsp_used"], b["dsp_available"]) for b in boards],
            "dsp_busy": [_dsp_busy(b, ii) for b in boards],
            "bram": [_memory_percent(b, "bram") for b in boards],
            "uram": [_memory_percent(b, "uram") for b in boards],
        },
    }


def link_values(plan: Mapping[str, Any]) -> dict[str, Any] | None:
    """Per cut, the line rate the plan's throughput needs, as % of the link's."""
    if not plan["links"]:
        return None
    return {"links": [f"{lk['from']}\N{RIGHTWARDS ARROW}{lk['to']}" for lk in plan["links"]],
            "percent": [100 * lk["utilisation"] for lk in plan["links"]]}


def scaling_values(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """Throughput per board count from sweep_rows: planner (steady and per batch), ideal
    linear, and the generated design per batch where `build` would succeed (else None, and
    the reason in ``not_buildable``)."""
    ok = [r for r in rows if "error" not in r]
    if not ok:
        return None
    generated = [r.get("generated", {}) for r in ok]
    return {
        "boards": [r["boards"] for r in ok],
        "images_per_s": [r["images_per_s"] for r in ok],
        "images_per_s_batch": [r["images_per_s_batch"] for r in ok],
        "ideal_images_per_s": [r["ideal_images_per_s"] for r in ok],
        "generated_images_per_s_batch": [g.get("images_per_s_batch") for g in generated],
        "not_buildable": {str(r["boards"]): g["error"] for r, g in zip(ok, generated, strict=True)
                          if "error" in g},
        "knees": knees(rows),
    }


def step_values(outcome: Mapping[str, Any]) -> dict[str, Any] | None:
    """Cycles of each simulated step beside the planner's and the ideal pipeline's, from
    outcome_json's dict; None before a simulation."""
    c = outcome.get("comparison")
    if c is None:
        return None
    return {"batch": outcome["simulation"]["batch"],
            "steps": list(range(1, len(c["measured_cycles"]) + 1)),
            "planner": c["planner_batch_cycles"], "simulated": c["measured_cycles"],
            "ideal": c["ideal_pipeline_cycles"]}


def breakdown_values(outcome: Mapping[str, Any]) -> dict[str, Any] | None:
    """Cycles each resource ran in the first simulated step (CSR counters) and the cycles the
    model gives it, for the busiest resources."""
    resources = (outcome.get("simulation") or {}).get("resources")
    if not resources:
        return None
    top = sorted((r for r in resources if r["modelled"] is not None),
                 key=lambda r: -r["busy"])[:12]
    return {"kinds": [f"{r['board']}:{r['resource']}" for r in top],
            "simulated": [r["busy"] for r in top],
            "modelled": [r["modelled"] for r in top]}


# --------------------------------------------------------------------------- drawing (SVG)


def _new_axes(height_in: float) -> tuple[Figure, Any]:
    fig = Figure(figsize=(_WIDTH_IN, height_in))
    return fig, fig.subplots()


def _bars(ax: Any, series: Mapping[str, Sequence[float | None]], *,
          horizontal: bool = False) -> None:
    """Grouped bars at positions 0..n-1, one colour per series; None draws no bar, and a
    series with no bar at all gets no slot and no legend entry."""
    series = {k: v for k, v in series.items() if any(x is not None for x in v)}
    width = 0.8 / max(len(series), 1)
    for j, (key, values) in enumerate(series.items()):
        offset = (j - (len(series) - 1) / 2) * width
        at = [i + offset for i, v in enumerate(values) if v is not None]
        heights = [v for v in values if v is not None]
        label, colour = _STYLE[key]
        draw = ax.barh if horizontal else ax.bar
        draw(at, heights, width, label=label, color=colour)
    if not horizontal and all(len(v) == 1 for v in series.values()):
        ax.set_xlim(-1.5, 1.5)  # a lone group would stretch over the whole axis


def _finish(fig: Figure, ax: Any, title: str, *, grid: str = "y") -> Figure:
    ax.set_title(title, loc="left")
    # Outside the axes the legend never hides a bar or a line.
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    ax.grid(axis=grid, color="#dddddd", linewidth=0.6)
    ax.set_axisbelow(True)
    return fig


def _board_axis(ax: Any, boards: Sequence[int]) -> None:
    ax.set_xlabel("board")
    if len(boards) <= 16:
        ax.xaxis.set_major_locator(FixedLocator(range(len(boards))))
        ax.set_xticklabels([str(b) for b in boards])
    else:  # boards are numbered 0..n-1, so positions are the numbers
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def _cycles_formatter() -> Any:
    return StrMethodFormatter("{x:,.0f}")


def draw_board_load(values: Mapping[str, Any]) -> Figure:
    fig, ax = _new_axes(3.0)
    _bars(ax, values["cycles_per_image"])
    ax.axhline(values["ii_cycles"], color="black", linestyle="--", linewidth=1,
               label=f"II, planner ({values['ii_cycles']:,}: {values['bottleneck']})")
    if values["generated_ii_cycles"] is not None:
        ax.axhline(values["generated_ii_cycles"], color="#d62728", linestyle=":", linewidth=1.2,
                   label=f"II, generated design ({values['generated_ii_cycles']:,})")
    _board_axis(ax, values["boards"])
    ax.set_ylabel("cycles per image")
    ax.yaxis.set_major_formatter(_cycles_formatter())
    return _finish(fig, ax, "Slowest engine of each pass, per board")


def draw_resources(values: Mapping[str, Any]) -> Figure:
    fig, ax = _new_axes(3.0)
    _bars(ax, values["percent"])
    _board_axis(ax, values["boards"])
    ax.set_ylabel("% of the board's")
    ax.set_ylim(0, max(100, *(v or 0 for vs in values["percent"].values() for v in vs)))
    ax.yaxis.set_major_formatter(PercentFormatter(100, decimals=0))
    return _finish(fig, ax, "Resource use per board")


def draw_links(values: Mapping[str, Any]) -> Figure:
    fig, ax = _new_axes(2.6)
    _bars(ax, {"link": values["percent"]})
    ax.axhline(100, color="black", linestyle="--", linewidth=1, label="link's line rate")
    ax.xaxis.set_major_locator(FixedLocator(range(len(values["links"]))))
    ax.set_xticklabels(values["links"], rotation=90 if len(values["links"]) > 16 else 0)
    ax.set_xlabel("link (board to board)")
    ax.set_ylabel("line rate needed")
    ax.set_ylim(0, max(105, *values["percent"]))
    ax.yaxis.set_major_formatter(PercentFormatter(100, decimals=0))
    return _finish(fig, ax, "Link use per cut at the planned throughput")


_KNEE_LABELS = (("sublinear_from", f"below {LINEAR_FRACTION:.0%} of linear", "#000000"),
                ("plateau_from", "no faster", "#17becf"),
                ("link_bound_from", "link-bound", "#d62728"))


def _boards(count: int) -> str:
    return f"{count} board" + ("s" if count != 1 else "")


def draw_scaling(values: Mapping[str, Any]) -> Figure:
    fig, ax = _new_axes(3.4)
    xs = values["boards"]
    ax.plot(xs, values["ideal_images_per_s"], "--", color="#7f7f7f", label="ideal linear")
    ax.plot(xs, values["images_per_s"], "-", color="#1f77b4", marker=".",
            label="planner, steady state")
    ax.plot(xs, values["images_per_s_batch"], "-", color="#aec7e8", marker=".",
            label="planner, per batch")
    built = [(x, y) for x, y in zip(xs, values["generated_images_per_s_batch"], strict=True)
             if y is not None]
    if built:
        ax.plot(*zip(*built, strict=True), "-", color="#ff7f0e", marker="o", markersize=4,
                label="generated design, per batch")
    for key, label, colour in _KNEE_LABELS:
        if values["knees"][key] is not None:
            ax.axvline(values["knees"][key], color=colour, linestyle=":", linewidth=1,
                       label=f"{label} from {_boards(values['knees'][key])}")
    ax.set_xlabel("boards")
    ax.set_ylabel("images/s")
    ax.set_ylim(bottom=0)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.yaxis.set_major_formatter(EngFormatter(sep="\N{THIN SPACE}"))
    return _finish(fig, ax, "Training throughput vs boards")


def draw_steps(values: Mapping[str, Any]) -> Figure:
    n = len(values["steps"])
    fig, ax = _new_axes(2.8)
    _bars(ax, {"planner": [values["planner"]] * n, "simulated": values["simulated"],
               "ideal": [values["ideal"]] * n})
    ax.xaxis.set_major_locator(FixedLocator(range(n)))
    ax.set_xticklabels([str(s) for s in values["steps"]])
    ax.set_xlabel("training step")
    ax.set_ylabel("cycles")
    ax.yaxis.set_major_formatter(_cycles_formatter())
    return _finish(fig, ax, f"Cycles per training step of {values['batch']} images")


def draw_breakdown(values: Mapping[str, Any]) -> Figure:
    kinds = values["kinds"]
    fig, ax = _new_axes(0.9 + 0.28 * len(kinds))
    _bars(ax, {"simulated": values["simulated"], "modelled": values["modelled"]},
          horizontal=True)
    ax.yaxis.set_major_locator(FixedLocator(range(len(kinds))))
    ax.set_yticklabels(kinds)
    ax.invert_yaxis()  # the busiest on top
    ax.set_xlabel("cycles run in the first step (CSR counters) and modelled")
    ax.xaxis.set_major_formatter(_cycles_formatter())
    return _finish(fig, ax, "Busiest engines and units", grid="x")


def _scope_ids(svg: str, prefix: str) -> str:
    """matplotlib names its elements alike in every figure (figure_1, glyph paths, clip
    paths); prefix them so that several plots on one page keep their ids unique."""
    ids = set(re.findall(r'\bid="([^"]+)"', svg))
    return re.sub(r'(\bid="|href="#|url\(#)([^")]+)',
                  lambda m: m.group(1) + (f"{prefix}-{m.group(2)}" if m.group(2) in ids
                                          else m.group(2)), svg)


def svg_of(fig: Figure, name: str) -> str:
    """The figure as an inline <svg> element (no XML prolog), its ids scoped by ``name``."""
    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": _RC["svg.fonttype"],
                                "svg.hashsalt": _RC["svg.hashsalt"]}):
        # bbox "tight" grows the canvas to hold every label, title and the outside legend.
        fig.savefig(buffer, format="svg", bbox_inches="tight", pad_inches=0.05,
                    metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
    text = buffer.getvalue()
    return _scope_ids(text[text.index("<svg"):], name)


def embed_json(values: Any) -> str:
    """JSON that cannot end its <script> element: every '<' as \\u003c (also '<!--')."""
    return json.dumps(values, allow_nan=False).replace("<", "\\u003c")


def _figure(name: str, values: Mapping[str, Any] | None, draw: Callable[[Any], Figure],
            caption: str) -> str:
    if values is None:
        return ""
    with matplotlib.rc_context(_RC):
        fig = draw(values)
    return (f'<figure id="{name}">{svg_of(fig, name)}<figcaption>{html.escape(caption)}'
            f'</figcaption><script type="application/json" data-plot="{name}">'
            f"{embed_json(values)}</script></figure>")


_CSS = ("body{font-family:sans-serif;margin:2em auto;max-width:1000px;padding:0 1em;"
        "color:#222}pre{background:#f6f6f6;padding:1em;white-space:pre-wrap;font-size:12px}"
        "figure{margin:1.5em 0}figure svg{display:block;max-width:100%;height:auto}"
        "figcaption{font-size:13px;color:#555;margin-top:.3em}.note{color:#a00}")


def _page(title: str, body: str) -> str:
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>"
            f"<!-- generated by fpdeep {__version__} --><h1>{html.escape(title)}</h1>"
            f"{body}</body></html>\n")


# ------------------------------------------------------------------------------------- pages

_LOAD_CAPTION = ("Bars: cycles per image of each pass's slowest engine on the board (the "
                 "board's engines run side by side). Lines: the planner's initiation interval "
                 "(II, the cycles between images: the slowest engine, link or off-chip memory) "
                 "and that of the design `fpdeep build` generates, which also waits for streams "
                 "and element-wise units.")


def _plan_figures(data: Mapping[str, Any]) -> str:
    return (
        _figure("board-load", board_load_values(data), draw_board_load, _LOAD_CAPTION)
        + _figure("resources", resource_values(data), draw_resources,
                  "DSP, BRAM and URAM the plan uses on each board (no bar: the board has none); "
                  "DSP busy: share of the allocated DSPs' cycles in one II that do work.")
        + _figure("links", link_values(data), draw_links,
                  "Line rate each link needs at the planned throughput, as % of its rate.")
    )


def _not_buildable(values: Mapping[str, Any] | None) -> str:
    """Counts without a generated design, with each reason folded away (they are long)."""
    if not values or not values["not_buildable"]:
        return ""
    reasons = values["not_buildable"]
    items = "".join(f"<li>{_boards(int(n))}: {html.escape(why)}</li>"
                    for n, why in reasons.items())
    return (f"<details><summary>No generated design at {_spans([int(n) for n in reasons])} "
            f"boards (of {len(values['boards'])} counts): why</summary><ul>{items}</ul>"
            "</details>")


def _spans(counts: Sequence[int]) -> str:
    """[1, 2, 3, 5, 7, 8] -> '1-3, 5, 7-8'."""
    spans: list[list[int]] = []
    for n in sorted(counts):
        if spans and n == spans[-1][1] + 1:
            spans[-1][1] = n
        else:
            spans.append([n, n])
    return ", ".join(str(a) if a == b else f"{a}\N{EN DASH}{b}" for a, b in spans)


def plan_html(plan: Plan, sweep: Sequence[dict[str, Any]] | None = None,
              generated: PipelineFigures | str | None = None) -> str:
    """The page of `fpdeep plan --html`: the text report, plots of per-board load, resources
    and links, the scaling curve of a sweep, and where each board figure comes from."""
    data = plan_json(plan, generated)
    scaling = ""
    if sweep:
        values = scaling_values(sweep)
        batch = plan.totals.batch
        scaling = ("<h2>Scaling</h2>" + _figure(
            "scaling", values, draw_scaling,
            f"Dashed: linear from the best images/s per board. Per batch: steps of {batch} "
            f"images, fill and drain included. Generated design: what `fpdeep build` makes at "
            f"that count.") + _not_buildable(values)
            + f"<pre>{html.escape(sweep_text(sweep))}</pre>")
    sources = "".join(
        f"<li><b>{html.escape(b.name)}</b>: " + "; ".join(
            f"{html.escape(k)}: {html.escape(v)}" for k, v in b.sources.items()) + "</li>"
        for b in {b.name: b for b in plan.cluster.boards}.values()
    )
    return _page(
        f"fpdeep plan: {plan.model}",
        f"<pre>{html.escape(plan_text(plan, generated))}</pre>" + _plan_figures(data) + scaling
        + f"<h2>Board figures and their sources</h2><ul>{sources}</ul>"
        "<p>Power figures marked as estimates are not measurements.</p>")


def outcome_html(plan: dict[str, Any], result: dict[str, Any] | None) -> str:
    """The page of `fpdeep report DIR --html`: planner vs simulated vs ideal cycles per step,
    busy cycles per kind of task, and the plan's load per board (``load_outcome``'s pair)."""
    outcome = outcome_json(plan, result)
    if result is None:
        measured = ""  # the text above says it is not simulated yet and how to simulate it
    else:
        measured = (
            "<h2>Simulation</h2>"
            + _figure("steps", step_values(outcome), draw_steps,
                      "Planner: the generated design's modelled cycles per step; simulated: "
                      "measured in the cosimulation; ideal: (B-1)·II + latency of the planner's "
                      "engine-bound pipeline.")
            + _figure("breakdown", breakdown_values(outcome), draw_breakdown,
                      "Cycles each kind of task is busy in the first step, simulated and "
                      "modelled; tasks overlap, so these add up to more than the step."))
    return _page(
        f"fpdeep report: {plan['model']}",
        f"<pre>{html.escape(outcome_text(plan, result))}</pre>" + measured
        + "<h2>Plan</h2>" + _plan_figures(plan))
