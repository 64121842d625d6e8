"""Each interface declared in fpdeep.hwlib is the hand-written module's real interface: the
ports (names, order, directions, widths), parameter defaults and instantiated modules that
`verilator --json-only` reads from hw/, at the defaults and at every parameterisation the
generator uses for the demo's and a residual network's boards."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

import fpdeep
from fpdeep.codegen.board import board_values, cluster_values
from fpdeep.codegen.layout import board_layouts
from fpdeep.cosim.simulator import find_simulator, hw_sources, simulator_available
from fpdeep.design.lower import lower
from fpdeep.hwlib import CSR, MODULES, compile_order
from fpdeep.hwlib.signature import Port
from fpdeep.resources import PACKAGE_DIR

pytestmark = [
    pytest.mark.sim,
    pytest.mark.skipif(not simulator_available(), reason="Verilator is not installed"),
]


def _elaborate(module: str, params: dict[str, int], tmp: Path) -> dict:
    """Verilator's JSON tree of ``module`` elaborated with ``params``."""
    sim = find_simulator("verilator")
    tmp.mkdir(parents=True, exist_ok=True)
    out = tmp / "tree.json"
    cmd = [str(sim.executable), "--json-only", "--json-only-output", str(out), "--Mdir",
           str(tmp), "--top-module", module, *(f"-G{k}={v}" for k, v in params.items()),
           *(str(p) for p in hw_sources(module))]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=sim.environ(os.environ),
                          check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(out.read_text())


def _nodes(tree: object):
    if isinstance(tree, dict):
        yield tree
        for value in tree.values():
            yield from _nodes(value)
    elif isinstance(tree, list):
        for value in tree:
            yield from _nodes(value)


def _width(dtype: dict) -> int:
    if "range" not in dtype:
        return 1
    hi, lo = map(int, dtype["range"].split(":"))
    return abs(hi - lo) + 1


def _constant(text: str) -> int:
    """A Verilator constant such as "32'sh10" or "88'h6175746f"."""
    match = re.fullmatch(r"\d+'s?([hdb])([0-9a-fA-F]+)", text)
    assert match, text
    return int(match[2], {"h": 16, "d": 10, "b": 2}[match[1]])


def _rtl(module: str, params: dict[str, int], tmp: Path):
    """(ports, parameter values, names of instantiated modules) as Verilator sees them."""
    tree = _elaborate(module, params, tmp)
    types = {n["addr"]: n for n in _nodes(tree) if n.get("type", "").endswith("DTYPE")}
    (top,) = [m for m in tree["modulesp"] if m["name"] == module]
    ports, values = [], {}
    for var in top["stmtsp"]:
        if var.get("type") != "VAR":
            continue
        if var.get("isPrimaryIO"):
            ports.append(Port(var["direction"].lower(), _width(types[var["dtypep"]]),
                              var["name"]))
        elif var.get("isGParam"):
            values[var["name"]] = _constant(var["valuep"][0]["name"])
    used = {m["origName"] for m in tree["modulesp"]} - {module}
    return ports, values, used


def _comparable(ports) -> list[tuple[str, str, int]]:
    return [(p.name, p.direction, p.width) for p in ports]


def _encoded(value: int | str) -> int:
    # a string parameter is a packed byte string in the RTL (yosys has no `string` type)
    return int.from_bytes(value.encode(), "big") if isinstance(value, str) else value


@pytest.mark.parametrize("name", MODULES)
def test_declaration_is_the_modules_interface(name, tmp_path):
    m = MODULES[name]
    ports, values, used = _rtl(name, {}, tmp_path)
    assert _comparable(ports) == _comparable(m.ports())
    assert values == {k: _encoded(v) for k, v in m.parameters().items()}
    assert used == {u.name for u in compile_order([name])} - {name}


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> list[tuple[str, dict[str, int]]]:
    """Every (module, parameters) that the boards and cluster tops of the demo network on one
    and three boards and of a residual network on two boards instantiate."""
    from golden_nets import residual_cnn

    digits = fpdeep.load_onnx(PACKAGE_DIR / "examples" / "digits_cnn.onnx")
    residual, _ = residual_cnn(tmp_path_factory.mktemp("res") / "res.onnx")
    found: dict[tuple[str, tuple[tuple[str, int], ...]], None] = {}
    for network, boards in ((digits, 1), (digits, 3), (residual, 2)):
        plan = fpdeep.plan(network, fpdeep.make_cluster(board="zcu102", boards=boards),
                           batch=2)
        d = lower(network, plan)
        layouts = board_layouts(d, network, batch=2)
        instances = [i for b in d.boards
                     for i in board_values(d, b, layouts[b.index],
                                           _depths(layouts[b.index]))["instances"]]
        for inst in [*instances, *(m["inst"] for m in cluster_values(d)["models"])]:
            # parameters the generator computes (vectors of bank depths, hashes) are literals
            params = tuple((k, v) for k, v in inst.params if isinstance(v, int))
            found[(inst.module, params)] = None
    return [(name, dict(params)) for name, params in found]


def test_declarations_hold_at_the_generators_parameters(generated, tmp_path):
    assert {name for name, _ in generated} == {
        "fpdeep_engine", "fpdeep_relu", "fpdeep_pool", "fpdeep_add", "fpdeep_fanout",
        "fpdeep_psum", "fpdeep_loss", "fpdeep_sgd", "fpdeep_link_tx", "fpdeep_link_rx",
        "fpdeep_link_pack", "fpdeep_link_unpack", "fpdeep_link_end", "fpdeep_link_keep",
        "fpdeep_link_channel", "fpdeep_sequencer",
        "fpdeep_mover_rd", "fpdeep_mover_wr", "fpdeep_store", "fpdeep_host", "fpdeep_board_ctl",
        "fpdeep_csr"}
    for k, (name, params) in enumerate(generated):
        ports, _, _ = _rtl(name, params, tmp_path / str(k))
        assert _comparable(ports) == _comparable(MODULES[name].ports(**params)), (name, params)


@pytest.mark.parametrize("counters", [3, 256])
def test_the_generated_csr_holds_its_declaration_for_any_number_of_counters(counters, tmp_path):
    # fpdeep_csr is generated from the register map, once for every N (tests/test_hwlib_csr.py)
    params = {"N": counters, "DESIGN_HASH": 0xFFFF_FFFF}
    ports, values, _ = _rtl(CSR.name, params, tmp_path)
    assert _comparable(ports) == _comparable(CSR.ports(**params))
    assert values == CSR.parameters(**params)


def _depths(layout) -> list:
    """64 instruction words for every sequencer of ``layout``'s board, forward-only from 32."""
    from fpdeep.codegen.layout import ProgramMemory

    return [ProgramMemory(64, 32)] * len(layout.resources)
