"""Ctrl-C (SIGINT) ends a blocked rec or Period.wait with KeyboardInterrupt; a signal whose
handler does not raise lets the wait go on."""

import signal
import time

import pytest

from conftest import ALL_TYPE, PYTHON, cblock, start, stop, wait_line

CHILD = """
import ardnet, signal, sys
handled = []
signal.signal(signal.SIGUSR1, lambda *a: handled.append(1))
p = ardnet.Port("r", "in", type="TYPE")
ardnet.init(sys.argv)
print("ready", flush=True)
try:
    CALL
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(42)
print("returned handled=%d seq=%d" % (len(handled), p.info.seq), flush=True)
""".replace("TYPE", ALL_TYPE)


def wait_sleeping(pid, what):
    """Wait until the process sleeps in the kernel function named like `what` (wchan)."""
    end = time.monotonic() + 30
    while time.monotonic() < end:
        with open("/proc/%d/wchan" % pid) as f:
            if what in f.read():
                return
        time.sleep(0.01)
    raise AssertionError("process %d never slept in %s" % (pid, what))


@pytest.mark.parametrize("call,sleeps_in", [
    ("p.rec()", "futex"),
    ("p.rec(timeout=3600)", "futex"),
    ("ardnet.Period(0.001).wait()", "nanosleep"),
])
def test_ctrl_c_interrupts_a_blocked_call(domain, call, sleeps_in):
    child = start([PYTHON, "-c", CHILD.replace("CALL", call), "--ard", "r=quiet"])
    try:
        wait_line(child, "ready")
        wait_sleeping(child.pid, sleeps_in)
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=30)
        assert child.returncode == 42, err
        assert out == "interrupted\n"
    finally:
        stop(child)


def test_a_handled_signal_does_not_end_the_rec(domain):
    child = start([PYTHON, "-c", CHILD.replace("CALL", "p.rec()"), "--ard", "r=later"])
    try:
        wait_line(child, "ready")
        wait_sleeping(child.pid, "futex")
        child.send_signal(signal.SIGUSR1)
        done = cblock("write", "--ard", "out=later")
        assert done.returncode == 0, done.stderr
        out, err = child.communicate(timeout=30)
        assert child.returncode == 0, err
        assert out == "returned handled=1 seq=1\n"
    finally:
        stop(child)
