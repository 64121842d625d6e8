"""fpdeep: CNN training accelerators for chains of FPGA boards, generated from ONNX."""

from __future__ import annotations

__version__ = "0.1.0"

from fpdeep.analysis import LayerWorkload, NetworkWorkload, analyze  # noqa: E402
from fpdeep.errors import FpdeepError, ModelError  # noqa: E402
from fpdeep.frontend import load_onnx  # noqa: E402
from fpdeep.planning.cluster import Cluster, make_cluster  # noqa: E402
from fpdeep.planning.planner import Plan, plan, sweep  # noqa: E402

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
