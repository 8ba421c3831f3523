"""ardnet.log.read: a recording written by the C writer API (logwrite.c) read back into numpy,
every value compared with the formulas logwrite.c wrote; compressed, cut-short, missing and
damaged files; other programs' files (tests/log/tmcapgen.c): lz4 chunks, channels sharing a
topic, times of 2^63 and more, binary schemas, CRCs."""

import os
import pathlib
import subprocess

import numpy as np
import pytest

import ardnet

LOGWRITE = os.environ.get("ARD_TEST_LOGWRITE", "")
MCAPGEN = os.environ.get("ARD_TEST_MCAPGEN", "")
N = 300
BASE = 1790000000123456789
ALL = "i8 u8[3] i16 u16 i32 u32 i64 u64 f32 f64[3]"


def write(path, compression=None):
    assert LOGWRITE, "ARD_TEST_LOGWRITE is not set (run the tests through ctest)"
    args = [LOGWRITE, str(path)] + ([compression] if compression else [])
    r = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return path


@pytest.fixture(params=[None, "zstd"], ids=["plain", "zstd"])
def rec(request, tmp_path):
    path = write(tmp_path / "run.mcap", request.param)
    return request.param, ardnet.log.read(path)


def times(idx, extra=0):
    real = BASE + idx * 1000000 + extra
    log = BASE + idx * 1000000 + 20000 + idx + extra
    return log, real


def check_times(c, idx, start, extra=0):
    log, real = times(idx, extra)
    assert c.t_ns.dtype == np.uint64 and c.t_pub_ns.dtype == np.uint64
    assert c.t.dtype == np.float64 and c.t_pub.dtype == np.float64
    np.testing.assert_array_equal(c.t_ns, log)
    np.testing.assert_array_equal(c.t_pub_ns, real)
    np.testing.assert_allclose(c.t, (log - start) / 1e9, rtol=0, atol=1e-12)
    np.testing.assert_allclose(c.t_pub, (real - start) / 1e9, rtol=0, atol=1e-12)


def test_file_and_connections(rec):
    comp, d = rec
    assert list(d) == ["arm.state", "all", "blob", "quiet"]
    s = d.summary
    assert s["messages"] == N + N // 3 + N // 2
    assert s["complete"] is True and s["cut"] == ""
    assert s["compression"] == (comp or "")
    assert s["chunks"] > 1
    assert d.start_ns == BASE + 20000 == s["start_ns"]
    assert d.meta["domain"] == "pytest"
    assert d.meta["host"] == os.uname().nodename
    assert d.meta["version"] == ardnet.LIBRARY_VERSION
    assert isinstance(d.meta["start_ns"], int)
    assert [len(d[n]) for n in d] == [N, N // 3, N // 2, 0]
    assert d["arm.state"].missed == 4 and d["all"].missed == 0
    assert d["arm.state"].type == "q:f64[7] tick:u32" and d["blob"].type == ""
    assert d["blob"].size == 5 and d["arm.state"].size == 64 == ardnet.dtype("q:f64[7] tick:u32").itemsize


def test_arm_state_every_value(rec):
    d = rec[1]
    c = d["arm.state"]
    i = np.arange(N)
    assert c.fields == ("q", "tick")
    assert c["q"].shape == (N, 7) and c["q"].dtype == np.float64
    np.testing.assert_array_equal(c["q"], i[:, None] * 0.5 + np.arange(7)[None, :] * 0.001 - 3.0)
    assert c["tick"].dtype == np.uint32
    np.testing.assert_array_equal(c["tick"], 1000 + i)
    assert c.seq.dtype == np.uint64
    np.testing.assert_array_equal(c.seq, i + 1 + np.where(i >= 100, 4, 0))
    check_times(c, i, d.start_ns)
    # t - t_pub: receive time minus publish time (link latency plus the recorder's polling).
    np.testing.assert_allclose(c.t - c.t_pub, (20000 + i) / 1e9, atol=1e-12)


def test_every_basic_type(rec):
    d = rec[1]
    c = d["all"]
    k = np.arange(N // 3)
    assert c.packets.dtype == ardnet.dtype(ALL)
    want = {
        "f0": (np.int8, -128 + k),
        "f1": (np.uint8, (k[:, None] * 3 + np.arange(3)[None, :]) & 255),
        "f2": (np.int16, -32768 + k * 7),
        "f3": (np.uint16, 65535 - k),
        "f4": (np.int32, -2**31 + k),
        "f5": (np.uint32, 2**32 - 1 - k),
        "f6": (np.int64, [-2**63 + int(x) for x in k]),
        "f7": (np.uint64, [2**64 - 1 - int(x) for x in k]),
        "f8": (np.float32, k * 0.25),
        "f9": (np.float64, -k[:, None] * 1e-3 + np.arange(3)[None, :] * 1e6),
    }
    for name, (dt, values) in want.items():
        assert c[name].dtype == dt, name
        np.testing.assert_array_equal(c[name], np.array(values, dtype=dt), err_msg=name)
    np.testing.assert_array_equal(c.seq, k + 1)
    check_times(c, k * 3, d.start_ns)


def test_opaque_connection(rec):
    d = rec[1]
    c = d["blob"]
    k = np.arange(N // 2)
    assert c.packets.dtype == np.uint8 and c.packets.shape == (N // 2, 5)
    assert c.fields == ()
    want = (k[:, None] * 7 + np.arange(5)[None, :] * 31) & 255
    np.testing.assert_array_equal(c.packets, want)
    np.testing.assert_array_equal(c.data, want)
    np.testing.assert_array_equal(c.seq, k + 1)
    check_times(c, k * 2, d.start_ns, extra=1)
    with pytest.raises(KeyError, match="blob"):
        c["x"]


def test_connection_without_messages(rec):
    c = rec[1]["quiet"]
    assert c.packets.shape == (0,) and c.packets.dtype.names == ("x",)
    assert c["x"].dtype == np.float64
    assert c.t.shape == (0,) and c.t_ns.dtype == np.uint64 and c.seq.shape == (0,)


def test_typed_data_is_the_packet_bytes(rec):
    c = rec[1]["arm.state"]
    assert c.data.shape == (N, 64)
    assert bytes(c.data[5]) == c.packets[5].tobytes()


def test_path_objects_and_bytes(tmp_path):
    p = write(tmp_path / "x.mcap")
    assert len(ardnet.log.read(pathlib.Path(p))["arm.state"]) == N
    assert len(ardnet.log.read(os.fsencode(p))["all"]) == N // 3


def test_missing_file_names_it(tmp_path):
    p = tmp_path / "absent.mcap"
    with pytest.raises(ardnet.Error) as e:
        ardnet.log.read(p)
    assert e.value.code == ardnet.ENOENT
    assert str(p) in str(e.value)


def test_foreign_file_names_it(tmp_path):
    p = tmp_path / "notes.txt"
    p.write_text("this is not a recording\n" * 10)
    with pytest.raises(ardnet.Error) as e:
        ardnet.log.read(p)
    assert e.value.code == ardnet.ESTALE
    assert str(p) in str(e.value) and "MCAP" in str(e.value)


def test_damaged_chunk_names_file_and_offset(tmp_path):
    p = write(tmp_path / "bad.mcap")
    raw = bytearray(p.read_bytes())
    # A byte in the middle of the packets (inside a chunk's records): the chunk's CRC fails.
    pos = raw.find(np.float64(-3.0 + 0.5 * 40).tobytes())
    assert pos > 0
    raw[pos] ^= 0xFF
    p.write_bytes(bytes(raw))
    with pytest.raises(ardnet.Error) as e:
        ardnet.log.read(p)
    assert e.value.code == ardnet.ESTALE
    assert str(p) in str(e.value) and "offset" in str(e.value)


@pytest.mark.parametrize("compression", [None, "zstd"], ids=["plain", "zstd"])
def test_cut_short_reads_the_complete_part(tmp_path, compression):
    p = write(tmp_path / "cut.mcap", compression)
    raw = p.read_bytes()
    p.write_bytes(raw[:len(raw) // 2])
    d = ardnet.log.read(p)
    assert d.summary["complete"] is False and d.summary["cut"] != ""
    c = d["arm.state"]
    n = len(c)
    assert 0 < n < N
    assert c.packets.shape == (n,) and c.t.shape == (n,) and c.seq.shape == (n,)
    i = np.arange(n)
    np.testing.assert_array_equal(c["tick"], 1000 + i)
    np.testing.assert_array_equal(c["q"][:, 6], i * 0.5 + 0.006 - 3.0)
    check_times(c, i, d.start_ns)


ARD = os.environ.get("ARD_TOOL", "")


@pytest.mark.skipif(not ARD, reason="the ard tool is not built")
def test_ard_record_of_a_python_writer(domain, tmp_path):
    """A Python block writes; `ard record` records it; read() gives back every value and the
    writer's own publish stamps."""
    import signal
    import time

    out = ardnet.Port("w", "out", type="q:f64[7] tick:u32", connection="arm.state")
    ardnet.init([])
    sent = {}

    def send(k):
        out.packet["q"] = np.arange(7) * 0.25 + k
        out.packet["tick"] = k
        out.send()
        sent[out.info.seq] = (k, out.info.real_ns)

    send(1)  # already there when the recorder starts: recorded too
    path = tmp_path / "py.mcap"
    recorder = subprocess.Popen([ARD, "record", "arm.state", "-o", str(path), "--stats"],
                                stderr=subprocess.PIPE, text=True)
    try:
        # --stats prints every second: wait until the recorder has taken packet 1.
        for line in recorder.stderr:
            if line.split()[:3] == ["arm.state", "recorded", "1"]:
                break
        else:
            raise AssertionError("ard record ended before recording: %s" % recorder.wait())
        period = ardnet.Period(200)
        for k in range(2, 101):
            send(k)
            period.wait()
        time.sleep(0.3)  # the last packet is polled before the recorder stops
        recorder.send_signal(signal.SIGINT)
        _, err = recorder.communicate(timeout=60)
        assert recorder.returncode == 0, err
    finally:
        if recorder.poll() is None:
            recorder.kill()
            recorder.wait()
    d = ardnet.log.read(path)
    assert list(d) == ["arm.state"]
    c = d["arm.state"]
    assert c.type == "q:f64[7] tick:u32" and d.meta["domain"] == domain
    seq = c.seq.astype(np.int64)
    assert seq[0] == 1 and seq[-1] == 100 and np.all(np.diff(seq) > 0)
    # Whatever a busy host made the recorder miss is counted, never silently lost.
    assert len(c) + c.missed == 100
    k = np.array([sent[int(s)][0] for s in seq])
    np.testing.assert_array_equal(c["tick"], k)
    np.testing.assert_array_equal(c["q"], k[:, None] + np.arange(7)[None, :] * 0.25)
    np.testing.assert_array_equal(c.t_pub_ns, [sent[int(s)][1] for s in seq])
    assert np.all(c.t_ns >= c.t_pub_ns) and np.all(np.diff(c.t_ns) >= 0)


def mcapgen(path, kind):
    r = subprocess.run([MCAPGEN, str(path), kind], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return path


needs_mcapgen = pytest.mark.skipif(not MCAPGEN, reason="tmcapgen not built (no liblz4)")
PROTO = b"\x0a\x05hello\x00\x12\x00\xff\xfebin\x00"  # tmcapgen.c's binary schema


@needs_mcapgen
@pytest.mark.parametrize("kind,compression", [("foreign", "lz4"), ("foreign-plain", "")])
def test_other_programs_file_every_channel_and_time(tmp_path, kind, compression):
    p = mcapgen(tmp_path / "foreign.mcap", kind)
    with pytest.warns(UserWarning, match="/pose#2"):
        d = ardnet.log.read(p)
    assert list(d) == ["/pose", "/pose#2", "/cam"]
    assert [c.key for c in d.connections] == ["/pose", "/pose#2", "/cam"]
    first, second = d.channels("/pose")
    assert first is d["/pose"] and second is d["/pose#2"]
    assert second.name == "/pose" and (first.channel_id, second.channel_id) == (1, 2)
    assert (len(first), len(second), len(d["/cam"])) == (3, 2, 2)
    s = d.summary
    assert s["messages"] == 7 == sum(len(c) for c in d.connections)
    assert s["compression"] == compression and s["complete"] is True
    # Times of 2^63 and more are kept, as unsigned.
    assert second.t_ns.dtype == np.uint64
    assert second.t_ns.tolist() == [2**63, 2**64 - 1]
    assert second.t_pub_ns.tolist() == [2**63 - 5, 2**64 - 2]
    assert s["end_ns"] == 2**64 - 1 and s["start_ns"] == 1700000000000000001
    assert first.t_ns.tolist() == [1700000000000000001, 1700000000000000003, 1700000000000000006]
    assert first.t[0] == 0.0 and second.t[0] > 7e9
    # Schemas whole: text as str, a binary one as bytes with its zero bytes.
    cam = d["/cam"]
    assert cam.schema == PROTO and cam.schema_data == PROTO
    assert cam.schema_encoding == "protobuf" and cam.schema_name == "pkg.Image"
    assert first.schema == '{"type":"object"}' and first.schema_encoding == "jsonschema"
    assert cam.packets is None and cam.ardnet is False and cam.encoding == "protobuf"


@needs_mcapgen
def test_lz4_chunk_of_an_ardnet_channel(tmp_path):
    d = ardnet.log.read(mcapgen(tmp_path / "lz4.mcap", "ardnet"))
    c = d["arm.x"]
    i = np.arange(50)
    assert d.summary["compression"] == "lz4" and len(c) == 50
    np.testing.assert_array_equal(c["x"], i / 2)
    np.testing.assert_array_equal(c["n"], i)
    pub = [1700000000000000000 + k * 1000000 if k < 25 else 2**63 + k * 1000000 for k in range(50)]
    assert c.t_pub_ns.tolist() == pub
    assert c.t_ns.tolist() == [t + 1000 for t in pub]


@needs_mcapgen
@pytest.mark.parametrize("kind,what", [("bad-data-crc", "data section CRC"),
                                       ("bad-attachment-crc", "attachment CRC")])
def test_wrong_crc_is_refused(tmp_path, kind, what):
    p = mcapgen(tmp_path / "bad.mcap", kind)
    with pytest.raises(ardnet.Error) as e:
        ardnet.log.read(p)
    assert e.value.code == ardnet.ESTALE and what in str(e.value) and str(p) in str(e.value)
