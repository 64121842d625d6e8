"""fpdeep: CNN training accelerators for chains of FPGA boards, generated from ONNX."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# The public API, imported when first used: `import fpdeep.hwlib` (as every simulated
# testbench does) then does not load onnx and the planner, most of a second per process.
_API = {
    "Cluster": "fpdeep.planning.cluster",
    "FpdeepError": "fpdeep.errors",
    "LayerWorkload": "fpdeep.analysis",
    "ModelError": "fpdeep.errors",
    "NetworkWorkload": "fpdeep.analysis",
    "Plan": "fpdeep.planning.planner",
    "analyze": "fpdeep.analysis",
    "load_onnx": "fpdeep.frontend",
    "make_cluster": "fpdeep.planning.cluster",
    "plan": "fpdeep.planning.planner",
    "sweep": "fpdeep.planning.planner",
}

__all__ = [
    "Cluster",
    "Plan",
    "FpdeepError",
    "LayerWorkload",
    "ModelError",
    "NetworkWorkload",
    "__version__",
    "analyze",
    "load_onnx",
    "make_cluster",
    "plan",
    "sweep",
]

if TYPE_CHECKING:
    from fpdeep.analysis import LayerWorkload, NetworkWorkload, analyze
    from fpdeep.errors import FpdeepError, ModelError
    from fpdeep.frontend import load_onnx
    from fpdeep.planning.cluster import Cluster, make_cluster
    from fpdeep.planning.planner import Plan, plan, sweep


def __getattr__(name: str) -> Any:
    """An API name from its module, or a subpackage (``fpdeep.golden``), on first use."""
    if name in _API:
        value = getattr(importlib.import_module(_API[name]), name)
    elif not name.startswith("_"):
        try:
            value = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_API})
