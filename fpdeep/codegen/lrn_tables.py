"""The LRN unit's log2 and 2^u tables as RTL (hw/eltwise/fpdeep_lrn_table.sv), made from the
golden model's own tables so that the two cannot drift apart; a test checks the file is
current."""

from __future__ import annotations

import sys

from fpdeep.golden.loss import EXP2_TABLE
from fpdeep.golden.lrn import LOG2_TABLE
from fpdeep.resources import data_dir

TOP = "fpdeep_lrn_table"
RTL_PATH = f"eltwise/{TOP}.sv"

#: EXP parameter -> (what, the golden table): entry i and i + 1 of each, i = 0..255.
TABLES = {0: ("log2(1 + i/256) with 16 fractional bits (fpdeep.golden.lrn.LOG2_TABLE)",
              LOG2_TABLE),
          1: ("2^(i/256) with 15 fractional bits (fpdeep.golden.loss.EXP2_TABLE)", EXP2_TABLE)}


def render_lrn_tables() -> str:
    """hw/eltwise/fpdeep_lrn_table.sv as the golden tables make it."""
    from fpdeep.codegen.render import render

    tables = [{"exp": exp, "what": what,
               "entries": [(int(table[i]), int(table[i + 1])) for i in range(256)]}
              for exp, (what, table) in TABLES.items()]
    return render("lrn_table.sv.j2", {"source": "fpdeep.golden", "module": TOP,
                                      "tables": tables})


def main(argv: list[str]) -> int:
    if argv:
        print("usage: python -m fpdeep.codegen.lrn_tables  (rewrites "
              f"hw/{RTL_PATH} in the checkout)", file=sys.stderr)
        return 2
    (data_dir("hw") / RTL_PATH).write_text(render_lrn_tables())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
