"""hw/README.md's tables of the components and their interfaces, written from the
declarations: ``python -m fpdeep.hwlib hw/README.md`` rewrites the part between the markers,
and a test fails when that part differs from the declarations."""

from __future__ import annotations

from fpdeep.hwlib.library import FOLDERS, MODULES
from fpdeep.hwlib.signature import CLOCK, CONFIG, IN, Module, Signal, Stream, Width
from fpdeep.tables import replace_part

BEGIN = "<!-- generated from fpdeep.hwlib by `python -m fpdeep.hwlib hw/README.md` -->"
END = "<!-- end of the generated part -->"


def _bits(width: Width) -> str:
    return "" if width == 1 else f"[{width}]"


def _stream(s: Stream) -> str:
    extra = [f"{name}{_bits(w)}" for name, w in s.side]
    if s.last is None:
        extra.append("no last")
    elif s.last != 1:
        extra.append(f"last{_bits(s.last)}")
    if s.lanes != 1:
        extra.append(f"{s.lanes} valid/ready")
    return f"`{s.name}`{_bits(s.data)}" + (f" ({', '.join(extra)})" if extra else "")


def _signals(signals: list[Signal]) -> str:
    return ", ".join(f"`{s.name}`{_bits(s.width)}" for s in signals)


def _interface(m: Module) -> str:
    plain = [s for s in m.members if isinstance(s, Signal) and s.role not in (CLOCK, CONFIG)]
    parts = [
        ", ".join(_stream(s) for s in m.streams if s.sink),
        ", ".join(_stream(s) for s in m.streams if not s.sink),
        _signals([s for s in m.members if isinstance(s, Signal) and s.role == CONFIG]),
        "; ".join(x for x in (_signals([s for s in plain if s.direction == IN]),
                              _signals([s for s in plain if s.direction != IN])) if x),
    ]
    return " | ".join(p or "—" for p in parts)


def tables() -> str:
    """The generated part of hw/README.md, markers included."""
    lines = [BEGIN, "", "### Components", "",
             "| folder | module | what | parameters (RTL defaults) | instantiates |",
             "|---|---|---|---|---|"]
    for folder, what in FOLDERS.items():
        mods = [m for m in MODULES.values() if m.folder == folder]
        for k, m in enumerate(mods):
            params = ", ".join([*(f"`{name}={value}`" for name, value in m.params.items()),
                                *(f"`{name}={width}`" for name, width in m.derived.items())])
            uses = ", ".join(f"`{u}`" for u in m.uses) or "—"
            first = f"`{folder}/`: {what}" if k == 0 else ""
            lines.append(f"| {first} | `{m.name}` | {m.summary} | {params} | {uses} |")
    others = ", ".join(f"`{m.name}`" for m in MODULES.values()
                       if [s.name for s in m.signals()[:2]] != ["clk", "rst"])
    lines += ["", "### Interfaces", "",
              "Widths in bits, as the RTL writes them (a parameter or an expression of "
              "parameters); no width is one bit. Every module takes `clk` and `rst` first "
              f"except {others}.", "",
              "| module | streams in | streams out | configuration | other inputs; outputs |",
              "|---|---|---|---|---|"]
    lines += [f"| `{m.name}` | {_interface(m)} |" for m in MODULES.values()]
    return "\n".join([*lines, "", END])


def updated(text: str) -> str:
    """``text`` (hw/README.md) with its generated part rewritten."""
    return replace_part(text, BEGIN, END, tables(), where="the README")
