"""Verilator's run-time library is compiled once per build root and copied into later builds
that would compile it with the same commands (make on a stand-in of a Verilated model)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from fpdeep.cosim.verilated_runtime import main, runtime_objects

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")

CLASSES = """\
VM_TRACE = 0

VM_CLASSES_FAST += \\
  Vtop \\

VM_GLOBAL_FAST += \\
  verilated \\
  verilated_vpi \\

VM_GLOBAL_SLOW += \\

"""

# Each compile appends the object's name to compiled.txt: what a build compiled, not copied.
MAKEFILE = """\
include Vtop_classes.mk
VK_GLOBAL_OBJS = $(addsuffix .o, $(VM_GLOBAL_FAST) $(VM_GLOBAL_SLOW))
OPT_GLOBAL = -Os
model: $(VK_GLOBAL_OBJS)
\tcat $^ > $@
$(VK_GLOBAL_OBJS): Vtop.mk
$(VK_GLOBAL_OBJS): %.o:
\t{python} -c "import sys; open(sys.argv[1], 'w').write(sys.argv[2]); \\
open('compiled.txt', 'a').write(sys.argv[1] + ' ')" $@ "$(OPT_GLOBAL)"
"""


def _model(folder: Path) -> Path:
    folder.mkdir()
    (folder / "Vtop_classes.mk").write_text(CLASSES)
    (folder / "Vtop.mk").write_text(MAKEFILE.format(python=sys.executable))
    return folder


def _make(cache: Path, build: Path, *flags: str) -> str:
    assert main([str(cache), str(build), "make", "-s", "-C", str(build), "-f", "Vtop.mk",
                 *flags]) == 0
    compiled = build / "compiled.txt"
    return compiled.read_text() if compiled.is_file() else ""


def test_the_run_time_library_is_compiled_once_per_set_of_commands(tmp_path):
    cache = tmp_path / "cache"
    first = _model(tmp_path / "a")
    assert runtime_objects(first, ["make", "-f", "Vtop.mk"]) == ["verilated.o",
                                                                 "verilated_vpi.o"]
    assert _make(cache, first) == "verilated.o verilated_vpi.o "
    second = _model(tmp_path / "b")
    assert _make(cache, second) == ""  # copied from the first build
    assert (second / "model").read_text() == "-Os-Os"
    # other compiler options: compiled again, and kept apart
    assert _make(cache, _model(tmp_path / "c"), "OPT_GLOBAL=-O1") == \
        "verilated.o verilated_vpi.o "
    assert len(list(cache.iterdir())) == 2
    # an up-to-date build is left alone (a fresh copy would link it again)
    (second / "model").unlink()
    before = (second / "verilated.o").stat().st_mtime_ns
    assert _make(cache, second) == ""
    assert (second / "verilated.o").stat().st_mtime_ns == before
