#!/usr/bin/env python3
"""arm_monitor.py - the arm's monitor as a Python block (examples/blocks/arm_monitor.c in C).

A few times a second it prints the joint positions in degrees, the largest tracking error
between reference and state, and how many state packets arrived (and were skipped) since
the last line. Start it like any block, e.g. next to examples/arm:

    python3 examples/python/arm_monitor.py --ard ref=arm.ref --ard state=arm.state --rate 4
    ardstart -n pymon -- python3 examples/python/arm_monitor.py --ard ref=arm.ref ...
"""

import argparse
import sys

import numpy as np

import ardnet

JOINTS = "q:f64[7] qd:f64[7]"  # struct arm_joints of examples/blocks/arm.h


def main():
    ref = ardnet.Port("ref", "in", type=JOINTS)
    state = ardnet.Port("state", "in", type=JOINTS)
    try:
        ardnet.init(sys.argv)  # --ard* options are applied and gone from sys.argv
    except ardnet.Error as e:
        sys.exit("arm_monitor.py: %s" % e)
    ap = argparse.ArgumentParser(description="print the arm's joints a few times a second")
    ap.add_argument("--rate", type=float, default=4.0, help="lines per second (default 4)")
    args = ap.parse_args()
    if not 0 < args.rate <= 1000:
        ap.error("--rate must be in (0, 1000] Hz")

    period = ardnet.Period(args.rate)
    t0 = ardnet.now_ns()
    last_seq = 0
    while True:
        period.wait()
        t = (ardnet.now_ns() - t0) / 1e9
        # tryrec: None when nothing was ever sent, else the newest packet is in .packet
        if state.tryrec() is None or ref.tryrec() is None:
            print("t=%7.2fs  waiting for %s" % (t, "state" if state.info.seq == 0 else
                                                "reference"), flush=True)
            continue
        s, r = state.packet, ref.packet
        err = np.max(np.abs(r["q"] - s["q"]))
        seq = state.info.seq
        print("t=%7.2fs  q[deg] %s  max|err| %5.2f deg  state packets %d" %
              (t, " ".join("%6.1f" % v for v in np.degrees(s["q"])), np.degrees(err),
               seq - last_seq), flush=True)
        last_seq = seq


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        pass
