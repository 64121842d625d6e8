"""Turning names from a user's model into safe Verilog, C++ and Tcl identifiers."""

from __future__ import annotations

import re

# Reserved words of Verilog-2005/SystemVerilog-2017 and C++17 that a layer name could collide with.
_VERILOG = """
always always_comb always_ff always_latch and assign automatic begin bit break buf byte case
casex casez cell class cmos config const continue deassign default defparam design disable do
edge else end endcase endclass endconfig endfunction endgenerate endinterface endmodule
endpackage endprimitive endspecify endtable endtask enum event export extern final for force
forever fork function generate genvar highz0 highz1 if ifnone import incdir include initial inout
input instance int integer interface join large liblist library localparam logic longint
macromodule medium module nand negedge nmos nor not notif0 notif1 null or output package packed
parameter pmos posedge primitive priority pull0 pull1 pulldown pullup rcmos real realtime reg
release repeat return rnmos rpmos rtran rtranif0 rtranif1 scalared shortint signed small
specify specparam static string strong0 strong1 struct supply0 supply1 table task time tran
tranif0 tranif1 tri tri0 tri1 triand trior trireg type typedef union unique unsigned use uwire
var vectored void wait wand weak0 weak1 while wire wor xnor xor
"""
_CPP = """
alignas alignof asm auto bool case catch char class const constexpr continue decltype default
delete do double else enum explicit extern false float for friend goto if inline int long
mutable namespace new noexcept nullptr operator private protected public register return short
signed sizeof static struct switch template this throw true try typedef typename union unsigned
using virtual void volatile while
"""
RESERVED = frozenset(_VERILOG.split()) | frozenset(_CPP.split())
MAX_LENGTH = 64


def sanitize(name: str, *, prefix: str = "n") -> str:
    """A lower-case identifier of letters, digits and single underscores, never a keyword.

    Verilog, C++ and Tcl all accept it unquoted; it never starts with a digit or an underscore
    (leading underscores are reserved in C++), and keeps at most ``MAX_LENGTH`` characters.
    """
    ident = re.sub(r"[^0-9a-zA-Z]+", "_", name).strip("_").lower()
    if not ident or not ident[0].isalpha():
        ident = f"{prefix}_{ident}".rstrip("_")
    if ident in RESERVED:
        ident = f"{ident}_{prefix}"
    return ident[:MAX_LENGTH].rstrip("_")


class Namer:
    """Gives every distinct (name, role) a distinct safe identifier, the same one each time.

    Keyed by the model's own name, never by its sanitised form: ``Conv1`` and ``conv1`` (or
    ``block.conv`` and ``block/conv``) sanitise alike but are different layers.
    """

    def __init__(self, *, prefix: str = "n", taken: frozenset[str] = frozenset()):
        self.prefix = prefix
        self._given: dict[tuple[str, str], str] = {}
        self._used: set[str] = set(taken)

    def __call__(self, name: str, role: str = "", *, prefix: str | None = None) -> str:
        """The identifier of ``name`` in ``role`` (a short safe suffix such as "u" or "c0_4")."""
        key = (name, role)
        if key in self._given:
            return self._given[key]
        if role and sanitize(role) != role.lower():
            raise ValueError(f"role {role!r} is not a safe identifier fragment")
        tail = f"_{role}" if role else ""
        base = sanitize(name, prefix=prefix or self.prefix)[: MAX_LENGTH - len(tail)]
        base = base.rstrip("_") + tail
        ident, k = base, 1
        while ident in self._used:
            suffix = f"_{k}"
            ident, k = base[: MAX_LENGTH - len(suffix)].rstrip("_") + suffix, k + 1
        self._used.add(ident)
        self._given[key] = ident
        return ident
