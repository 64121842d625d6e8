from __future__ import annotations

import pytest

from fpdeep.errors import FpdeepError
from fpdeep.planning.boards import get_board, known_boards, load_board_file, parse_board

REQUIRED = {"vc709", "vcu118", "u250", "u280", "zcu102", "s10gx2800"}


def test_bundled_boards_load_and_name_their_sources():
    assert set(known_boards()) >= REQUIRED
    for name in known_boards():
        board = get_board(name)
        assert board.name == name
        assert set(board.sources) == {"device", "dsp_per_mac", "links", "memory", "clock",
                                      "power"}
        assert all(len(source) > 10 for source in board.sources.values())


def test_vcu118_figures_match_ds890_and_ug1224():
    board = get_board("VCU118")  # names are case-insensitive
    assert (board.dsp, board.bram_blocks, board.uram_blocks) == (6840, 2160, 960)
    assert board.bram_bits == 2160 * 36 * 1024  # 75.9 Mb
    assert board.uram_bits == 960 * 288 * 1024  # 270 Mb
    # one QSFP28 per neighbour; 25.78125 = 825/32 is exact in binary, so lanes x rate is too
    assert board.link_gbps == 4 * 25.78125
    assert board.mac_lanes(16, 0.85) == 5814
    assert board.mac_lanes(8, 0.85) == 11628


def test_unknown_board_lists_the_known_ones():
    with pytest.raises(FpdeepError) as info:
        get_board("vcu999")
    message = str(info.value)
    assert "unknown board 'vcu999'" in message
    for name in REQUIRED:
        assert name in message
    assert "--board-file" in message


def board_text(**override: str) -> str:
    text = (get_board_path("vcu118")).read_text()
    for old, new in override.items():
        assert old in text
        text = text.replace(old, new)
    return text


def get_board_path(name: str):
    from importlib import resources

    return resources.files("fpdeep.planning") / "boards" / f"{name}.toml"


def test_malformed_toml_names_file_and_line(tmp_path):
    path = tmp_path / "mine.toml"
    text = board_text()
    lines = text.splitlines()
    lines[8] = "dsp = = 6840"  # line 9
    path.write_text("\n".join(lines))
    with pytest.raises(FpdeepError, match=r"board file .*mine\.toml, line 9: malformed TOML"):
        load_board_file(path)


def test_bad_value_names_file_and_line(tmp_path):
    path = tmp_path / "mine.toml"
    text = board_text(**{"lane_gbps = 25.78125": 'lane_gbps = "fast"'})
    path.write_text(text)
    line = 1 + text.splitlines().index('lane_gbps = "fast"')
    with pytest.raises(FpdeepError, match=rf"mine\.toml, line {line}: \[links\] lane_gbps must be "
                                          r"a number > 0, got 'fast'"):
        load_board_file(path)


def test_missing_key_and_section(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text(board_text(**{"dsp = 6840\n": ""}))
    with pytest.raises(FpdeepError, match=r"line \d+: \[device\] is missing 'dsp'"):
        load_board_file(path)
    text = board_text()
    path.write_text(text[: text.index("[power]")])
    with pytest.raises(FpdeepError, match=r"missing section \[power\]"):
        load_board_file(path)


def test_negative_and_zero_figures_are_rejected():
    with pytest.raises(FpdeepError, match=r"\[device\] dsp must be an integer > 0, got -5"):
        parse_board(board_text(**{"dsp = 6840": "dsp = -5"}), "x.toml")
    with pytest.raises(FpdeepError, match=r"\[links\] lane_gbps must be a number > 0, got 0"):
        parse_board(board_text(**{"lane_gbps = 25.78125": "lane_gbps = 0"}), "x.toml")


def test_unreadable_board_file(tmp_path):
    with pytest.raises(FpdeepError, match="cannot read board file"):
        load_board_file(tmp_path / "absent.toml")
