"""Compiled cluster models kept by content hash: in each build folder, or with $FPDEEP_SIM_CACHE
in one place for every build folder of the same design (no simulator build here: the build
itself is stood in for)."""

from __future__ import annotations

import pytest

import fpdeep
from fpdeep.cosim import native
from fpdeep.cosim.hosts import cluster_sources, cocotb_model
from fpdeep.cosim.run import load_build
from fpdeep.cosim.simulator import MODEL_CACHE_ENV, simulator_available
from fpdeep.flow import write_build
from fpdeep.resources import PACKAGE_DIR

DIGITS = PACKAGE_DIR / "examples" / "digits_cnn.onnx"
pytestmark = pytest.mark.skipif(not simulator_available("verilator"),
                                reason="Verilator not found")


@pytest.fixture
def two_folders(tmp_path):
    """Two build folders of the same design."""
    network = fpdeep.load_onnx(DIGITS)
    plan = fpdeep.plan(network, fpdeep.make_cluster(board="zcu102", boards=1), batch=2)
    return [write_build(network, plan, tmp_path / name,
                        model_files={"model.onnx": DIGITS.read_bytes()}) for name in "ab"]


@pytest.fixture
def builds(monkeypatch):
    """The native builds made, each a folder; an executable stands for what Verilator makes."""
    made = []

    def build(sim, cxx, folder, bindings, options, sources):
        (folder / "obj").mkdir(parents=True)
        (folder / "obj" / native.EXECUTABLE).write_text("")
        made.append(folder)

    monkeypatch.setattr(native, "_build", build)
    return made


def _native(root):
    build = load_build(root)
    return native.build_native(root, build.design, cluster_sources(root))


def test_each_build_folder_keeps_its_own_native_model(two_folders, builds, monkeypatch):
    monkeypatch.delenv(MODEL_CACHE_ENV, raising=False)
    a, b = two_folders
    exe = _native(a)
    assert exe.parent.parent.parent == a / "sim" / "native" and builds == [exe.parent.parent]
    assert _native(a) == exe and len(builds) == 1  # built once per content
    assert _native(b).is_relative_to(b) and len(builds) == 2


def test_a_model_cache_builds_a_design_once_for_every_build_folder(two_folders, builds,
                                                                    monkeypatch, tmp_path):
    cache = tmp_path / "cache"
    monkeypatch.setenv(MODEL_CACHE_ENV, str(cache))
    a, b = two_folders
    exe = _native(a)
    assert _native(b) == exe and builds == [exe.parent.parent]
    assert exe.is_relative_to(cache / "native")
    for root in (a, b):  # each folder's sim/native names the model it runs
        (link,) = (root / "sim" / "native").iterdir()
        assert link.is_symlink() and link.resolve() == exe.parent.parent


def test_the_cocotb_model_of_a_design_is_built_from_one_copy_of_its_sources(two_folders,
                                                                           monkeypatch,
                                                                           tmp_path):
    a, b = two_folders
    monkeypatch.delenv(MODEL_CACHE_ENV, raising=False)
    assert cocotb_model(a, cluster_sources(a), "verilator") == \
        (a / "sim" / "build", cluster_sources(a), None)
    monkeypatch.setenv(MODEL_CACHE_ENV, str(tmp_path / "cache"))
    folder, sources, runtime = cocotb_model(a, cluster_sources(a), "verilator")
    assert cocotb_model(b, cluster_sources(b), "verilator") == (folder, sources, runtime)
    assert folder.parent == runtime.parent == tmp_path / "cache" / "cocotb"
    assert [s.read_bytes() for s in sources] == [s.read_bytes() for s in cluster_sources(b)]
    assert sources[-1] == folder / "src" / "sim" / "cluster_top.sv"
    # another design: another folder
    (a / "sim" / "cluster_top.sv").write_text((a / "sim" / "cluster_top.sv").read_text() + "\n")
    assert cocotb_model(a, cluster_sources(a), "verilator")[0] != folder
