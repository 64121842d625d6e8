"""Output folders written whole or not at all, never over someone else's files."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from fpdeep.errors import FpdeepError

MARKER = ".fpdeep-output"


class StagedDir:
    """Files written under a hidden staging folder; ``write`` takes paths relative to the root."""

    def __init__(self, root: Path):
        self.root = root

    def write(self, relative: str | Path, text: str) -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        # newline="\n": byte-identical output on every platform.
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        return path

    def write_bytes(self, relative: str | Path, data: bytes) -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        return path


def check_target(target: Path, *, force: bool) -> None:
    """Refuse a target that exists with content fpdeep did not put there, unless ``force``."""
    if target.exists() and not target.is_dir():
        raise FpdeepError(f"output {str(target)!r} exists and is not a folder; choose another -o.")
    if not target.is_dir() or force:
        return
    entries = list(target.iterdir())
    if entries and not (target / MARKER).is_file():
        raise FpdeepError(
            f"output folder {str(target)!r} is not empty and was not written by fpdeep; "
            "choose another -o, empty it, or pass --force to replace it."
        )


@contextmanager
def staged_output(target: str | Path, *, force: bool = False) -> Iterator[StagedDir]:
    """Write into a sibling staging folder, then swap it in; on error leave ``target`` untouched."""
    target = Path(target)
    check_target(target, force=force)
    parent = target.resolve().parent
    if not parent.is_dir():
        raise FpdeepError(f"cannot create {str(target)!r}: folder {str(parent)!r} does not exist.")
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".partial", dir=parent))
    try:
        stage = StagedDir(staging)
        yield stage
        (staging / MARKER).write_text("written by fpdeep; `fpdeep build` may replace this folder\n")
        if target.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".old", dir=parent))
            os.replace(target, old / "previous")
            os.replace(staging, target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
