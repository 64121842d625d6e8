"""Typed stage outputs round-trip through JSON: Plan, Design (numerics included), Schedule."""

from __future__ import annotations

import json

import pytest

import fpdeep
from fpdeep import flow
from fpdeep.design.lower import (
    DESIGN_VERSION,
    BuildInfo,
    Design,
    design_document,
    read_design_document,
)
from fpdeep.errors import FpdeepError
from fpdeep.numerics import Format, Numerics
from fpdeep.planning.planner import Plan
from fpdeep.resources import PACKAGE_DIR
from fpdeep.schedule.tasks import Schedule, schedule
from fpdeep.serial import FormatError, from_data

DIGITS = PACKAGE_DIR / "examples" / "digits_cnn.onnx"
# Formats other than the defaults, so that a round trip that dropped them would show.
CUSTOM = Numerics(formats={"act": Format(16, 9)},
                  overrides={"conv1": {"weight": Format(16, 13)}})


def _through_json(data):
    return json.loads(json.dumps(data))


@pytest.fixture(scope="module")
def built():
    config = flow.BuildConfig(model=DIGITS, board="zcu102", boards=3, batch=4, numerics=CUSTOM,
                              loss="mse")
    return flow.run((*flow.PLAN_STEPS, flow.lower), config)


def test_plan_round_trips(built):
    plan = built.plan
    assert Plan.from_json(_through_json(plan.to_json())) == plan


def test_design_round_trips_with_its_numerics(built):
    design = built.design
    again = Design.from_json(_through_json(design.to_json()))
    assert again == design
    assert again.numerics.fmt("act", "fc") == Format(16, 9)
    assert again.numerics.fmt("weight", "conv1") == Format(16, 13)
    assert again.loss == "mse"


def test_schedule_round_trips(built):
    steps = schedule(built.design, built.network, batch=2)
    again = Schedule.from_json(_through_json(steps.to_json()))
    assert again == steps and again.cycles(built.design.links) > 0


def test_design_json_is_versioned_and_names_what_it_cannot_read(built):
    info = BuildInfo("model.onnx", None)
    doc = _through_json(design_document(built.design, built.plan, info))
    assert doc["format"] == "fpdeep design" and doc["version"] == DESIGN_VERSION
    assert read_design_document(doc, "d.json") == (built.design, built.plan, info)
    old = {k: v for k, v in doc.items() if k not in ("format", "version")}
    with pytest.raises(FpdeepError, match=r"d.json is not a version 3 fpdeep design .*older"):
        read_design_document(old, "d.json")
    with pytest.raises(FpdeepError, match=r"is a version 2 fpdeep design; this fpdeep reads "
                                          r"version 3"):
        read_design_document({**doc, "version": 2}, "d.json")
    damaged = {**doc, "boards": [{"index": "zero"}]}
    with pytest.raises(FpdeepError, match=r"d.json is damaged \(\$.boards\[0\].index: "):
        read_design_document(damaged, "d.json")


def test_reading_names_the_path_of_a_bad_value():
    with pytest.raises(FormatError, match=r"\$.formats.act.width: expected int, got '16'"):
        from_data(Numerics, {"formats": {"act": {"width": "16", "frac": 9}}})


@pytest.mark.sim
@pytest.mark.slow
def test_a_design_with_custom_numerics_is_simulated_with_them(tmp_path):
    """The simulation's golden model reads the design's numerics from design.json: with the
    default formats instead, this design's shifts would not match it."""
    from fpdeep.cosim.simulator import simulator_available

    if not simulator_available("verilator"):
        pytest.skip("Verilator not found")
    network = fpdeep.load_onnx(DIGITS)
    plan = fpdeep.plan(network, fpdeep.make_cluster(board="zcu102", boards=1), batch=2)
    out = tmp_path / "custom"
    flow.write_build(network, plan, out, model_files={"model.onnx": DIGITS.read_bytes()},
                     numerics=CUSTOM)
    result = flow.simulate(out, flow.RunConfig(batch=2, steps=1))
    assert result["match"] is True and result["mismatches"] == []
