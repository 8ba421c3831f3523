"""A Python block started with ardstart (ready when ardnet.init attached its ports) and
stopped with ardkill, like any C block."""

import os
import subprocess

import pytest

import ardnet
from conftest import ALL_TYPE, PYTHON

ARDSTART = os.environ.get("ARDSTART")
ARDKILL = os.environ.get("ARDKILL")
HERE = os.path.dirname(os.path.abspath(__file__))


def run(*argv):
    return subprocess.run(argv, capture_output=True, text=True, timeout=60)


@pytest.mark.skipif(not ARDSTART or not ARDKILL, reason="ardstart/ardkill not built")
def test_python_block_under_ardstart_and_ardkill(domain, tmp_path, monkeypatch):
    monkeypatch.setenv("ARD_BOOKS_DIR", str(tmp_path / "books"))
    r = run(ARDSTART, "--wait=30", "-n", "pyecho", "--", PYTHON, os.path.join(HERE, "pyblock.py"),
            "--ard", "in=ping", "--ard", "out=pong")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "ready" in r.stdout
    try:
        ping = ardnet.Port("ping", "out", type=ALL_TYPE)
        pong = ardnet.Port("pong", "in", type=ALL_TYPE)
        ardnet.init([])
        for k in range(1, 4):  # the block runs: it answers every packet
            ping.packet["f9"][0] = 10 * k
            ping.send()
            got = pong.rec(timeout=30)
            assert got is not None, run(ARDSTART, "--log", "pyecho").stdout
            assert got["f9"][0] == 10 * k + 1
        listing = run(ARDSTART, "--list", "--raw").stdout.split("\t")
        assert listing[0] == "pyecho" and listing[3] == "running"
        pid = int(listing[2])
        ardnet.fini()
    finally:
        k = run(ARDKILL)
    assert k.returncode == 0, k.stdout + k.stderr
    assert "stopped pyecho" in k.stdout
    assert not os.path.exists("/proc/%d" % pid)
    assert not [f for f in os.listdir("/dev/shm") if f.startswith("ard.%s." % domain)]
    assert run(ARDSTART, "--list", "--raw").stdout == ""
