"""The host files: a script and its link faults written and read back; an outputs file
followed while its host writes it, piece by piece; the stuck link a failed step's readings
name."""

from __future__ import annotations

import numpy as np
import pytest

from fpdeep.cosim.script import (
    END,
    MAGIC,
    VERSION,
    LinkFaults,
    Op,
    OutputsReader,
    OutputsWriter,
    Script,
    read_outputs,
    read_script,
    write_script,
)
from fpdeep.errors import FpdeepError


def test_a_reader_follows_the_outputs_as_the_host_flushes_them(tmp_path):
    path = tmp_path / "outputs.bin"
    reader = OutputsReader(path)
    assert not reader.read() and reader.answers == {}  # the host has not begun
    writer = OutputsWriter(path)
    assert not reader.read()  # the header only
    writer.answer(0, [1, 2, 3])
    writer.answer(4, [(1 << 64) - 2])  # a read-back word of -2
    assert not reader.read()  # not flushed yet
    writer.flush()
    assert reader.read() and reader.answers == {0: (1, 2, 3), 4: ((1 << 64) - 2,)}
    assert reader.last == 4 and not reader.finished
    with pytest.raises(FpdeepError, match="end early"):
        reader.outputs()
    writer.answer(7, [])
    writer.close(None, 1234, 5678)
    assert reader.read() and reader.finished and reader.answers[7] == ()
    got = reader.outputs()
    assert (got.failed, got.cycles, got.wall_ns) == (None, 1234, 5678)
    assert read_outputs(path) == got


def test_a_record_split_between_reads_is_taken_whole(tmp_path):
    # the words as the file format defines them, written a few bytes at a time
    words = [MAGIC, VERSION, 3, 2, 10, 11, 9, 1, 12, END, 3, 99, 100]
    data = np.asarray(words, dtype="<u8").tobytes()
    path = tmp_path / "outputs.bin"
    reader = OutputsReader(path)
    for cut in [*range(0, len(data), 5), len(data)]:
        path.write_bytes(data[:cut])
        reader.read()
        whole = cut // 8  # words in the file; record 3 ends at word 6, record 9 at word 9
        want = {3: (10, 11), 9: (12,)} if whole >= 9 else {3: (10, 11)} if whole >= 6 else {}
        assert reader.answers == want, cut
        assert reader.finished == (whole == len(words))
    assert reader.outputs().failed == 3


def test_another_file_is_named(tmp_path):
    path = tmp_path / "x.bin"
    path.write_bytes(np.asarray([1, 2, 3], dtype="<u8").tobytes())
    with pytest.raises(FpdeepError, match="is not an fpdeep host outputs file of version"):
        OutputsReader(path).read()


def test_a_script_carries_the_link_faults(tmp_path):
    faults = LinkFaults.rates(seed=7, ber=1e-4, drop=0.05)
    assert faults == LinkFaults(7, round(1e-4 * 2**32), round(0.05 * 2**32))
    script = Script(3, 16, (Op("CSR_READ", 1, (0x10,)), Op("MARK", 0)), faults)
    write_script(tmp_path / "s.bin", script)
    assert read_script(tmp_path / "s.bin") == script
    # the header's words, as the native host reads them: boards, reset, seed, ber, drop, count
    words = np.frombuffer((tmp_path / "s.bin").read_bytes(), dtype="<u8")
    assert list(words[2:8]) == [3, 16, 7, faults.ber, faults.drop, 2]


def test_a_failed_step_names_the_stuck_link():
    """Error 7: the board's LINK_FLAGS say which of its links is stuck or overrun."""
    from fpdeep.cosim.script import Outputs
    from fpdeep.cosim.session import Session, _failure
    from fpdeep.hwlib.csr import register_map

    rmap = register_map(counters=2)
    session = Session(2, {0: ["a", "b"], 1: ["a", "b"]})
    session.diagnosis[1] = {"status": 0, "stalled": 1, "links": 2}
    status = rmap.encode("STATUS", state="error", error_code=7)
    answers = {0: (status,), 1: (0,), 2: (rmap.encode("LINK_FLAGS", west_stuck=1),)}
    text = _failure(session, Outputs(answers, None, 0, 0), 1, ["a", "b"])
    assert text.startswith("board 1: a link is stuck or its peer overran it")
    assert text.endswith("the link to the west (board 1 -> board 0) is stuck")
    answers[2] = (rmap.encode("LINK_FLAGS", east_overflow=1),)
    text = _failure(session, Outputs(answers, None, 0, 0), 1, ["a", "b"])
    assert text.endswith("the link to the east (board 1 -> board 2) is overrun by its peer")
