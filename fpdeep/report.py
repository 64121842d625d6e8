"""Plan reports: terminal text, JSON (the `fpdeep plan --json` schema) and a self-contained
HTML page with inline SVG plots (no scripts, no network)."""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import Any

from fpdeep import __version__, perf
from fpdeep.errors import FpdeepError
from fpdeep.planner import PASSES, BoardPlan, Plan
from fpdeep.schedule import PipelineFigures
from fpdeep.tables import format_count, format_table, printable, shorten

# Scaling is called linear while the throughput stays within this fraction of ideal.
LINEAR_FRACTION = 0.9


def _engine_json(alloc: Any) -> dict[str, int] | None:
    if alloc is None:
        return None  # the layer needs no BP (nothing trainable upstream)
    out = {"tm": alloc.tm, "tn": alloc.tn, "cycles": alloc.cycles, "dsp": alloc.dsp}
    if alloc.tp > 1:  # only in pixel-parallel what-if plans
        out["tp"] = alloc.tp
    return out


def cluster_json(plan: Plan) -> dict[str, Any]:
    c = plan.cluster
    return {
        "boards": [b.name for b in c.boards],
        "count": c.size,
        "topology": c.topology,
        "link_gbps": list(c.link_gbps),
        "precision": c.precision,
        "clock_mhz": c.clock_mhz,
        "util_cap": c.util_cap,
        "pipelining": c.pipelining,
        "pixel_lanes": c.pixel_lanes,
        "batch": plan.totals.batch,
    }


def generated_json(generated: PipelineFigures | str, *, batch: int,
                   clock_mhz: float) -> dict[str, Any]:
    """The generated design's figures (or why the plan cannot be generated) as JSON."""
    if isinstance(generated, str):
        return {"error": generated}
    cycles = generated.batch_cycles(batch)
    return {**generated.as_dict(), "batch": batch, "batch_cycles": cycles,
            "images_per_s_batch": perf.images_per_second_batch(
                batch=batch, batch_cycles=cycles, clock_mhz=clock_mhz)}


def _generated_text(generated: PipelineFigures | str, *, batch: int, clock_mhz: float) -> str:
    if isinstance(generated, str):
        return f"generated design: cannot be built ({generated})"
    g = generated_json(generated, batch=batch, clock_mhz=clock_mhz)
    return (f"generated design (image-at-a-time pipeline, streams of one beat per cycle): "
            f"II {g['ii_cycles']:,} cycles ({g['bottleneck']}), {g['batch_cycles']:,} cycles "
            f"per step of {batch} = {g['first_image_cycles']:,} + {batch - 1} x II, "
            f"{g['images_per_s_batch']:,.1f} images/s")


def plan_json(plan: Plan, generated: PipelineFigures | str | None = None) -> dict[str, Any]:
    """The JSON schema of `fpdeep plan --json` (issue 3); with ``generated``, the figures of the
    design `fpdeep build` makes of the plan (``fpdeep.schedule.generated_figures``), or why it
    cannot be built."""
    boards = []
    for bp in plan.boards:
        boards.append({
            "index": bp.index,
            "board": plan.cluster.boards[bp.index].name,
            "slices": [
                {
                    "layer": sp.slice.layer,
                    "channels": [sp.slice.lo, sp.slice.hi],
                    "engines": {p: _engine_json(sp.engines[p]) for p in PASSES},
                }
                for sp in bp.slices
            ],
            "dsp_used": bp.dsp_used,
            "dsp_available": bp.dsp_available,
            "bram_bits_used": bp.memory.bram_bits,
            "bram_bits_available": bp.bram_bits_available,
            "uram_bits_used": bp.memory.uram_bits,
            "uram_bits_available": bp.uram_bits_available,
            "cycles_per_image": bp.compute_cycles,
        })
    links = []
    for lp in plan.links:
        need = plan.gbps_needed(lp)
        links.append({
            "from": lp.src,
            "to": lp.dst,
            "bytes_forward_per_image": lp.bytes_forward,
            "bytes_backward_per_image": lp.bytes_backward,
            "gbps_needed": need,
            "gbps_available": lp.gbps_available,
            "utilisation": need / lp.gbps_available,
        })
    t = plan.totals
    return {
        "model": plan.model,
        "cluster": cluster_json(plan),
        "strategy": plan.strategy,
        "boards": boards,
        "links": links,
        "totals": {
            "ii_cycles": t.ii_cycles,
            "clock_mhz": t.clock_mhz,
            "images_per_s": t.images_per_s,
            "images_per_s_batch": t.images_per_s_batch,
            "gops": t.gops,
            "dsp_efficiency": t.dsp_efficiency,
            "load_imbalance": t.load_imbalance,
            "bottleneck": t.bottleneck,
            "latency_cycles": t.latency_cycles,
        },
    } | ({} if generated is None else {"generated": generated_json(
        generated, batch=t.batch, clock_mhz=t.clock_mhz)})


def _pct(used: float, available: float) -> str:
    return f"{100 * used / available:.0f}%" if available else "-"


def _layers_of(bp: BoardPlan) -> str:
    if not bp.slices:
        return "-"
    first, last = bp.slices[0].slice, bp.slices[-1].slice
    head = shorten(first.layer, 18) + (f"[{first.lo}:{first.hi}]" if first.lo else "")
    if len(bp.slices) == 1:
        return shorten(first.layer, 18) + f"[{first.lo}:{first.hi}]"
    return f"{head} .. {shorten(last.layer, 18)}[:{last.hi}] ({len(bp.slices)} slices)"


def plan_text(plan: Plan, generated: PipelineFigures | str | None = None) -> str:
    """Readable tables: per board, per link, and the totals (``generated`` as in plan_json)."""
    c, t = plan.cluster, plan.totals
    kinds = ", ".join(sorted({b.name for b in c.boards}))
    out = [
        f"{printable(plan.model)} on {c.size} x {kinds} ({c.topology}), partition {plan.strategy}, "
        f"{c.precision}-bit, {t.clock_mhz:g} MHz, {c.pipelining} pipelining"
        + (f", WHAT-IF {c.pixel_lanes} pixel lanes" if c.pixel_lanes > 1 else ""),
        "",
    ]
    rows = []
    for bp in plan.boards:
        mem = bp.memory
        rows.append([
            str(bp.index), _layers_of(bp), f"{bp.dsp_used}/{bp.dsp_available}",
            "/".join(f"{v / 8e6:.1f}" for v in (bp.storage.weights, bp.storage.grads,
                                                bp.storage.stash,
                                                bp.storage.buffers + bp.storage.streams)),
            _pct(mem.bram_bits, bp.bram_bits_available),
            _pct(mem.uram_bits, bp.uram_bits_available),
            f"{mem.spilled_bits / 8e6:.1f} MB -> {bp.spill_to}" if mem.spilled_bits else "-",
            format_count(bp.compute_cycles), format_count(bp.memory_cycles),
        ])
    out.append(format_table(
        ["board", "layers", "DSP", "W/G/S/B MB", "BRAM", "URAM", "off chip", "cycles",
         "mem cycles"],
        rows, right=[True, False, True, True, True, True, False, True, True],
    ))
    out.append("(W/G/S/B: weights, gradient accumulators, activation stash, buffers)")
    if plan.links:
        out.append("")
        rows = [
            [f"{lp.src}->{lp.dst}", format_count(lp.bytes_forward),
             format_count(lp.bytes_backward), f"{plan.gbps_needed(lp):.1f}",
             f"{lp.gbps_available:g}", _pct(plan.gbps_needed(lp), lp.gbps_available),
             format_count(lp.cycles)]
            for lp in plan.links
        ]
        out.append(format_table(
            ["link", "fwd B/img", "bwd B/img", "Gb/s need", "Gb/s have", "use", "cycles"],
            rows, right=[False] + [True] * 6,
        ))
    power = "estimate" if any(b.watts_is_estimate for b in c.boards) else "datasheet"
    out += [
        "",
        f"II {t.ii_cycles:,} cycles ({t.bottleneck}); {t.images_per_s:,.1f} images/s steady, "
        f"{t.images_per_s_batch:,.1f} images/s with batch {t.batch} "
        f"(latency {t.latency_cycles:,}, update {t.update_cycles:,} cycles)",
        f"{t.gops:,.1f} GOPS, DSP efficiency {t.dsp_efficiency:.1%}, "
        f"load imbalance {t.load_imbalance:.3f} (max/mean board cycles)",
        f"{t.watts:g} W board power ({power}): {t.images_per_joule:.2f} images/J, "
        f"{t.gops / t.watts:.2f} GOPS/W",
    ]
    if generated is not None:
        out.append(_generated_text(generated, batch=t.batch, clock_mhz=t.clock_mhz))
    return "\n".join(out) + "\n"


# ------------------------------------------------------------------------------------ sweeps


def sweep_rows(plans: Sequence[tuple[int, Plan | FpdeepError]]) -> list[dict[str, Any]]:
    """Scaling figures per board count, in increasing count order.

    The ideal at N boards is linear in N from the best throughput per board seen at any count
    up to N, so a small cluster that is memory-bound does not make larger ones look superlinear.
    """
    rows = []
    best_per_board = 0.0
    for count, result in sorted(plans, key=lambda item: item[0]):
        if isinstance(result, FpdeepError):
            rows.append({"boards": count, "error": str(result)})
            continue
        t = result.totals
        best_per_board = max(best_per_board, t.images_per_s / count)
        ideal = best_per_board * count
        rows.append({
            "boards": count,
            "ii_cycles": t.ii_cycles,
            "images_per_s": t.images_per_s,
            "ideal_images_per_s": ideal,
            "scaling_efficiency": t.images_per_s / ideal,
            "load_imbalance": t.load_imbalance,
            "dsp_efficiency": t.dsp_efficiency,
            "max_link_utilisation": max(
                (result.gbps_needed(lp) / lp.gbps_available for lp in result.links), default=0.0
            ),
            "bottleneck": t.bottleneck,
        })
    return rows


def knees(rows: Sequence[dict[str, Any]]) -> dict[str, int | None]:
    """Where scaling ends: the count from which throughput stays below LINEAR_FRACTION of
    ideal, the count from which adding boards no longer lowers the II, and the first count
    whose bottleneck is a link."""
    ok = [r for r in rows if "error" not in r]
    linear = None
    for r in reversed(ok):
        if r["scaling_efficiency"] >= LINEAR_FRACTION:
            break
        linear = r["boards"]
    best = min((r["ii_cycles"] for r in ok), default=None)
    plateau = next((r["boards"] for r in ok if r["ii_cycles"] == best), None)
    if plateau == (ok[-1]["boards"] if ok else None):
        plateau = None  # still improving at the largest count
    link = next((r["boards"] for r in ok if r["bottleneck"].startswith("link")), None)
    return {"sublinear_from": linear, "plateau_from": plateau, "link_bound_from": link}


def sweep_text(rows: Sequence[dict[str, Any]]) -> str:
    table = []
    for r in rows:
        if "error" in r:
            table.append([str(r["boards"]), "-", "-", "-", "-", "-", "-", r["error"][:80]])
            continue
        table.append([
            str(r["boards"]), f"{r['ii_cycles']:,}", f"{r['images_per_s']:,.1f}",
            f"{r['scaling_efficiency']:.1%}", f"{r['load_imbalance']:.3f}",
            f"{r['dsp_efficiency']:.1%}", f"{r['max_link_utilisation']:.0%}", r["bottleneck"],
        ])
    k = knees(rows)
    text = format_table(
        ["boards", "II", "images/s", "vs linear", "imbalance", "DSP eff", "link use",
         "bottleneck"],
        table, right=[True] * 7 + [False],
    )
    return (
        text + f"\n\nstays below {LINEAR_FRACTION:.0%} of linear from "
        f"{k['sublinear_from'] or '-'} boards; no faster from {k['plateau_from'] or '-'} boards; "
        f"link-bound from {k['link_bound_from'] or '-'} boards\n"
    )


# -------------------------------------------------------------------------------------- HTML

_COLOURS = {"fp": "#4e79a7", "bp": "#f28e2b", "wg": "#59a14f", "dsp": "#4e79a7",
            "bram": "#f28e2b", "uram": "#59a14f", "link": "#e15759", "ideal": "#999999"}


def _svg_bars(title: str, labels: Sequence[str], series: dict[str, Sequence[float]], *,
              stacked: bool, line: float | None = None, unit: str = "") -> str:
    """A bar chart (stacked or grouped) as inline SVG; ``line`` draws a horizontal marker."""
    width, height, left, bottom, top = 720, 260, 60, 40, 30
    n = max(len(labels), 1)
    if stacked:
        peak = max([sum(v[i] for v in series.values()) for i in range(len(labels))] or [0])
    else:
        peak = max([max(v, default=0) for v in series.values()] or [0])
    peak = max(peak, line or 0, 1e-12) * 1.1
    plot_w, plot_h = width - left - 10, height - bottom - top
    slot = plot_w / n
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'role="img"><title>{html.escape(title)}</title>',
             f'<text x="{left}" y="18" font-size="14">{html.escape(title)}</text>']
    for frac in (0, 0.5, 1):
        y = top + plot_h * (1 - frac)
        parts.append(f'<line x1="{left}" x2="{width - 10}" y1="{y:.1f}" y2="{y:.1f}" '
                     'stroke="#ddd"/>')
        parts.append(f'<text x="{left - 4}" y="{y + 4:.1f}" font-size="10" text-anchor="end">'
                     f'{html.escape(format_count(peak / 1.1 * frac / 1.0))}{unit}</text>')
    names = list(series)
    for i, label in enumerate(labels):
        x0 = left + i * slot
        base = 0.0
        for j, name in enumerate(names):
            value = series[name][i]
            h = plot_h * value / peak
            if stacked:
                x, w, y = x0 + slot * 0.15, slot * 0.7, top + plot_h - plot_h * base / peak - h
                base += value
            else:
                w = slot * 0.7 / len(names)
                x, y = x0 + slot * 0.15 + j * w, top + plot_h - h
            parts.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{max(w, 0.5):.1f}" '
                         f'height="{h:.1f}" fill="{_COLOURS.get(name, "#777")}">'
                         f'<title>{html.escape(f"{label} {name}: {value:,.3g}")}</title></rect>')
        if n <= 40 or i % math.ceil(n / 40) == 0:
            parts.append(f'<text x="{x0 + slot / 2:.1f}" y="{height - bottom + 14}" '
                         f'font-size="10" text-anchor="middle">{html.escape(label)}</text>')
    if line is not None:
        y = top + plot_h * (1 - line / peak)
        parts.append(f'<line x1="{left}" x2="{width - 10}" y1="{y:.1f}" y2="{y:.1f}" '
                     'stroke="#000" stroke-dasharray="4 3"/>')
    for j, name in enumerate(names):
        x = left + 10 + j * 90
        parts.append(f'<rect x="{x}" y="{height - 16}" width="10" height="10" '
                     f'fill="{_COLOURS.get(name, "#777")}"/><text x="{x + 14}" '
                     f'y="{height - 7}" font-size="11">{html.escape(name)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _svg_scaling(rows: Sequence[dict[str, Any]]) -> str:
    ok = [r for r in rows if "error" not in r]
    if not ok:
        return ""
    width, height, left, bottom, top = 720, 300, 70, 40, 30
    xs = [r["boards"] for r in ok]
    peak = max(max(r["ideal_images_per_s"], r["images_per_s"]) for r in ok) * 1.05
    xmax = max(xs)
    plot_w, plot_h = width - left - 10, height - bottom - top

    def pt(x: float, y: float) -> str:
        return f"{left + plot_w * x / xmax:.1f},{top + plot_h * (1 - y / peak):.1f}"

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             'role="img"><title>Scaling</title>',
             '<text x="70" y="18" font-size="14">Throughput vs boards (dashed: ideal linear)'
             '</text>',
             f'<polyline fill="none" stroke="{_COLOURS["ideal"]}" stroke-dasharray="5 4" '
             f'points="{" ".join(pt(r["boards"], r["ideal_images_per_s"]) for r in ok)}"/>',
             f'<polyline fill="none" stroke="{_COLOURS["fp"]}" stroke-width="2" '
             f'points="{" ".join(pt(r["boards"], r["images_per_s"]) for r in ok)}"/>']
    for frac in (0, 0.5, 1):
        y = top + plot_h * (1 - frac)
        parts.append(f'<text x="{left - 4}" y="{y + 4:.1f}" font-size="10" text-anchor="end">'
                     f'{peak * frac:,.0f}/s</text>')
    for x in sorted({xs[0], xs[-1], *(xs[len(xs) // 4 :: max(len(xs) // 4, 1)])}):
        parts.append(f'<text x="{left + plot_w * x / xmax:.1f}" y="{height - bottom + 14}" '
                     f'font-size="10" text-anchor="middle">{x}</text>')
    k = knees(rows)
    marks = (("sublinear_from", "#000", "below 90% of linear"),
             ("plateau_from", "#76b7b2", "no faster"),
             ("link_bound_from", _COLOURS["link"], "link-bound"))
    for row, (key, colour, label) in enumerate(marks):
        if k[key] is not None:
            x = left + plot_w * k[key] / xmax
            parts.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top}" y2="{top + plot_h}" '
                         f'stroke="{colour}" stroke-dasharray="2 2"/><text x="{x + 3:.1f}" '
                         f'y="{top + 12 + 14 * row}" font-size="11" '
                         f'fill="{colour}">{label} ({k[key]} boards)</text>')
    parts.append("</svg>")
    return "".join(parts)


def plan_html(plan: Plan, sweep: Sequence[dict[str, Any]] | None = None) -> str:
    """One self-contained page: tables plus SVG plots of load, resources, links and scaling."""
    labels = [str(bp.index) for bp in plan.boards]
    busy = {p: [bp.busy[p] for bp in plan.boards] for p in PASSES}
    use = {
        "dsp": [100 * bp.dsp_used / bp.dsp_available for bp in plan.boards],
        "bram": [100 * bp.memory.bram_bits / bp.bram_bits_available
                 if bp.bram_bits_available else 0 for bp in plan.boards],
        "uram": [100 * bp.memory.uram_bits / bp.uram_bits_available
                 if bp.uram_bits_available else 0 for bp in plan.boards],
    }
    plots = [
        _svg_bars("DSP-busy cycles per image by pass, per board (dashed: II)", labels, busy,
                  stacked=True, line=plan.totals.ii_cycles),
        _svg_bars("Resource use per board (%)", labels, use, stacked=False, unit="%"),
    ]
    if plan.links:
        link_use = {"link": [100 * plan.gbps_needed(lp) / lp.gbps_available for lp in plan.links]}
        plots.append(_svg_bars("Link use per cut (%)", [f"{lp.src}-{lp.dst}" for lp in plan.links],
                               link_use, stacked=False, unit="%", line=100.0))
    scaling = ""
    if sweep:
        scaling = _svg_scaling(sweep) + f"<pre>{html.escape(sweep_text(sweep))}</pre>"
    sources = "".join(
        f"<li><b>{html.escape(b.name)}</b>: " + "; ".join(
            f"{html.escape(k)}: {html.escape(v)}" for k, v in b.sources.items()) + "</li>"
        for b in {b.name: b for b in plan.cluster.boards}.values()
    )
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>fpdeep plan: {html.escape(plan.model)}</title>"
        "<style>body{font-family:sans-serif;margin:2em;max-width:1000px}"
        "pre{background:#f6f6f6;padding:1em;overflow-x:auto}svg{display:block;margin:1em 0}"
        "</style></head><body>"
        f"<!-- generated by fpdeep {__version__} -->"
        f"<h1>fpdeep plan: {html.escape(plan.model)}</h1>"
        f"<pre>{html.escape(plan_text(plan))}</pre>"
        + "".join(plots) + scaling
        + f"<h2>Board figures and their sources</h2><ul>{sources}</ul>"
        "<p>Power figures marked as estimates are not measurements.</p></body></html>\n"
    )
