"""Writing outputs safely: whole or not at all, with the modes the umask gives, never over a
user's files.

A file is written to a temporary sibling and renamed into place; a build folder is written
into a staging sibling and swapped in. Temporary names are made by ``tempfile`` (private
modes), so the final modes are set from the umask before the rename.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from fpdeep.errors import FpdeepError

MARKER = ".fpdeep-output"
#: What later fpdeep commands write into a build folder: a rebuild discards them, since they
#: describe the design that is being replaced.
LATER_OUTPUTS = ("sim", "report.txt", "report.html", "report.json", "train", "synth", "run")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _public(path: Path, *, folder: bool) -> None:
    os.chmod(path, (0o777 if folder else 0o666) & ~_umask())


def write_file(path: str | Path, data: str | bytes) -> Path:
    """Write ``path`` whole or not at all (text as UTF-8 with ``\\n`` line ends)."""
    target = Path(path)
    if target.is_dir():
        raise FpdeepError(f"output {str(path)!r} is a folder; give a file name.")
    if not target.parent.is_dir():
        raise FpdeepError(
            f"cannot write {str(path)!r}: folder {str(target.parent)!r} does not exist.")
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
        _public(Path(tmp), folder=False)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def check_writable_file(path: str | Path, option: str) -> Path:
    """Refuse, before any long work, an output file that could not be written later."""
    target = Path(path)
    if target.is_dir():
        raise FpdeepError(f"{option} {str(path)!r} is a folder; give a file name.")
    if not target.parent.is_dir():
        raise FpdeepError(f"{option} {str(path)!r}: folder {str(target.parent)!r} does not "
                          "exist; create it first or give another path.")
    if not os.access(target.parent, os.W_OK):
        raise FpdeepError(f"{option} {str(path)!r}: folder {str(target.parent)!r} is not "
                          "writable.")
    return target


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


def _strangers(target: Path, ours: Iterable[str]) -> list[str]:
    """Entries of an fpdeep-written folder that neither build nor a later command wrote."""
    known = {MARKER, *ours, *LATER_OUTPUTS}
    return sorted(p.name for p in target.iterdir() if p.name not in known)


def check_target(target: Path, *, force: bool, ours: Iterable[str] = (),
                 keep: Iterable[str | Path] = ()) -> None:
    """Refuse a target fpdeep may not replace: a file, a folder with someone else's files
    (unless ``force``), the working folder or one above it, or a folder holding ``keep``."""
    if target.exists() and not target.is_dir():
        raise FpdeepError(f"output {str(target)!r} exists and is not a folder; choose another -o.")
    if not target.is_dir():
        return
    resolved = target.resolve()
    cwd = Path.cwd().resolve()
    if cwd == resolved or resolved in cwd.parents:
        raise FpdeepError(
            f"output {str(target)!r} is the working folder or holds it; fpdeep replaces its "
            "output folder whole, so give a new folder, e.g. -o build")
    for path in keep:
        inside = Path(path).resolve()
        if resolved in inside.parents:
            raise FpdeepError(
                f"output {str(target)!r} holds the input {str(path)!r}; replacing the folder "
                "would delete it. Give another -o, or move the input out of it.")
    if force:
        return
    if not (target / MARKER).is_file():
        if any(target.iterdir()):
            raise FpdeepError(
                f"output folder {str(target)!r} is not empty and was not written by fpdeep; "
                "choose another -o, empty it, or pass --force to replace it.")
        return
    strangers = _strangers(target, ours)
    if strangers:
        listed = ", ".join(strangers[:10]) + (" ..." if len(strangers) > 10 else "")
        raise FpdeepError(
            f"output folder {str(target)!r} holds files fpdeep did not write ({listed}); a "
            "rebuild would delete them. Move them out, or pass --force to replace the folder.")


@contextmanager
def staged_output(target: str | Path, *, force: bool = False, ours: Iterable[str] = (),
                  keep: Iterable[str | Path] = ()) -> Iterator[StagedDir]:
    """Write into a sibling staging folder, then swap it in; on error leave ``target`` untouched.

    ``ours`` names the entries the writer makes (others in an old fpdeep folder are refused
    unless ``force``); ``keep`` are inputs that must not lie inside ``target``.
    """
    target = Path(target)
    check_target(target, force=force, ours=ours, keep=keep)
    parent = target.resolve().parent
    if not parent.is_dir():
        raise FpdeepError(f"cannot create {str(target)!r}: folder {str(parent)!r} does not exist.")
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".partial", dir=parent))
    try:
        stage = StagedDir(staging)
        yield stage
        (staging / MARKER).write_text("written by fpdeep; `fpdeep build` may replace this folder\n")
        _public(staging, folder=True)
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


def read_json(path: str | Path, what: str) -> Any:
    """The JSON data in ``path``, or an FpdeepError naming the file and how to remake it."""
    path = Path(path)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FpdeepError(f"{str(path)!r} is missing; {what}") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not valid JSON"
        raise FpdeepError(f"{str(path)!r} cannot be read ({reason}); {what}") from None
