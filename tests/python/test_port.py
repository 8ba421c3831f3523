"""The semantics the C library promises, seen through the binding (one process, or with the C
block of cblock.c as the other side)."""

import array
import gc
import sys
import threading
import time
import tracemalloc

import numpy as np
import pytest

import ardnet
from conftest import ALL_TYPE, CBLOCK, start, stop, wait_line

T = "f64[7] u32"


def pair(conn="c", type=T, **kw):
    """An OUT and an IN port on one connection, attached."""
    out = ardnet.Port("w", "out", type=type, connection=conn, **kw)
    inp = ardnet.Port("r", "in", type=type, connection=conn, **kw)
    ardnet.init([])
    return out, inp


def test_dtype_follows_the_descriptor(domain):
    dt = ardnet.dtype("f64[7] u32 u8[4] i16")
    assert dt.names == ("f0", "f1", "f2", "f3")
    assert dt["f0"] == np.dtype(("f8", (7,)))
    assert dt["f1"] == np.dtype("u4")
    assert dt["f2"] == np.dtype(("u1", (4,)))
    assert [dt.fields[n][1] for n in dt.names] == [0, 56, 60, 64]
    assert dt.itemsize == 72  # padded to the 8-byte alignment, like the C struct


def test_dtype_maps_every_basic_kind(domain):
    # Each of the ten basic kinds to numpy's code of the same width, signedness and class.
    kinds = {"i8": "i1", "u8": "u1", "i16": "i2", "u16": "u2", "i32": "i4", "u32": "u4",
             "i64": "i8", "u64": "u8", "f32": "f4", "f64": "f8"}
    dt = ardnet.dtype(" ".join(f"v{k}:{k}" for k in kinds))
    assert dt.names == tuple(f"v{k}" for k in kinds)
    for k, code in kinds.items():
        assert dt[f"v{k}"] == np.dtype(code), (k, dt[f"v{k}"])


def test_dtype_takes_the_descriptors_field_names(domain):
    dt = ardnet.dtype("q:f64[7] f64 tick:u32 f3:u8")
    assert dt.names == ("q", "f1", "tick", "f3")  # unnamed fields are f<index>
    assert dt["q"] == np.dtype(("f8", (7,))) and dt.fields["tick"][1] == 64
    p = ardnet.Port("s", "out", type="q:f64[7] tick:u32")
    assert p.dtype.names == ("q", "tick") and p.type == "q:f64[7] tick:u32"
    p.packet["q"][3] = 2.5
    assert p.packet["q"][3] == 2.5


def test_bad_descriptor_is_an_error_naming_the_token(domain):
    with pytest.raises(ardnet.Error) as e:
        ardnet.Port("p", "in", type="f64[7] f65")
    assert e.value.code == ardnet.ETYPE and e.value.name == "ARD_ETYPE"
    assert "f65" in e.value.detail and str(e.value).startswith("ARD_ETYPE: ")


def test_port_properties_and_new_packet_is_zeroed(domain):
    out, inp = pair()
    assert (inp.name, inp.direction, inp.connection, inp.size) == ("r", "in", "c", 64)
    assert out.type == "f64[7] u32" and out.direction == "out"
    p = out.new()
    assert p.dtype == out.dtype and p.shape == () and p.nbytes == 64
    assert not p["f0"].any() and p["f1"] == 0
    assert p is not out.new()


def test_latest_value_and_skipped_count(domain):
    out, inp = pair()
    p = out.new()
    for k in range(1, 6):
        p["f1"] = k
        out.send(p)
    got = inp.rec()
    assert got["f1"] == 5
    assert inp.info.seq == 5 and inp.info.skipped == 0  # the first packet: nothing before it
    for k in range(6, 10):
        p["f1"] = k
        out.send(p)
    assert inp.rec()["f1"] == 9
    assert inp.info.seq == 9 and inp.info.skipped == 3
    assert out.info.seq == 9  # an OUT port's info is the packet last sent


def test_info_carries_the_writers_send_times(domain):
    out, inp = pair()
    t0m, t0r = ardnet.now_ns(), ardnet.realtime_ns()
    out.send()
    t1m, t1r = ardnet.now_ns(), ardnet.realtime_ns()
    inp.rec()
    i = inp.info
    assert t0m <= i.mono_ns <= t1m and t0r <= i.real_ns <= t1r
    assert isinstance(i, ardnet.Info) and i == (i.seq, i.mono_ns, i.real_ns, i.skipped)


def test_rec_returns_at_once_when_something_newer_exists(domain):
    out, inp = pair()
    out.packet["f1"] = 42
    out.send()  # the port's own packet
    assert inp.rec()["f1"] == 42  # would block forever if it waited for yet another one


def test_rec_blocks_until_a_newer_packet(domain):
    out, inp = pair()
    out.send()
    inp.rec()
    sent = threading.Event()

    def writer():
        time.sleep(0.2)
        p = out.new()
        p["f1"] = 7
        sent.set()
        out.send(p)

    t = threading.Thread(target=writer)
    t.start()
    got = inp.rec()  # the GIL is released: the writer thread runs meanwhile
    assert sent.is_set(), "rec returned before the newer packet was sent"
    assert got["f1"] == 7 and inp.info.seq == 2
    t.join()


def test_rec_returns_the_ports_own_packet(domain):
    out, inp = pair()
    out.send()
    a = inp.rec()
    out.send()
    b = inp.rec()
    assert a is b is inp.packet
    assert inp.packet.__array_interface__["data"] == a.__array_interface__["data"]


def test_tryrec_nothing_yet_new_and_not_new(domain):
    out, inp = pair()
    assert inp.tryrec() is None  # nothing was ever sent
    out.packet["f1"] = 3
    out.send()
    assert inp.tryrec() is True and inp.packet["f1"] == 3
    assert inp.tryrec() is False and inp.packet["f1"] == 3  # the same packet again
    assert inp.info.seq == 1 and inp.info.skipped == 0


def test_timed_rec(domain):
    out, inp = pair()
    t0 = time.monotonic()
    assert inp.rec(timeout=0.05) is None  # nothing sent yet
    assert time.monotonic() - t0 >= 0.05
    out.send()
    assert inp.rec(timeout=0.05) is inp.packet  # newer one there: at once
    t0 = time.monotonic()
    assert inp.rec(timeout=0.1) is None  # nothing newer
    assert time.monotonic() - t0 >= 0.1
    assert inp.rec(timeout=0) is None
    out.send()
    assert inp.rec(timeout=0) is inp.packet and inp.info.seq == 2


def test_timed_rec_gets_a_packet_sent_while_waiting(domain):
    out, inp = pair()
    t = threading.Timer(0.1, out.send)
    t.start()
    assert inp.rec(timeout=30) is inp.packet and inp.info.seq == 1
    t.join()


def test_gil_is_released_while_rec_waits(domain):
    out, inp = pair()
    got = []
    t = threading.Thread(target=lambda: got.append(inp.rec(timeout=5)))
    t.start()
    time.sleep(0.1)  # the main thread runs while the other one waits in rec ...
    out.send()  # ... and its packet ends that wait
    t.join()
    assert got and got[0] is inp.packet


def test_rec_without_timeout_in_another_thread(domain):
    out, inp = pair()
    got = []
    t = threading.Thread(target=lambda: got.append(inp.rec()), daemon=True)
    t.start()
    time.sleep(0.1)
    out.packet["f1"] = 5
    out.send()
    t.join(30)
    assert not t.is_alive() and got and got[0]["f1"] == 5


def test_port_busy_in_a_blocking_rec_is_refused_to_other_threads(domain):
    out, inp = pair()
    t = threading.Thread(target=lambda: inp.rec(timeout=5))
    t.start()
    deadline = time.monotonic() + 5
    err = None
    while err is None and time.monotonic() < deadline:
        try:
            inp.tryrec()
            time.sleep(0.001)
        except ardnet.Error as e:
            err = e
    out.send()
    t.join()
    assert err is not None and err.code == ardnet.ESTATE and "another thread" in err.detail


def test_second_writer_is_refused_with_the_pid(domain):
    holder = start([CBLOCK, "hold", "--ard", "out=shared"])
    try:
        pid = int(wait_line(holder, "ready").split()[1])
        w = ardnet.Port("w", "out", type=ALL_TYPE, connection="shared")
        with pytest.raises(ardnet.Error) as e:
            ardnet.init([])
        assert e.value.code == ardnet.EBUSY
        assert str(pid) in e.value.detail
        holder.stdin.close()  # the holder ends; a new writer takes over
        assert holder.wait(timeout=30) == 0
        ardnet.fini()
        w = ardnet.Port("w", "out", type=ALL_TYPE, connection="shared")
        ardnet.init([])
        w.send()
    finally:
        stop(holder)


def test_mismatched_type_is_refused_with_both_types(domain):
    out = ardnet.Port("w", "out", type="f64[7] u32", connection="c")
    ardnet.init([])
    with pytest.raises(ardnet.Error) as e:
        ardnet.Port("r", "in", type="f32[16]", connection="c")
    assert e.value.code == ardnet.ETYPE
    assert "f64[7] u32" in e.value.detail and "f32[16]" in e.value.detail
    with pytest.raises(ardnet.Error) as e:
        ardnet.Port("r2", "in", size=32, connection="c")
    assert e.value.code == ardnet.ETYPE and "32" in e.value.detail and "64" in e.value.detail
    out.close()


def test_send_checks_size_and_dtype(domain):
    out, inp = pair()
    with pytest.raises(ardnet.Error) as e:
        out.send(b"\0" * 63)
    assert e.value.code == ardnet.EINVAL and "63" in e.value.detail and "64" in e.value.detail
    layout = {"names": ["a", "b"], "formats": [("f8", (7,)), "i4"], "itemsize": 64}
    other = np.zeros((), dtype=layout)  # same size, another layout
    with pytest.raises(ardnet.Error) as e:
        out.send(other)
    assert e.value.code == ardnet.ETYPE
    with pytest.raises(ardnet.Error) as e:
        inp.send()
    assert e.value.code == ardnet.EINVAL
    raw = bytearray(64)
    raw[56] = 9  # f1 (u32 at offset 56), little-endian
    out.send(raw)
    assert inp.rec()["f1"] == 9
    plain = np.zeros(8, dtype="f8")  # the right size, but not the port's packet: refused
    with pytest.raises(ardnet.Error) as e:
        out.send(plain)
    assert e.value.code == ardnet.ETYPE and "float64 (8,)" in e.value.detail
    assert str(out.dtype) in e.value.detail
    assert inp.tryrec() is False  # nothing was sent


def test_send_refuses_reinterpretation(domain):
    """An array is sent only when its dtype is the port's (or, for a port whose packet is one
    array, its element type, byte order and count): no other array's bytes go out as doubles."""
    out = ardnet.Port("w", "out", type="tau:f64[7]", connection="t")
    inp = ardnet.Port("r", "in", type="tau:f64[7]", connection="t")
    ardnet.init([])
    refused = {
        "int64": np.array([1, 2, 3, 4, 5, 6, 7]),
        "float32": np.arange(7, dtype="f4"),
        "big-endian": np.arange(7, dtype=">f8"),
        "2-d": np.zeros((7, 1)),
        "typed buffer": array.array("q", range(7)),
        "other layout": np.zeros((), dtype=[("a", "<f8", (6,)), ("b", "<i8")]),
    }
    for what, x in refused.items():
        with pytest.raises(ardnet.Error) as e:
            out.send(x)
        assert e.value.code == ardnet.ETYPE, what
        assert "tau" in e.value.detail and "float64" in e.value.detail, what
        assert str(np.asarray(x).dtype) in e.value.detail, what
        assert inp.tryrec() is None, what + ": something was sent"
    structured = np.zeros(1, out.dtype)
    structured["tau"] = np.arange(7.0)
    accepted = [np.arange(7.0), array.array("d", range(7)), structured, structured[0],
                structured.reshape(()), np.arange(7.0).tobytes()]  # bytes: sent as they are
    for k, x in enumerate(accepted, 1):
        out.send(x)
        np.testing.assert_array_equal(inp.rec()["tau"], np.arange(7.0))
        assert inp.info.seq == k


def test_send_to_an_opaque_port_takes_bytes_or_uint8(domain):
    out = ardnet.Port("w", "out", size=4, connection="o")
    inp = ardnet.Port("r", "in", size=4, connection="o")
    ardnet.init([])
    out.send(np.array([1, 2, 3, 4], dtype="u1"))
    assert bytes(inp.rec()) == b"\1\2\3\4"
    out.send(b"abcd")
    assert bytes(inp.rec()) == b"abcd"
    with pytest.raises(ardnet.Error) as e:
        out.send(np.array([1, 2, 3, 4], dtype="i1"))
    assert e.value.code == ardnet.ETYPE and "int8" in e.value.detail and "uint8" in e.value.detail


def test_opaque_port_carries_bytes(domain):
    out = ardnet.Port("w", "out", size=5, connection="o")
    inp = ardnet.Port("r", "in", size=5, connection="o")
    ardnet.init([])
    assert inp.type is None and inp.dtype == np.dtype(("u1", (5,)))
    assert inp.packet.shape == (5,) and inp.packet.dtype == np.uint8
    out.send(b"hello")
    assert bytes(inp.rec()) == b"hello"


def test_calls_in_the_wrong_direction_or_before_init_name_the_call(domain):
    out = ardnet.Port("w", "out", type=T, connection="c")
    inp = ardnet.Port("r", "in", type=T, connection="c")
    for call, what in [(inp.rec, "rec"), (inp.tryrec, "tryrec"), (out.send, "send")]:
        with pytest.raises(ardnet.Error) as e:
            call()
        assert e.value.code == ardnet.ESTATE
        assert e.value.detail == ("port '%s': %s before the port is attached (call "
                                  "ardnet.init() first)" % (call.__self__.name, what))
    ardnet.init([])
    for call, what, d in [(out.rec, "rec", "OUT"), (out.tryrec, "tryrec", "OUT"),
                          (inp.send, "send", "IN")]:
        with pytest.raises(ardnet.Error) as e:
            call()
        assert e.value.code == ardnet.EINVAL
        assert e.value.detail == "port '%s': %s on an %s port" % (call.__self__.name, what, d)


def test_port_without_type_or_size_adopts_the_connections(domain):
    out = ardnet.Port("w", "out", type="q:f64[2] n:u32", connection="c")
    early = ardnet.Port("early", "in", connection="c")  # before init: not known yet
    with pytest.raises(ardnet.Error) as e:
        early.dtype
    assert e.value.code == ardnet.ESTATE and "init" in e.value.detail
    ardnet.init([])
    assert early.dtype.names == ("q", "n") and early.size == 24
    late = ardnet.Port("late", "in", connection="c")  # after init: attaches at once
    assert late.dtype == early.dtype and late.type == "q:f64[2] n:u32"
    out.packet["n"] = 4
    out.send()
    assert late.rec()["n"] == 4 and early.tryrec() is True and early.packet["n"] == 4
    raw = ardnet.Port("rw", "out", size=3, connection="raw")
    assert ardnet.Port("rr", "in", connection="raw").dtype == np.dtype(("u1", (3,)))
    raw.close()
    with pytest.raises(ardnet.Error) as e:
        ardnet.Port("nothing", "in", connection="absent")
    assert e.value.code == ardnet.ENOENT and "absent" in e.value.detail


def test_close_and_context_manager(domain):
    with ardnet.Port("w", "out", type=T, connection="c") as out:
        ardnet.init([])
        out.send()
        assert not out.closed
    assert out.closed
    with pytest.raises(ardnet.Error) as e:
        out.send()
    assert e.value.code == ardnet.ESTATE and "closed" in e.value.detail
    out.close()  # closing twice is fine
    # the writer role was released at close: a new writer is accepted at once
    again = ardnet.Port("w2", "out", type=T, connection="c")
    again.send()
    assert "closed" in repr(out)


def test_fini_closes_every_port(domain):
    out, inp = pair()
    ardnet.fini()
    assert out.closed and inp.closed
    out, inp = pair()  # init works again after fini
    out.send()
    assert inp.tryrec() is True


def test_period_keeps_the_rate_and_counts_overruns(domain):
    p = ardnet.Period(200)
    assert p.period_ns == 5000000
    t0 = time.monotonic()
    missed = [p.wait() for _ in range(10)]
    assert time.monotonic() - t0 >= 10 * 0.005 - 0.005  # the first deadline is one period away
    assert p.cycles == 10 and sum(missed) == p.overruns
    time.sleep(0.03)  # six periods late
    assert p.wait() >= 5 and p.overruns >= 5
    with pytest.raises(ardnet.Error):
        ardnet.Period(0)


def _allocated(first, second, n=2000):
    """(growth of the traced total, growth of its peak) over n rounds of first(); second(),
    every result of second() kept. The peak also sees what was allocated and freed again."""
    kept = [None] * n
    first()
    second()  # warm up: first-use caches are not per packet
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        for k in range(n):
            first()
            kept[k] = second()
        now, peak = tracemalloc.get_traced_memory()
        return now - before, peak - before
    finally:
        tracemalloc.stop()


def test_send_and_receive_paths_allocate_nothing(domain):
    """Each loop is compared with the same loop calling a C function that does nothing: the
    loop itself allocates a little (its int counter), the calls must add nothing."""
    from ardnet._ardnet import _noop
    out, inp = pair()
    floor = _allocated(_noop, _noop)
    for name, first, second in [
            ("send()", out.send, _noop),
            ("send(packet)", lambda: out.send(inp.packet), _noop),
            ("rec()", out.send, lambda: inp.rec()),
            ("rec(timeout=1.0)", out.send, lambda: inp.rec(timeout=1.0)),
            ("tryrec()", out.send, lambda: inp.tryrec())]:
        got = _allocated(first, second)
        assert got[0] <= floor[0] and got[1] <= floor[1], \
            "%s allocated: traced (total, peak) grew by %s, the empty call's by %s" % (
                name, got, floor)
    # The measurement sees an object made and dropped per packet (an Info) ...
    assert _allocated(out.send, lambda: inp.rec() is inp.info)[1] > floor[1]
    # ... and one kept per packet: a copy costs at least the packet's 64 bytes.
    assert _allocated(out.send, lambda: inp.rec().copy())[0] >= 64 * 2000


def test_blocking_receive_path_allocates_nothing(domain):
    """Packets from a C writer in another process, so that rec really waits in the kernel."""
    inp = ardnet.Port("r", "in", type=ALL_TYPE, connection="s")
    ardnet.init([])
    writer = start([CBLOCK, "stream", "400", "1000", "--ard", "out=s"])
    try:
        kept = [None] * 400
        blocks = sys.getallocatedblocks()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        k = 0
        while k < 400:
            kept[k] = inp.rec(timeout=10)
            assert kept[k] is inp.packet, "no packet from the C writer within 10 s"
            k += 1
            if inp.packet["f9"][0] == 400:
                break
        grown = max(tracemalloc.get_traced_memory()) - before
        tracemalloc.stop()
        assert k > 1
        assert grown < 1024, "rec allocated %d bytes over %d packets" % (grown, k)
        assert sys.getallocatedblocks() - blocks < 50
    finally:
        stop(writer)
