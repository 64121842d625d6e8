"""``python -m fpdeep.hwlib README``: rewrite the generated part of hw/README.md."""

from __future__ import annotations

import sys
from pathlib import Path

from fpdeep.hwlib.docs import updated


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m fpdeep.hwlib hw/README.md", file=sys.stderr)
        return 2
    path = Path(argv[0])
    path.write_text(updated(path.read_text()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
