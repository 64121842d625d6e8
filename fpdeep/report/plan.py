"""Plan reports: terminal text and JSON (the `fpdeep plan --json` schema); the HTML page with
plots of the same figures is fpdeep.report.html."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from fpdeep.errors import FpdeepError
from fpdeep.planning import perf
from fpdeep.planning.planner import PASSES, BoardPlan, Plan
from fpdeep.schedule.tasks import PipelineFigures
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
        "link_port_bits": c.link_port_bits,
        "precision": c.precision,
        "clock_mhz": c.clock_mhz,
        "util_cap": c.util_cap,
        "pipelining": c.pipelining,
        "pixel_lanes": c.pixel_lanes,
        # per board, the DSPs its MAC lanes were held to for block RAM (0: none)
        "dsp_caps": list(c.dsp_caps),
        # the share of a board's RAM the cuts let engine banks take (0: not counted)
        "bank_share": c.bank_share,
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


def link_rate_json(rate: perf.LinkRate) -> dict[str, Any]:
    """What a link carries per cycle and what bounds it (the port, the source or the line)."""
    return {"port_bits": rate.port_bits, "word_bits": rate.word_bits,
            "words_per_cycle": rate.words_per_cycle, "bound": rate.bound,
            "limits_words_per_cycle": {
                "port": rate.words_per_beat, "source": rate.source_words_per_cycle,
                "line rate": rate.line_words_per_cycle}}


def _rate_text(rate: perf.LinkRate) -> str:
    return f"{rate.words_per_cycle:.3g} ({rate.bound})"


def _blocks(placed: int | None, bits: int, block_bits: int) -> int:
    """Blocks a board's memory takes: as placed, or for an estimate in bits whole blocks."""
    if placed is not None:
        return placed
    return -(-bits // block_bits) if block_bits else 0


def plan_json(plan: Plan, generated: PipelineFigures | str | None = None) -> dict[str, Any]:
    """The JSON schema of `fpdeep plan --json` (issue 3); with ``generated``, the figures of the
    design `fpdeep build` makes of the plan (``fpdeep.schedule.tasks.generated_figures``), or why it
    cannot be built."""
    boards = []
    for bp in plan.boards:
        board = plan.cluster.boards[bp.index]
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
            # the generated tensor store's banks once the plan is lowered, else the search
            # model's estimate (its blocks: the bits over whole blocks)
            "memory_from": "store" if bp.store is not None else "estimate",
            "bram_bits_used": bp.memory.bram_bits,
            "bram_blocks_used": _blocks(bp.memory.bram_blocks, bp.memory.bram_bits,
                                        board.bram_block_bits),
            "bram_bits_available": bp.bram_bits_available,
            "bram_blocks_available": board.bram_blocks,
            "uram_bits_used": bp.memory.uram_bits,
            "uram_blocks_used": _blocks(bp.memory.uram_blocks, bp.memory.uram_bits,
                                        board.uram_block_bits),
            "uram_bits_available": bp.uram_bits_available,
            "uram_blocks_available": board.uram_blocks,
            "cycles_per_image": bp.compute_cycles,
            # the whole generated board (engines, units, store) as a synthesis tool builds
            # it: `fpdeep synth` sets Yosys' figures beside these
            "resources": bp.resources.as_dict() if bp.resources is not None else None,
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
            "cycles_per_image": lp.cycles,
            **link_rate_json(lp.rate),
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
    whole = all(bp.resources is not None for bp in plan.boards)
    for bp in plan.boards:
        mem, board = bp.memory, c.boards[bp.index]
        if whole:  # the generated board's: engines, units and tensor store
            bram, uram = bp.resources.bram36, bp.resources.uram
        else:
            bram = _blocks(mem.bram_blocks, mem.bram_bits, board.bram_block_bits)
            uram = _blocks(mem.uram_blocks, mem.uram_bits, board.uram_block_bits)
        rows.append([
            str(bp.index), _layers_of(bp), f"{bp.dsp_used}/{bp.dsp_available}",
            "/".join(f"{v / 8e6:.1f}" for v in (bp.storage.weights, bp.storage.grads,
                                                bp.storage.stash,
                                                bp.storage.buffers + bp.storage.streams)),
            _pct(bram, board.bram_blocks), _pct(uram, board.uram_blocks),
            f"{mem.spilled_bits / 8e6:.1f} MB -> {bp.spill_to}" if mem.spilled_bits else "-",
            format_count(bp.compute_cycles), format_count(bp.memory_cycles),
        ])
    out.append(format_table(
        ["board", "layers", "DSP", "W/G/S/B MB", "BRAM", "URAM", "off chip", "cycles",
         "mem cycles"],
        rows, right=[True, False, True, True, True, True, False, True, True],
    ))
    out.append("(W/G/S/B: weights, gradient accumulators, activation stash, buffers; BRAM, "
               "URAM: blocks used, "
               + ("by the generated board's engines, units and tensor store)" if whole
                  else "the generated tensor store's banks)" if all(bp.store is not None
                                                                     for bp in plan.boards)
                  else "estimated)"))
    capped = [f"{b} to {cap:,}" for b, cap in enumerate(c.dsp_caps) if cap]
    if capped:
        out.append(f"(DSPs of board {', '.join(capped)}: fewer MAC lanes, so that the "
                   "engines' banks fit the block RAM)")
    if c.bank_share:
        out.append(f"(cut where each board's engine banks take at most {c.bank_share:.0%} of "
                   "its RAM, as the search counts them: at the least II they would not fit)")
    if plan.links:
        out.append("")
        rows = [
            [f"{lp.src}->{lp.dst}", format_count(lp.bytes_forward),
             format_count(lp.bytes_backward), f"{plan.gbps_needed(lp):.1f}",
             f"{lp.gbps_available:g}", _pct(plan.gbps_needed(lp), lp.gbps_available),
             _rate_text(lp.rate), format_count(lp.cycles)]
            for lp in plan.links
        ]
        out.append(format_table(
            ["link", "fwd B/img", "bwd B/img", "Gb/s need", "Gb/s have", "use",
             "words/cycle", "cycles"],
            rows, right=[False] + [True] * 7,
        ))
        rate = plan.links[0].rate
        out.append(f"(link ports {rate.port_bits} bits: {rate.words_per_beat} words of "
                   f"{rate.word_bits} bits a beat; a hop moves the least of the port's words "
                   f"per beat, the {rate.source_words_per_cycle:g} word(s) per cycle its "
                   f"source supplies and the line rate's)")
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


def sweep_rows(plans: Sequence[tuple[int, Plan | FpdeepError]], *,
               generated: Callable[[Plan], PipelineFigures | str] | None = None,
               ) -> list[dict[str, Any]]:
    """Scaling figures per board count, in increasing count order; with ``generated`` (e.g.
    ``lambda p: fpdeep.flow.generated_design(network, p)``) each row also carries the figures of
    the design `fpdeep build` makes at that count, or why it cannot be built.

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
        row = {
            "boards": count,
            "ii_cycles": t.ii_cycles,
            "images_per_s": t.images_per_s,
            "images_per_s_batch": t.images_per_s_batch,
            "ideal_images_per_s": ideal,
            "scaling_efficiency": t.images_per_s / ideal,
            "load_imbalance": t.load_imbalance,
            "dsp_efficiency": t.dsp_efficiency,
            "max_link_utilisation": max(
                (result.gbps_needed(lp) / lp.gbps_available for lp in result.links), default=0.0
            ),
            "bottleneck": t.bottleneck,
        }
        if generated is not None:
            row["generated"] = generated_json(generated(result), batch=t.batch,
                                              clock_mhz=t.clock_mhz)
        rows.append(row)
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


def _generated_per_s(row: dict[str, Any]) -> str:
    g = row.get("generated", {})
    return f"{g['images_per_s_batch']:,.1f}" if "images_per_s_batch" in g else "not buildable"


def sweep_text(rows: Sequence[dict[str, Any]]) -> str:
    with_generated = any("generated" in r for r in rows)
    table = []
    for r in rows:
        if "error" in r:
            table.append([str(r["boards"]), "-", "-", "-", "-", "-", "-", r["error"][:80]]
                         + ["-"] * with_generated)
            continue
        table.append([
            str(r["boards"]), f"{r['ii_cycles']:,}", f"{r['images_per_s']:,.1f}",
            f"{r['scaling_efficiency']:.1%}", f"{r['load_imbalance']:.3f}",
            f"{r['dsp_efficiency']:.1%}", f"{r['max_link_utilisation']:.0%}", r["bottleneck"],
        ] + [_generated_per_s(r)] * with_generated)
    k = knees(rows)
    text = format_table(
        ["boards", "II", "images/s", "vs linear", "imbalance", "DSP eff", "link use",
         "bottleneck"] + ["generated images/s (batch)"] * with_generated,
        table, right=[True] * 7 + [False] + [True] * with_generated,
    )
    return (
        text + f"\n\nstays below {LINEAR_FRACTION:.0%} of linear from "
        f"{k['sublinear_from'] or '-'} boards; no faster from {k['plateau_from'] or '-'} boards; "
        f"link-bound from {k['link_bound_from'] or '-'} boards\n"
    )
