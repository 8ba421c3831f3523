"""C writer -> Python reader and Python writer -> C reader, every field checked."""

import numpy as np

import ardnet
from conftest import ALL_TYPE, CBLOCK, cblock, start, stop


def test_c_writer_python_reader(domain):
    inp = ardnet.Port("r", "in", type=ALL_TYPE, connection="c2py")
    ardnet.init([])
    done = cblock("write", "--ard", "out=c2py")
    assert done.returncode == 0, done.stderr
    assert inp.tryrec() is True
    p = inp.packet
    assert p["f0"] == -5 and p["f0"].dtype == np.int8
    assert list(p["f1"]) == [1, 2, 250] and p["f1"].dtype == np.uint8
    assert p["f2"] == -1234 and p["f2"].dtype == np.int16
    assert p["f3"] == 54321 and p["f3"].dtype == np.uint16
    assert p["f4"] == -123456789 and p["f4"].dtype == np.int32
    assert p["f5"] == 4000000000 and p["f5"].dtype == np.uint32
    assert p["f6"] == -(1 << 40) - 3 and p["f6"].dtype == np.int64
    assert p["f7"] == (1 << 63) + 5 and p["f7"].dtype == np.uint64
    assert p["f8"] == 1.5 and p["f8"].dtype == np.float32
    assert list(p["f9"]) == [-1.0, 0.1, 1e300] and p["f9"].dtype == np.float64
    assert inp.info.seq == 1


def test_python_writer_c_reader(domain):
    out = ardnet.Port("w", "out", type=ALL_TYPE, connection="py2c")
    ardnet.init([])
    reader = start([CBLOCK, "read", "--ard", "in=py2c"])
    try:
        p = out.packet
        p["f0"] = -128
        p["f1"] = [255, 0, 7]
        p["f2"] = 32767
        p["f3"] = 65535
        p["f4"] = -(1 << 31)
        p["f5"] = (1 << 32) - 1
        p["f6"] = -(1 << 63)
        p["f7"] = (1 << 64) - 1
        p["f8"] = -0.25
        p["f9"] = [3.141592653589793, -2.5e-300, 12345.678]
        out.send()
        text, err = reader.communicate(timeout=60)
        assert reader.returncode == 0, err
    finally:
        stop(reader)
    lines = text.splitlines()
    assert lines[:9] == [
        "f0 -128",
        "f1 255 0 7",
        "f2 32767",
        "f3 65535",
        "f4 -2147483648",
        "f5 4294967295",
        "f6 -9223372036854775808",
        "f7 18446744073709551615",
        "f8 -0.25",
    ]
    name, *values = lines[9].split()  # printed with 17 digits: exact when parsed back
    assert name == "f9" and [float(v) for v in values] == [3.141592653589793, -2.5e-300, 12345.678]
    assert len(lines) == 10


def test_named_python_reader_of_an_unnamed_c_writer(domain):
    """Names are the reader's own: the layout alone must match the connection's."""
    inp = ardnet.Port("r", "in", connection="named",
                      type="a:i8 b:u8[3] c:i16 d:u16 e:i32 f:u32 g:i64 h:u64 x:f32 v:f64[3]")
    ardnet.init([])
    done = cblock("write", "--ard", "out=named")
    assert done.returncode == 0, done.stderr
    assert inp.rec(timeout=30) is inp.packet
    p = inp.packet
    assert (p["a"], list(p["b"]), p["c"], p["d"]) == (-5, [1, 2, 250], -1234, 54321)
    assert (p["e"], p["f"], p["g"], p["h"]) == (-123456789, 4000000000, -(1 << 40) - 3,
                                                (1 << 63) + 5)
    assert p["x"] == 1.5 and list(p["v"]) == [-1.0, 0.1, 1e300]
