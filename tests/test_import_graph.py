"""Data flows one way through the stages: no module imports a later stage (DESIGN §10)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import fpdeep

PACKAGE = Path(fpdeep.__file__).parent
#: The stages in flow order; a module may import its own stage and earlier ones. Utilities
#: (errors, serial, files, ...) come first: every stage may use them, they use no stage. A stage
#: may be one module of a package: the golden training step walks a network through the op
#: registry, which calls the golden package's per-op rules.
STAGES = (
    ("errors", "serial", "tables", "resources", "files", "progress"),
    ("ir",),
    ("numerics",),
    ("golden",),
    ("ops",),
    ("golden.step",),
    ("frontend",),
    ("datasets",),  # named data sets (--data digits), checked against the IR
    ("analysis",),
    ("planning",),
    ("hwlib",),
    ("design",),
    ("schedule",),
    ("codegen",),
    ("cosim",),
    ("runtime",),  # the host runtime for real boards
    ("synth",),  # synthesis of the generated boards (Yosys, Vivado)
    ("report",),
    ("flow",),
    ("cli",),
)
RANK = {name: k for k, names in enumerate(STAGES) for name in names}
#: Not stages: the public API re-exports, and the bundled example models.
OUTSIDE = {"__init__", "examples"}


def _stage(module: str) -> str:
    """The stage a module belongs to, the longest that names it or a package above it:
    ``fpdeep.planning.cluster`` -> ``planning``, ``fpdeep.golden.step`` -> ``golden.step``."""
    parts = module.split(".")[1:]
    return next((".".join(parts[:n]) for n in range(len(parts), 0, -1)
                 if ".".join(parts[:n]) in RANK), parts[0])


def _module(path: Path) -> str:
    """``golden/step.py`` -> ``fpdeep.golden.step``, ``golden/__init__.py`` -> ``fpdeep.golden``."""
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(("fpdeep", *(parts[:-1] if parts[-1] == "__init__" else parts)))


def _is_submodule(module: str) -> bool:
    parts = module.split(".")[1:]
    where = PACKAGE.joinpath(*parts)
    return where.with_suffix(".py").is_file() or (where / "__init__.py").is_file()


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every fpdeep import in ``path``, lazy ones included; imports under
    ``if TYPE_CHECKING:`` are annotations only and create no dependency."""
    tree = ast.parse(path.read_text())
    typing_only = {id(node) for stmt in ast.walk(tree) if isinstance(stmt, ast.If)
                   and isinstance(stmt.test, ast.Name) and stmt.test.id == "TYPE_CHECKING"
                   for node in ast.walk(stmt)}
    found = []
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "fpdeep":  # from fpdeep import planning (or __version__)
                found += [(node.lineno, f"fpdeep.{a.name}") for a in node.names
                          if a.name != "__version__"]
            elif node.module.startswith("fpdeep."):
                # from fpdeep.golden import step imports the module fpdeep.golden.step
                subs = [f"{node.module}.{a.name}" for a in node.names]
                found += [(node.lineno, m if _is_submodule(m) else node.module) for m in subs]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.startswith("fpdeep.")]
    return found


def test_every_package_module_has_a_stage():
    stages = {p.stem if p.is_file() else p.name for p in PACKAGE.iterdir()
              if (p.suffix == ".py" or (p / "__init__.py").is_file())}
    assert stages - OUTSIDE <= RANK.keys(), f"no stage for {sorted(stages - OUTSIDE - RANK.keys())}"


def test_no_module_imports_a_later_stage():
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.relative_to(PACKAGE).parts[0].removesuffix(".py") in OUTSIDE:
            continue
        here = _module(path)
        own = _stage(here)
        for line, module in _imports(path):
            target = _stage(module)
            if path.name == "__init__.py" and module.startswith(here + "."):
                continue  # a package's face re-exports its own modules
            if target in OUTSIDE or RANK[target] > RANK[own]:
                wrong.append(f"{path.relative_to(PACKAGE)}:{line} ({own}) imports {module}")
    assert not wrong, "imports against the flow:\n" + "\n".join(wrong)


def test_the_ir_imports_nothing_of_fpdeep():
    ir = [m for p in (PACKAGE / "ir").rglob("*.py") for _, m in _imports(p)]
    assert ir == []


def test_the_api_is_loaded_on_first_use():
    """`import fpdeep.hwlib` (every simulated testbench's import) loads neither onnx nor the
    planner; fpdeep's API names and subpackages are there when used."""
    code = ("import sys, fpdeep.hwlib, fpdeep.golden\n"
            "assert not {'onnx', 'fpdeep.frontend', 'fpdeep.planning'} & set(sys.modules)\n"
            "from fpdeep import load_onnx, plan\n"
            "assert fpdeep.ir.Network and all(hasattr(fpdeep, n) for n in fpdeep.__all__)\n")
    subprocess.run([sys.executable, "-c", code], check=True)
