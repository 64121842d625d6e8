"""What the board and cluster templates print for a design: ports, instances, link models."""

from __future__ import annotations

from typing import Any

from fpdeep.codegen.ports import (
    SIDES,
    Instance,
    Port,
    comment_text,
    engine_instance,
    engine_ports,
    link_instances,
    link_model_instances,
    link_ports,
    unit_instances,
    unit_ports,
)
from fpdeep.design.engine import ACC_BITS
from fpdeep.design.lower import BoardDesign, Design


def board_ports(d: Design, board: BoardDesign) -> list[Port]:
    """Every port of a board top after clk and rst, engines first, then units."""
    ports = [port for s in board.slices for e in s.engines.values()
             for port in engine_ports(e, d.data_width)]
    ports += [port for u in board.units for port in unit_ports(u, d.data_width, ACC_BITS)]
    return ports + [port for side in _sides(d, board) for port in link_ports(side, d.data_width)]


def _sides(d: Design, board: BoardDesign) -> list[str]:
    """The neighbours a board has in the chain."""
    return [side for side, ok in zip(SIDES, (board.index < len(d.boards) - 1, board.index > 0),
                                     strict=True) if ok]


def board_values(d: Design, board: BoardDesign) -> dict[str, Any]:
    """What `templates/board.sv.j2` prints for one board."""
    instances = [engine_instance(e, s, d.data_width) for s in board.slices
                 for e in s.engines.values()]
    for u in board.units:
        for inst in unit_instances(u, d.data_width, ACC_BITS):
            instances.append(Instance(inst.module, inst.name, comment_text(inst.comment),
                                      inst.params, inst.localparams, inst.connections))
    for side in _sides(d, board):
        instances += link_instances(side, d.data_width)
    return {"module": board.module, "index": board.index, "model": comment_text(d.model),
            "ports": board_ports(d, board), "instances": instances}


def cluster_values(d: Design) -> dict[str, Any]:
    """What `templates/cluster_top.sv.j2` prints: every board with its ports, and the link
    models between them."""
    return {"model": comment_text(d.model),
            "boards": [{"index": b.index, "module": b.module, "ports": board_ports(d, b)}
                       for b in d.boards],
            "link_models": link_model_instances(d.links, d.data_width)}

