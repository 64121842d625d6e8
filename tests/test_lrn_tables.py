"""The LRN unit's tables in hw/ are the golden model's (fpdeep.codegen.lrn_tables)."""

from __future__ import annotations

import re

from fpdeep.codegen.lrn_tables import RTL_PATH, render_lrn_tables
from fpdeep.golden.loss import EXP2_TABLE
from fpdeep.golden.lrn import LOG2_TABLE
from fpdeep.resources import data_dir


def test_the_generated_table_file_is_current():
    # Run `python -m fpdeep.codegen.lrn_tables` when this fails.
    assert (data_dir("hw") / RTL_PATH).read_text() == render_lrn_tables()


def test_the_rtl_tables_hold_the_golden_entries():
    text = render_lrn_tables()
    entries = [(int(a), int(b)) for a, b in
               re.findall(r"8'd\d+: begin a = 17'd(\d+); b = 17'd(\d+); end", text)]
    assert entries == [(int(t[i]), int(t[i + 1])) for t in (LOG2_TABLE, EXP2_TABLE)
                       for i in range(256)]
