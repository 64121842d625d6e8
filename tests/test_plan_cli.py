from __future__ import annotations

import json

import pytest
from conftest import save, tiny_cnn

from fpdeep.cli import main


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    return str(save(tiny_cnn(), tmp_path_factory.mktemp("m")))


def test_plan_writes_text_json_and_html(model, tmp_path, capsys):
    out = tmp_path / "plan.json"
    page = tmp_path / "plan.html"
    code = main(["plan", model, "--board", "vcu118", "--boards", "2", "--partition", "optimal",
                 "--json", str(out), "--html", str(page), "--batch", "8"])
    assert code == 0
    assert "2 x vcu118" in capsys.readouterr().out
    data = json.loads(out.read_text())
    assert data["strategy"] == "optimal" and len(data["boards"]) == 2
    assert "<svg" in page.read_text()


def test_plan_json_to_stdout_is_pure_json(model, capsys):
    assert main(["plan", model, "--board", "zcu102", "--boards", "2", "--json", "-"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["cluster"]["boards"] == ["zcu102", "zcu102"]


def test_plan_gives_the_generated_design_figures_or_why_not(model, tmp_path, capsys):
    from fpdeep.examples import build_vgg16

    assert main(["plan", model, "--board", "zcu102", "--boards", "2", "--batch", "4",
                 "--json", str(tmp_path / "p.json")]) == 0
    assert "generated design (image-at-a-time pipeline" in capsys.readouterr().out
    g = json.loads((tmp_path / "p.json").read_text())["generated"]
    assert g["batch"] == 4 and g["batch_cycles"] == g["first_image_cycles"] + 3 * g["ii_cycles"]
    assert g["ii_cycles"] >= json.loads((tmp_path / "p.json").read_text())["totals"]["ii_cycles"]
    # VGG-16 on 8 VCU118s spills to DRAM, which the generated boards take, fc6's 103 M
    # weights in one off-chip command too; the engines' whole 224 x 224 tensors are what
    # they cannot, and the plan says so
    vgg = save(build_vgg16(), tmp_path)
    assert main(["plan", str(vgg), "--board", "vcu118", "--boards", "8", "--json", "-"]) == 0
    error = json.loads(capsys.readouterr().out)["generated"]["error"]
    assert "its engines and units alone take" in error and "moves" not in error


def test_plan_mixed_chain(model, capsys):
    assert main(["plan", model, "--board", "vc709,vcu118", "--boards", "2"]) == 0
    assert "2 x vc709, vcu118" in capsys.readouterr().out
    assert main(["plan", model, "--board", "vc709,vcu118", "--boards", "3"]) == 2
    assert "boards (3) does not match the 2 boards listed" in capsys.readouterr().err


def test_plan_sweep(model, tmp_path, capsys):
    out = tmp_path / "sweep.json"
    assert main(["plan", model, "--board", "u250", "--sweep", "1..3", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "vs linear" in text
    data = json.loads(out.read_text())
    assert [row["boards"] for row in data["sweep"]] == [1, 2, 3]
    # Each count carries the design `build` would make of it; the last is the plan shown.
    assert data["sweep"][-1]["generated"] == data["generated"]
    assert "generated images/s (batch)" in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--board", "nosuch", "--boards", "2"], "unknown board 'nosuch'; known boards: "),
        (["--board", "vcu118", "--boards", "0"], "boards must be a positive integer"),
        (["--board", "vcu118", "--boards", "-2"], "boards must be a positive integer"),
        (["--board", "vcu118", "--boards", "2", "--link-gbps", "0"],
         "link rate must be a positive number"),
        (["--board", "vcu118", "--boards", "2", "--precision", "4"], "precision must be one of"),
        (["--board", "vcu118"], "give --boards N"),
    ],
)
def test_bad_input_exits_2_with_a_message(model, capsys, args, message):
    assert main(["plan", model, *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fpdeep: error: ") and message in err


def test_bad_sweep_is_a_usage_error(model, capsys):
    with pytest.raises(SystemExit) as info:
        main(["plan", model, "--board", "vcu118", "--sweep", "0..3"])
    assert info.value.code == 2
    assert "'0..3' is not a list of board counts" in capsys.readouterr().err


def test_malformed_board_file_exits_2(model, tmp_path, capsys):
    path = tmp_path / "board.toml"
    path.write_text('name = "x"\n[device\n')
    assert main(["plan", model, "--board-file", str(path), "--boards", "1"]) == 2
    assert f"board file {path}, line 2: malformed TOML" in capsys.readouterr().err


def test_a_link_too_slow_for_the_link_model_is_named_not_divided_by(model, capsys):
    assert main(["plan", model, "--board", "zcu102", "--boards", "2", "--link-gbps", "1e-6"]) == 0
    out = capsys.readouterr().out
    assert "generated design: cannot be built (the link between boards 0 and 1 carries" in out
    assert "needs at least 1/1024" in out


@pytest.mark.parametrize("clock", ["1e9", "nan", "-3"])
def test_absurd_clocks_are_refused(model, capsys, clock):
    assert main(["plan", model, "--board", "zcu102", "--boards", "2", "--clock", clock]) == 2
    assert "clock must be a number above 0 and at most 1000 MHz" in capsys.readouterr().err


@pytest.mark.parametrize(("sweep", "message"), [
    ("1..100000", "a sweep plans at most 256 counts of at most 1024 boards"),
    ("1..1000000000000", "asks for 1,000,000,000,000 board counts"),
    ("2000", "at most 1024 boards"),
])
def test_sweeps_are_bounded_before_they_are_planned(model, capsys, sweep, message):
    with pytest.raises(SystemExit) as info:
        main(["plan", model, "--board", "zcu102", "--sweep", sweep])
    assert info.value.code == 2 and message in capsys.readouterr().err
