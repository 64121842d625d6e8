from __future__ import annotations

import html
import json
import re
import shutil
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import pytest

import fpdeep
from fpdeep import flow
from fpdeep.cli import main
from fpdeep.planning.cluster import make_cluster
from fpdeep.planning.planner import PASSES, plan
from fpdeep.report.html import (
    board_load_values,
    embed_json,
    outcome_html,
    plan_html,
    resource_values,
)
from fpdeep.report.plan import plan_json, sweep_rows

DIGITS = Path(fpdeep.__file__).parent / "examples" / "digits_cnn.onnx"
HOSTILE = 'net</script><script>alert("x")</script>&$\\frac{1}{0}$'

# A result.json as `fpdeep sim` writes it for digits_cnn on 2 ZCU102 boards, batch 4, with one
# step slower than modelled so that the simulated and planner bars differ.
RESULT = {
    "match": True, "mismatches": [], "steps": 2, "batch": 4, "cycles": [9640, 9702],
    "modelled_cycles": 9640, "cycle_error": 62 / 9640 / 2,
    "images_per_s_at_clock": 4 * 250e6 / 9671, "loss": [2.3095, 1.7070], "clock_mhz": 250.0,
    "planner_ii_cycles": 907, "planner_bottleneck": "0:conv1_c0_4_fp",
    "resources": [
        {"board": 0, "resource": "conv1_c0_4_fp", "busy": 3675, "stall": 0, "modelled": 3674,
         "busy_share": 0.37,
         "window": 3749, "engine": True, "window_share": 0.9803},
        {"board": 1, "resource": "fc_c0_10_fp", "busy": 2399, "stall": 3458, "modelled": 2398,
         "busy_share": 0.24,
         "window": 2447, "engine": True, "window_share": 0.9804},
        {"board": 1, "resource": "loss", "busy": 2349, "stall": 4032, "modelled": 2348,
         "busy_share": 0.24,
         "window": 2396, "engine": False, "window_share": 0.9804},
        {"board": 1, "resource": "west_rx", "busy": 900, "stall": 0, "modelled": None,
         "busy_share": 0.09,
         "window": 919, "engine": False, "window_share": 0.9793}],
}


CONFIG = flow.BuildConfig(model=DIGITS, board="zcu102", boards=2, batch=4)


@pytest.fixture(scope="module")
def digits():
    state = flow.run(flow.PLAN_STEPS, CONFIG)
    return state, state.plan


def embedded(page: str) -> dict[str, object]:
    """The data of every plot, by plot name, as a browser would read it."""
    found = re.findall(r'<script type="application/json" data-plot="([^"]+)">(.*?)</script>',
                       page, flags=re.S)
    return {name: json.loads(text) for name, text in found}


def test_board_load_bars_are_each_pass_slowest_engine_and_reach_the_ii(digits):
    state, result = digits
    values = board_load_values(plan_json(result, flow.generated_design(state, CONFIG)))
    for bp in result.boards:
        bars = [values["cycles_per_image"][p][bp.index] for p in PASSES]
        assert max(b for b in bars if b is not None) == bp.compute_cycles
    # The bottleneck board's bar meets the II line: bars and line share one scale.
    assert max(values["cycles_per_image"]["fp"]) == values["ii_cycles"] == result.totals.ii_cycles
    # the generated design's II, which waits on its streams too
    generated = flow.generated_design(state, CONFIG).ii_cycles
    assert values["generated_ii_cycles"] == generated > values["ii_cycles"]
    assert values["cycles_per_image"]["bp"][0] is not None  # conv2's slice on board 0 has BP


def test_board_without_bp_engines_has_no_bp_bar():
    net = fpdeep.load_onnx(DIGITS)
    result = plan(net, make_cluster(board="zcu102", boards=3), strategy="fpdeep", batch=4)
    values = board_load_values(plan_json(result))
    firsts = [bp.index for bp in result.boards
              if all(sp.engines["bp"] is None for sp in bp.slices)]
    for index in firsts:
        assert values["cycles_per_image"]["bp"][index] is None


def test_dsp_busy_is_full_where_every_engine_runs_the_whole_ii(digits):
    _, result = digits
    busy = resource_values(plan_json(result))["percent"]["dsp_busy"]
    ii = result.totals.ii_cycles
    for bp in result.boards:
        engines = [e for sp in bp.slices for e in sp.engines.values() if e]
        if all(e.cycles == ii for e in engines):
            assert busy[bp.index] == pytest.approx(100.0)
        else:
            assert 0 < busy[bp.index] < 100


def test_plan_page_is_self_contained_and_well_formed(digits):
    state, result = digits
    generated = flow.generated_design(state, CONFIG)
    rows = sweep_rows([(1, result), (2, result)], generated=lambda p: generated)
    page = plan_html(result, rows, generated)
    assert page.startswith("<!DOCTYPE html>")
    assert set(embedded(page)) == {"board-load", "resources", "links", "scaling"}
    assert page.count("<svg") == 4
    assert re.findall(r"<script[^>]*>", page) == ['<script type="application/json" '
                                                  f'data-plot="{n}">' for n in embedded(page)]
    assert set(re.findall(r'href="(.)', page)) <= {"#"}  # nothing fetched
    ids = re.findall(r'\bid="([^"]+)"', page)
    assert len(ids) == len(set(ids)) > 0  # the plots' element ids stay apart
    for svg in re.findall(r"<svg.*?</svg>", page, flags=re.S):
        ET.fromstring(svg)
    assert "DS891" in page  # the board's sources


def test_counts_without_a_generated_design_are_listed_with_why(digits):
    _, result = digits
    rows = sweep_rows([(n, result) for n in (1, 2, 3, 5)], generated=lambda p: "too <big>")
    page = plan_html(result, rows)
    assert embedded(page)["scaling"]["generated_images_per_s_batch"] == [None] * 4
    assert "No generated design at 1\N{EN DASH}3, 5 boards (of 4 counts)" in page
    assert page.count("too &lt;big&gt;</li>") == 4


def test_model_names_and_task_kinds_are_escaped(digits):
    _, result = digits
    page = plan_html(replace(result, model=HOSTILE))
    assert "<script>alert" not in page and html.escape(HOSTILE) in page
    plan_data = plan_json(result)
    hostile_result = {**RESULT, "resources": [{"board": 0, "resource": HOSTILE, "busy": 1,
                                               "stall": 0, "modelled": 2, "busy_share": 0.1,
                                               "window": 2, "engine": True,
                                               "window_share": 0.5}]}
    page = outcome_html({**plan_data, "model": HOSTILE}, hostile_result)
    assert "<script>alert" not in page and "</script><script" not in page
    assert embedded(page)["breakdown"]["kinds"] == [f"0:{HOSTILE}"]
    assert json.loads(embed_json({"k": "</script>"})) == {"k": "</script>"}


def test_report_page_before_a_simulation_says_so(digits):
    _, result = digits
    page = outcome_html(plan_json(result), None)
    assert "not simulated yet" in page
    assert set(embedded(page)) == {"board-load", "resources", "links"}


def test_report_html_cli_errors_exit_2(tmp_path, capsys):
    assert main(["report", str(tmp_path), "--html", str(tmp_path / "r.html")]) == 2
    assert "not an fpdeep build folder" in capsys.readouterr().err
    assert not (tmp_path / "r.html").exists()


# ------------------------------------------------------------------ in a real browser (slow)


@pytest.fixture(scope="module")
def browser():
    executable = shutil.which("chromium")
    if executable is None:
        pytest.skip("no chromium on PATH (Debian: apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    with sync_api.sync_playwright() as p:
        try:
            chromium = p.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        except sync_api.Error as exc:
            pytest.skip(f"playwright cannot start {executable}: {str(exc).splitlines()[0]}")
        yield chromium
        chromium.close()


def render(browser, page_file: Path, shot: Path) -> dict[str, object]:
    """Open the page, screenshot it, and return the plots' data read from the DOM; fail on any
    console error or script error, and on any text that overflows its box."""
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(page_file.resolve().as_uri())
    page.screenshot(path=str(shot), full_page=True)
    data = page.evaluate("""() => Object.fromEntries(
        [...document.querySelectorAll('script[type="application/json"]')]
            .map(s => [s.dataset.plot, JSON.parse(s.textContent)]))""")
    overflow = page.evaluate("""() => [...document.querySelectorAll('pre, figure, svg')]
        .filter(e => e.scrollWidth > e.clientWidth + 1
                     || e.getBoundingClientRect().right > document.documentElement.clientWidth)
        .map(e => e.tagName)""")
    sizes = page.evaluate("""() => [...document.querySelectorAll('figure svg')]
        .map(s => [s.getBoundingClientRect().width, s.getBoundingClientRect().height])""")
    page.close()
    assert errors == []
    assert overflow == []
    assert sizes and all(w > 300 and h > 100 for w, h in sizes)
    return data


def assert_not_blank(shot: Path) -> None:
    from PIL import Image

    image = Image.open(shot).convert("RGB")
    colours = image.getcolors(maxcolors=1 << 20)
    assert colours is not None and len(colours) > 50  # text, bars, lines: not one flat colour
    white = max(count for count, rgb in colours if rgb == (255, 255, 255))
    assert white < 0.97 * image.width * image.height


@pytest.mark.slow
def test_plan_html_in_a_browser_shows_the_json_figures(browser, tmp_path, capsys):
    out, page = tmp_path / "plan.json", tmp_path / "plan.html"
    assert main(["plan", str(DIGITS), "--board", "zcu102", "--sweep", "1..4", "--batch", "4",
                 "--json", str(out), "--html", str(page)]) == 0
    capsys.readouterr()
    ref = json.loads(out.read_text())
    data = render(browser, page, tmp_path / "plan.png")
    assert_not_blank(tmp_path / "plan.png")

    ok = [r for r in ref["sweep"] if "error" not in r]
    scaling = data["scaling"]
    assert scaling["boards"] == [r["boards"] for r in ok] == [1, 2, 3, 4]
    for key in ("images_per_s", "images_per_s_batch", "ideal_images_per_s"):
        assert scaling[key] == [r[key] for r in ok]
    assert scaling["generated_images_per_s_batch"] == [
        r["generated"]["images_per_s_batch"] for r in ok]
    assert all(v is not None for v in scaling["generated_images_per_s_batch"])  # all buildable
    assert ok[-1]["generated"] == ref["generated"]  # the sweep's last count is the plan shown

    load = data["board-load"]
    assert load["boards"] == [b["index"] for b in ref["boards"]]
    assert load["ii_cycles"] == ref["totals"]["ii_cycles"]
    assert load["generated_ii_cycles"] == ref["generated"]["ii_cycles"]
    for p in PASSES:
        assert load["cycles_per_image"][p] == [
            max((s["engines"][p]["cycles"] for s in b["slices"] if s["engines"][p]), default=None)
            for b in ref["boards"]]
    percent = data["resources"]["percent"]
    assert percent["dsp"] == pytest.approx(
        [100 * b["dsp_used"] / b["dsp_available"] for b in ref["boards"]], rel=1e-12)
    assert percent["uram"] == [None] * 4  # the ZCU102 has no URAM
    assert data["links"]["percent"] == pytest.approx(
        [100 * lk["utilisation"] for lk in ref["links"]], rel=1e-12)


@pytest.mark.slow
def test_report_html_in_a_browser_shows_the_json_figures(browser, tmp_path, capsys):
    build = tmp_path / "b"
    assert main(["build", str(DIGITS), "--board", "zcu102", "--boards", "2", "--batch", "4",
                 "-o", str(build)]) == 0
    assert main(["report", str(build), "--html", str(tmp_path / "before.html")]) == 0
    before = render(browser, tmp_path / "before.html", tmp_path / "before.png")
    assert set(before) == {"board-load", "resources", "links"}

    (build / "sim").mkdir(exist_ok=True)
    (build / "sim" / "result.json").write_text(json.dumps(RESULT))
    out, page = tmp_path / "report.json", tmp_path / "report.html"
    assert main(["report", str(build), "--json", str(out), "--html", str(page)]) == 0
    capsys.readouterr()
    ref = json.loads(out.read_text())
    data = render(browser, page, tmp_path / "report.png")
    assert_not_blank(tmp_path / "report.png")

    c = ref["comparison"]
    assert data["steps"] == {"batch": 4, "steps": [1, 2], "planner": c["planner_batch_cycles"],
                             "simulated": c["measured_cycles"],
                             "ideal": c["ideal_pipeline_cycles"]}
    assert data["steps"]["simulated"] == [9640, 9702]
    # the busiest resources that have a model figure, busiest first
    modelled = [r for r in ref["simulation"]["resources"] if r["modelled"] is not None]
    assert data["breakdown"] == {"kinds": [f"{r['board']}:{r['resource']}" for r in modelled],
                                 "simulated": [r["busy"] for r in modelled],
                                 "modelled": [r["modelled"] for r in modelled]}
    plan_file = json.loads((build / "plan.json").read_text())
    assert data["board-load"]["ii_cycles"] == plan_file["totals"]["ii_cycles"]
    assert data["board-load"]["generated_ii_cycles"] == plan_file["generated"]["ii_cycles"]
