"""Fixtures of the binding's tests: a fresh domain per test, the C block, subprocess helpers."""

import os
import signal
import subprocess
import sys
import time

import pytest

import ardnet

CBLOCK = os.environ.get("ARD_TEST_CBLOCK", "")
PYTHON = os.environ.get("ARD_TEST_PYTHON", sys.executable)

# The packet every C block of cblock.c speaks: each basic type once, arrays included.
ALL_TYPE = "i8 u8[3] i16 u16 i32 u32 i64 u64 f32 f64[3]"


@pytest.fixture
def domain(monkeypatch):
    """A domain of this test alone (also for the children it starts); everything in it is
    closed and removed afterwards."""
    name = "t_py_%d_%d" % (os.getpid(), time.monotonic_ns() % 1000000000)
    monkeypatch.setenv("ARD_DOMAIN", name)
    yield name
    ardnet.fini()
    for f in os.listdir("/dev/shm"):
        if f.startswith("ard.%s." % name):
            os.unlink(os.path.join("/dev/shm", f))


def cblock(*args, **kw):
    """Run the C block to completion; returns the CompletedProcess (text)."""
    assert CBLOCK, "ARD_TEST_CBLOCK is not set (run the tests through ctest)"
    return subprocess.run([CBLOCK, *args], capture_output=True, text=True, timeout=60, **kw)


def start(argv, **kw):
    """Start a process with pipes for stdin and stdout (text, line-buffered reads)."""
    return subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kw)


def wait_line(proc, prefix):
    """Read lines of proc's stdout until one starts with prefix; returns it."""
    for line in proc.stdout:
        if line.startswith(prefix):
            return line
    raise AssertionError("process ended before printing '%s': %s" % (prefix, proc.stderr.read()))


def stop(proc):
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)
    proc.wait()
