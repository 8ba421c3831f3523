"""examples/python/arm_monitor.py runs as a block and prints what the arm sends."""

import math
import os
import signal

import ardnet
from conftest import PYTHON, start, stop

EXAMPLE = os.path.join(os.environ.get("ARD_SOURCE_DIR", ""), "examples/python/arm_monitor.py")


def test_arm_monitor_prints_the_joints_and_the_error(domain):
    ref = ardnet.Port("ref", "out", type="q:f64[7] qd:f64[7]", connection="arm.ref")
    state = ardnet.Port("state", "out", type="q:f64[7] qd:f64[7]", connection="arm.state")
    ardnet.init([])
    mon = start([PYTHON, EXAMPLE, "--ard", "ref=arm.ref", "--ard", "state=arm.state",
                 "--rate", "50"])
    try:
        first = mon.stdout.readline()
        assert "waiting for state" in first, first + mon.stderr.read()
        state.packet["q"][1] = math.pi / 2
        state.packet["q"][6] = -math.pi / 4
        state.send()
        ref.send()
        for line in mon.stdout:
            if "q[deg]" in line:
                break
        assert "q[deg]    0.0   90.0    0.0    0.0    0.0    0.0  -45.0" in line, line
        assert "max|err| 90.00 deg" in line and line.rstrip().endswith("state packets 1")
        mon.send_signal(signal.SIGINT)  # Ctrl-C: a quiet exit
        assert mon.wait(timeout=30) == 0
    finally:
        stop(mon)
