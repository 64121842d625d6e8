"""Run make on a Verilated model with Verilator's run-time library compiled once per cache.

Every Verilated model links the same few run-time objects (verilated.o, verilated_vpi.o, ...);
compiling them takes most of the build of a small block. This wraps the model's make: it asks
make for the exact commands that compile those objects, copies them from ``CACHE/<hash of those
commands>`` where an earlier build left them, runs make, and leaves them there for the next.

    python verilated_runtime.py CACHE BUILD_DIR make -C BUILD_DIR -f Vtop.mk ...

Run as a script by path (the standard library only: no fpdeep import, so it starts at once).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path


def _makefile(make: list[str]) -> str:
    return make[make.index("-f") + 1] if "-f" in make else "Makefile"


def runtime_objects(build: Path, make: list[str]) -> list[str]:
    """The run-time library's objects the model links (VM_GLOBAL_FAST/SLOW of its classes
    makefile, e.g. Vtop_classes.mk)."""
    classes = build / _makefile(make).replace(".mk", "_classes.mk")
    names: list[str] = []
    for block in re.findall(r"^VM_GLOBAL_(?:FAST|SLOW) \+= \\\n((?:[ \t]+\S+ \\\n)*)",
                            classes.read_text(), re.M):
        names += [line.split()[0] for line in block.splitlines()]
    return [f"{name}.o" for name in names]


def cache_key(build: Path, make: list[str], objects: list[str]) -> str | None:
    """A hash of the commands make would compile ``objects`` with, the compiler's version and
    the run-time library's version; None when make cannot say."""
    proc = subprocess.run([*make, "-n", "-B", "--no-print-directory", *objects], cwd=build,
                          capture_output=True, text=True, check=False)
    commands = proc.stdout.strip()
    if proc.returncode != 0 or not commands:
        return None
    digest = hashlib.sha256(commands.encode())
    version = subprocess.run([commands.split()[0], "--version"], capture_output=True,
                             text=True, check=False)
    digest.update(version.stdout.encode())
    root = os.environ.get("VERILATOR_ROOT")
    config = Path(root, "include", "verilated_config.h") if root else None
    if config is not None and config.is_file():
        digest.update(config.read_bytes())
    return digest.hexdigest()[:16]


def main(argv: list[str]) -> int:
    cache, build, make = Path(argv[0]), Path(argv[1]), argv[2:]
    objects = runtime_objects(build, make)
    key = cache_key(build, make, objects) if objects else None
    kept = None if key is None else cache / key
    if kept is not None and kept.is_dir():
        spec = build / _makefile(make)
        for name in objects:
            target = build / name
            # only where make would compile it: a fresh copy of an up-to-date object would
            # make it link the model again
            if (kept / name).is_file() and (not target.is_file() or
                                            target.stat().st_mtime < spec.stat().st_mtime):
                shutil.copyfile(kept / name, target)
    status = subprocess.run(make, check=False).returncode
    if status == 0 and kept is not None and not kept.is_dir():
        cache.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f"{key}.", dir=cache))
        for name in objects:
            shutil.copyfile(build / name, staging / name)
        try:
            staging.rename(kept)
        except OSError:  # another build left them first
            shutil.rmtree(staging, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
