"""Where the shipped non-Python folders (templates/, hw/, sim/) are, installed or in a checkout."""

from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
DATA_FOLDERS = ("templates", "hw", "sim")


def data_dir(name: str) -> Path:
    """The folder ``name`` from the wheel (``fpdeep/_data/NAME``) or else from the source tree."""
    if name not in DATA_FOLDERS:
        raise ValueError(f"unknown data folder {name!r}; known: {', '.join(DATA_FOLDERS)}")
    installed = PACKAGE_DIR / "_data" / name
    if installed.is_dir():
        return installed
    # A source checkout (editable install): the folder beside the package, but only where the
    # parent really is fpdeep's project root, not a site-packages shared with other packages.
    checkout = PACKAGE_DIR.parent
    if (checkout / "pyproject.toml").is_file() and (checkout / name).is_dir():
        return checkout / name
    raise FileNotFoundError(
        f"fpdeep's {name}/ folder is missing from {PACKAGE_DIR}; reinstall fpdeep."
    )
