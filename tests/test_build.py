"""`fpdeep build`: the folder's contents, determinism, no clobbering, never half-written."""

from __future__ import annotations

import json

import numpy as np
import pytest

import fpdeep
from fpdeep.cli import main
from fpdeep.codegen import build as build_module
from fpdeep.files import MARKER
from fpdeep.flow import write_build
from fpdeep.resources import PACKAGE_DIR

DIGITS = str(PACKAGE_DIR / "examples" / "digits_cnn.onnx")


def _build(out, *extra):
    return main(["build", DIGITS, "--board", "zcu102", "--boards", "2", "--batch", "4",
                 "-o", str(out), *extra])


def _tree(root):
    return {str(p.relative_to(root)): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_build_writes_the_promised_files(tmp_path):
    out = tmp_path / "design"
    assert _build(out) == 0
    files = _tree(out)
    for name in ("plan.json", "design.json", "README.md", "model.onnx", "sim/cluster_top.sv",
                 "sim/files.f", "rtl/board_0/fpdeep_board_0.sv", "rtl/board_1/files.f",
                 "rtl/hw/engine/fpdeep_engine.sv", MARKER):
        assert name in files, name
    plan = json.loads(files["plan.json"])
    assert plan["model"] == "digits_cnn" and len(plan["boards"]) == 2
    # every source a file list names exists relative to the list
    for flist in ("sim/files.f", "rtl/board_0/files.f"):
        folder = (out / flist).parent
        for line in files[flist].decode().splitlines():
            if line and not line.startswith("#"):
                assert (folder / line).is_file(), line
    assert files["model.onnx"] == (PACKAGE_DIR / "examples" / "digits_cnn.onnx").read_bytes()


def test_build_is_deterministic(tmp_path):
    assert _build(tmp_path / "a") == 0
    assert _build(tmp_path / "b") == 0
    a, b = _tree(tmp_path / "a"), _tree(tmp_path / "b")
    assert a.keys() == b.keys()
    assert [k for k in a if a[k] != b[k]] == []
    # rebuilding in place (an fpdeep folder) gives the same bytes again
    assert _build(tmp_path / "a") == 0
    assert _tree(tmp_path / "a") == a


def test_build_refuses_a_foreign_folder_unless_forced(tmp_path, capsys):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    assert _build(out) == 2
    assert "not empty and was not written by fpdeep" in capsys.readouterr().err
    assert [p.name for p in out.iterdir()] == ["notes.txt"]
    assert _build(out, "--force") == 0
    assert not (out / "notes.txt").exists() and (out / "plan.json").is_file()
    # a folder fpdeep wrote may be rebuilt in place
    assert _build(out) == 0


def test_build_leaves_nothing_behind_on_error(tmp_path, monkeypatch):
    calls = {"n": 0}
    real = build_module.render

    def failing(template, values, **kw):
        calls["n"] += 1
        if calls["n"] == 2:  # after the first board is written
            raise RuntimeError("disk full")
        return real(template, values, **kw)

    monkeypatch.setattr(build_module, "render", failing)
    network = fpdeep.load_onnx(DIGITS)
    plan = fpdeep.plan(network, fpdeep.make_cluster(board="zcu102", boards=2), batch=4)
    with pytest.raises(RuntimeError, match="disk full"):
        write_build(network, plan, tmp_path / "out", model_files={"model.onnx": b"x"})
    assert list(tmp_path.iterdir()) == []


def test_build_needs_a_board_count_and_one_row_engines(tmp_path, capsys):
    assert main(["build", DIGITS, "--board", "zcu102", "-o", str(tmp_path / "x")]) == 2
    assert "--boards N" in capsys.readouterr().err
    assert _build(tmp_path / "y", "--pixel-lanes", "2") == 2
    assert "--pixel-lanes 1" in capsys.readouterr().err


@pytest.mark.sim
def test_partial_sum_unit_lints_clean():
    from fpdeep.cosim.simulator import lint, simulator_available

    if not simulator_available("verilator"):
        pytest.skip("Verilator not found")
    lint("fpdeep_psum")


def _lint_cluster(out) -> None:
    """`verilator --lint-only -Wall` of a build folder's cluster top, warnings included."""
    from fpdeep.cosim.simulator import lint, simulator_available

    if not simulator_available("verilator"):
        pytest.skip("Verilator not found")
    sources = [out / "sim" / line for line in (out / "sim" / "files.f").read_text().splitlines()
               if line and not line.startswith("#")]
    lint("cluster_top", sources=sources)


@pytest.mark.sim
def test_generated_cluster_lints_clean(tmp_path):
    out = tmp_path / "three"
    assert main(["build", DIGITS, "--board", "zcu102", "--boards", "3", "--batch", "4",
                 "-o", str(out)]) == 0
    _lint_cluster(out)


def colliding_names_model(path):
    """Layer names that sanitise alike (Conv1/conv1 with equal channel ranges, block.relu /
    block/relu) and names past the identifier length limit."""
    from conftest import make_model, rand, save, tensor
    from onnx import helper

    long = "x" * 100
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], kernel_shape=[3, 3], pads=[1] * 4,
                         name="Conv1"),
        helper.make_node("Relu", ["c1"], ["r1"], name="block.relu"),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2],
                         name="block/relu"),
        helper.make_node("Conv", ["p1", "w2"], ["c2"], kernel_shape=[3, 3], pads=[1] * 4,
                         name="conv1"),
        helper.make_node("Relu", ["c2"], ["r2"], name=long + "a"),
        helper.make_node("Flatten", ["r2"], ["f"], name=long + "b"),
        helper.make_node("Gemm", ["f", "w3", "b3"], ["y"], transB=1, name=long + "c"),
    ]
    inits = [tensor("w1", rand(4, 3, 3, 3)), tensor("b1", rand(4)),
             tensor("w2", rand(4, 4, 3, 3, seed=1)), tensor("w3", rand(4, 64, seed=2)),
             tensor("b3", rand(4, seed=3))]
    return save(make_model(nodes, initializers=inits), path.parent, path.name)


@pytest.mark.sim
def test_names_that_sanitise_alike_give_unique_lint_clean_rtl(tmp_path):
    from fpdeep.design.names import MAX_LENGTH

    model = colliding_names_model(tmp_path / "names.onnx")
    out = tmp_path / "out"
    assert main(["build", str(model), "--board", "zcu102", "--boards", "1", "-o", str(out)]) == 0
    d = json.loads((out / "design.json").read_text())
    idents = [s["ident"] for b in d["boards"] for s in b["slices"]]
    idents += [u["ident"] for b in d["boards"] for u in b["units"]]
    assert len(idents) == len(set(idents)), idents
    assert {"conv1_c0_4", "conv1_c0_4_1"} <= set(idents)  # Conv1 and conv1, both channels 0..3
    assert {"block_relu_u", "block_relu_u_1"} <= set(idents)
    assert max(map(len, idents)) <= MAX_LENGTH
    _lint_cluster(out)


# ----- rebuilding, output folders, modes --------------------------------------------------------
def test_rebuild_discards_later_outputs_and_refuses_strangers(tmp_path, capsys):
    out = tmp_path / "b"
    assert _build(out) == 0
    (out / "sim" / "result.json").write_text("{}")  # what `fpdeep sim` leaves
    (out / "report.txt").write_text("old report")  # what `fpdeep demo` leaves
    assert _build(out) == 0
    assert not (out / "sim" / "result.json").exists() and not (out / "report.txt").exists()
    (out / "my_notes.md").write_text("mine")
    (out / "waves").mkdir()
    capsys.readouterr()
    assert _build(out) == 2
    err = capsys.readouterr().err
    assert "holds files fpdeep did not write (my_notes.md, waves)" in err and "--force" in err
    assert (out / "my_notes.md").read_text() == "mine"
    assert _build(out, "--force") == 0 and not (out / "my_notes.md").exists()


def test_build_never_replaces_the_working_folder(tmp_path, monkeypatch, capsys):
    work = tmp_path / "work"
    work.mkdir()
    (work / "thesis.tex").write_text("precious")
    monkeypatch.chdir(work)
    for target in (".", str(tmp_path)):
        assert _build(target, "--force") == 2
        assert "is the working folder or holds it" in capsys.readouterr().err
    assert (work / "thesis.tex").read_text() == "precious"


def test_force_never_deletes_the_model_it_builds(tmp_path, capsys):
    out = tmp_path / "b"
    assert _build(out) == 0
    model = out / "model.onnx"  # building the folder's own copy into the folder
    code = main(["build", str(model), "--board", "zcu102", "--boards", "1", "-o", str(out),
                 "--force"])
    assert code == 2
    assert "holds the input" in capsys.readouterr().err and model.is_file()


def test_outputs_get_the_modes_the_umask_gives(tmp_path):
    import os
    import stat

    old = os.umask(0o022)
    try:
        assert _build(tmp_path / "b") == 0
        assert main(["plan", DIGITS, "--board", "zcu102", "--boards", "2",
                     "--json", str(tmp_path / "p.json")]) == 0
    finally:
        os.umask(old)
    mode = lambda p: stat.S_IMODE(p.stat().st_mode)  # noqa: E731
    assert mode(tmp_path / "b") == 0o755
    assert mode(tmp_path / "b" / "plan.json") == 0o644
    assert mode(tmp_path / "p.json") == 0o644


def test_sigterm_leaves_no_partial_folder(tmp_path):
    import subprocess
    import sys

    # the signal arrives while the boards are being written into the staging folder
    script = f"""
import os, signal, sys
import fpdeep.codegen.build as b
real = b.render
def render(*a, **k):
    os.kill(os.getpid(), signal.SIGTERM)
    return real(*a, **k)
b.render = render
from fpdeep.cli import main
sys.exit(main(["build", {DIGITS!r}, "--board", "zcu102", "--boards", "2", "-o", "out"]))
"""
    proc = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, check=False)
    assert proc.returncode == 143, proc.stderr
    assert "fpdeep: terminated" in proc.stderr and "Traceback" not in proc.stderr
    assert list(tmp_path.iterdir()) == []


# ----- the model ---------------------------------------------------------------------------------
def test_a_model_with_external_data_is_built_with_its_data(tmp_path):
    import onnx

    from fpdeep.cosim.run import load_build

    source = onnx.load(DIGITS)
    model = tmp_path / "src" / "ext.onnx"
    model.parent.mkdir()
    onnx.save_model(source, str(model), save_as_external_data=True,
                    all_tensors_to_one_file=True, location="ext.bin", size_threshold=0)
    assert (model.parent / "ext.bin").is_file()
    out = tmp_path / "b"
    assert main(["build", str(model), "--board", "zcu102", "--boards", "1", "-o", str(out)]) == 0
    for f in model.parent.iterdir():  # the folder must stand on its own
        f.unlink()
    network = load_build(out).network
    original = fpdeep.load_onnx(DIGITS)
    assert network.params.keys() == original.params.keys()
    for name, value in original.params.items():
        assert np.array_equal(network.params[name], value), name


def _with_layer(tmp_path, op: str, **attrs):
    """A conv-relu-OP-flatten-fc model: ``op`` is the layer under test."""
    from golden_nets import OnnxNet

    net = OnnxNet((1, 8, 8))
    net.conv(4, 3, pads=(1, 1, 1, 1))
    net.relu()
    inputs = [net.last]
    if op == "BatchNormalization":
        for role, value in (("scale", 1.0), ("shift", 0.0), ("mean", 0.0), ("var", 1.0)):
            net.inits[f"bn_{role}"] = np.full(4, value)
            inputs.append(f"bn_{role}")
    net.node(op, inputs, (4, 8, 8), **attrs)
    net.flatten()
    net.fc(10)
    path = tmp_path / f"{op}.onnx"
    net.load(path)
    return path


@pytest.mark.parametrize(("option", "value", "message"), [
    ("--precision", "8", "--precision 8: the generated boards compute with 16-bit data"),
    ("--pipelining", "row", "--pipelining row: the generated boards pipeline whole images"),
    ("--pixel-lanes", "2", "--pixel-lanes 2 is a planning what-if"),
])
def test_build_refuses_plan_features_the_rtl_does_not_implement(tmp_path, capsys, option,
                                                                  value, message):
    out = tmp_path / "b"
    assert _build(out, option, value) == 2
    err = capsys.readouterr().err
    assert "this plan cannot be built" in err and message in err
    assert not out.exists() and list(tmp_path.iterdir()) == []
    # plan prints the same reason instead of figures for a design that cannot be built
    assert main(["plan", DIGITS, "--board", "zcu102", "--boards", "2", option, value]) == 0
    assert f"generated design: cannot be built (this plan cannot be built: {message}" \
        in capsys.readouterr().out


@pytest.mark.parametrize(("option", "value", "message"), [
    ("--momentum", "1", "--momentum: momentum=1.0 is not valid: give a number from 0 up to "
                        "(not including) 1"),
    ("--momentum", "nan", "--momentum: momentum=nan is not valid"),
    ("--weight-decay", "-0.1", "--weight-decay: weight_decay=-0.1 is not valid: give a "
                               "non-negative number"),
])
def test_build_refuses_a_bad_optimiser(tmp_path, capsys, option, value, message):
    out = tmp_path / "b"
    assert _build(out, option, value) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_momentum_builds_keep_velocities_in_the_store(tmp_path):
    """With momentum or weight decay every board's SGD unit is fpdeep_sgd_momentum and its
    store keeps a 24-bit velocity (the vel format) per weight and bias of each slice; without
    them, neither."""
    plain, momentum = tmp_path / "plain", tmp_path / "momentum"
    assert _build(plain) == 0
    assert _build(momentum, "--momentum", "0.9", "--weight-decay", "5e-4") == 0
    for board in (0, 1):
        top = (momentum / "rtl" / f"board_{board}" / f"fpdeep_board_{board}.sv").read_text()
        assert "fpdeep_sgd_momentum #(" in top and "fpdeep_sgd #(" not in top
    for folder, kept in ((plain, False), (momentum, True)):
        stores = json.loads((folder / "plan.json").read_text())["generated"]["store"]
        for store in stores:
            banks = {b["item"]: b for b in store["banks"]}
            sums = {k[4:]: b["depth"] for k, b in banks.items() if k.startswith("acc:")}
            velocities = {k[2:]: b for k, b in banks.items() if k.startswith("v:")}
            assert velocities.keys() == (sums.keys() if kept else set())
            assert all(b["width"] == 24 and b["depth"] == sums[k] for k, b in velocities.items())


def test_build_refuses_a_full_size_vgg19_whose_engines_outgrow_the_boards(tmp_path, capsys):
    """VGG-19 on 8 VCU118s spills to DRAM: build keeps those boards' data off chip and
    streams fc6's 30-million-word weight slice in one off-chip command, but the engines hold
    the 224 x 224 layers' whole tensors, more block RAM than a board has: refused naming
    board and instances, with what would fit; nothing is written."""
    from conftest import light_model

    out = tmp_path / "b"
    code = main(["build", str(light_model("light_vgg19")), "--board", "vcu118", "--boards", "8",
                 "--partition", "optimal", "-o", str(out)])
    assert code == 2
    err = capsys.readouterr().err
    assert "board 0 (vcu118): its engines and units alone take" in err
    assert "more than the 1,836 it has within the 85% utilisation cap (largest: u_" in err
    assert "use a smaller input (--input-shape)" in err and "moves" not in err
    assert not out.exists()


def test_build_runs_lrn_and_refuses_what_its_unit_cannot(tmp_path, capsys):
    model = _with_layer(tmp_path, "LRN", size=3)
    out = tmp_path / "b"
    assert main(["build", str(model), "--board", "zcu102", "--boards", "1", "-o", str(out)]) == 0
    assert "fpdeep_lrn #(" in (out / "rtl" / "board_0" / "fpdeep_board_0.sv").read_text()
    capsys.readouterr()
    model = _with_layer(tmp_path, "LRN", size=3, beta=40000.0)
    out = tmp_path / "c"
    assert main(["build", str(model), "--board", "zcu102", "--boards", "1", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "(LRN): LRN with size 3, beta 40000.0 over 4 channels of 64 elements; the LRN unit " \
           "takes beta in [2^-47, 2^14)" in err, err
    assert not out.exists()
    # a bias whose fixed-point K = bias * 2^F needs more than the unit's 64 bits
    model = _with_layer(tmp_path, "LRN", size=3, bias=1e5)
    assert main(["build", str(model), "--board", "zcu102", "--boards", "1", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "(LRN): its K = bias * 2^F is 112589990684262400000, outside the LRN unit's " \
           "1..18446744073709551615 (size 3, alpha 0.0001, beta 0.75, bias 100000.0, shape " \
           "(4, 8, 8)); choose other formats" in err, err
    assert not out.exists()
