"""The `inspect` view of a network: a per-layer workload table and its JSON form."""

from __future__ import annotations

from typing import Any

from fpdeep.analysis import NetworkWorkload
from fpdeep.ir import Network
from fpdeep.tables import format_count, format_table, printable, shorten

TOTAL_FIELDS = ("fp_macs", "bp_macs", "wg_macs", "params", "activations")


def workload_json(network: Network, workload: NetworkWorkload, *, model: str) -> dict[str, Any]:
    """The schema of `fpdeep inspect --json`."""
    layers = []
    for layer in network.layers:
        w = workload.layers[layer.name]
        layers.append({
            "name": layer.name,
            "op": str(layer.op),
            "inputs": list(layer.inputs),
            "in_shape": list(layer.in_shape),
            "out_shape": list(layer.out_shape),
            "fp_macs": w.fp_macs,
            "bp_macs": w.bp_macs,
            "wg_macs": w.wg_macs,
            "params": w.params,
            "activations": w.activations,
            "element_ops": w.element_ops,
        })
    return {
        "model": model,
        "input": list(network.input_shape),
        "layers": layers,
        "totals": {field: workload.total(field) for field in TOTAL_FIELDS},
    }


def workload_table(network: Network, workload: NetworkWorkload, *, model: str) -> str:
    """A readable table: one row per layer, totals at the bottom."""
    headers = ["layer", "op", "in", "out", "FP MACs", "BP MACs", "WG MACs", "params", "acts",
               "elem ops"]
    shape = lambda s: "×".join(map(str, s))  # noqa: E731
    rows = []
    for layer in network.layers:
        w = workload.layers[layer.name]
        rows.append([
            shorten(layer.name, 36), str(layer.op), shape(layer.in_shape), shape(layer.out_shape),
            *(format_count(v) if v else "-" for v in (
                w.fp_macs, w.bp_macs, w.wg_macs, w.params, w.activations, w.element_ops)),
        ])
    totals = [format_count(workload.total(f)) for f in (*TOTAL_FIELDS, "element_ops")]
    footer = ["total", f"{len(network.layers)} layers", "", "", *totals]
    table = format_table(headers, rows, right=[False] * 4 + [True] * 6, footer=footer)
    compute = len(network.compute_layers)
    train = workload.fp_macs + workload.bp_macs + workload.wg_macs
    head = (
        f"{printable(model)}: input {shape(network.input_shape)}, {len(network.layers)} layers "
        f"({compute} compute), {format_count(workload.params)} parameters\n"
        f"training work per image: {format_count(train)} MACs "
        f"(FP {format_count(workload.fp_macs)}, BP {format_count(workload.bp_macs)}, "
        f"WG {format_count(workload.wg_macs)})\n"
    )
    return head + "\n" + table
