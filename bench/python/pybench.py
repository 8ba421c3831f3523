#!/usr/bin/env python3
"""pybench - what the Python binding adds over the C library, measured in one run.

Run through the wrapper the build writes, which sets PYTHONPATH and the peer program:

    build/bench/python/pybench [--samples N] [--rounds R] [--sizes 64,1024] [--cpus 0,1]

Two parts (docs/performance.md, section "Python binding", explains them):

1. Cost per call, one process pinned to one CPU: a Python loop calling Port.send() and
   Port.tryrec() (the same packet again) against the C loop calling ard_send()/ard_tryrec()
   (pyb_peer cost), and against the same Python loop calling a C function that does nothing
   (_noop of the extension: the floor of any call from Python into C) and an empty loop.
2. One-way latency, writer on the first CPU, reader on the second: C writer -> C reader
   (baseline), C writer -> Python rec, Python send -> C reader, with a blocking rec and with
   spin-then-block (set_spin / --ard-spin). Latency = the reader's CLOCK_MONOTONIC right after
   rec returned minus the writer's right before the send call, paired by sequence number
   (no stamp travels in the packet). The methods take turns in rounds, in a fresh random
   order each round, so that they see the same machine.

Exit 0 when everything ran (targets are reported, not asserted), 1 on a failure, 2 usage.
"""

import argparse
import os
import platform
import random
import subprocess
import sys
import time

import numpy as np

import ardnet
from ardnet._ardnet import _noop

# Random gap between sends, so that the reader is back in rec before the next packet: for a
# blocking rec long enough that it sleeps in the kernel; for spin-then-block shorter than the
# spin time (100 us), so that it is still spinning when the packet comes.
GAP_US = {"rec": (200, 400), "spin-rec": (20, 50)}
WARMUP = 100         # packets per row and round not counted
TARGET_NS = 1000     # issue 11: Python adds at most 1 us per call


FIFO = {"on": False}  # --fifo: writer at SCHED_FIFO 11, reader at 10 (as ardbench --fifo)


def pin(cpu, prio=0):
    os.sched_setaffinity(0, {cpu})
    if FIFO["on"] and prio:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(prio))
    else:
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))


def peer_env(prio):
    env = dict(os.environ)
    env.pop("PYB_PRIO", None)
    if FIFO["on"]:
        env["PYB_PRIO"] = str(prio)
    return env


# ---- cost per call --------------------------------------------------------------------------

def py_cost(size, batches, length, cpu):
    pin(cpu)
    out = ardnet.Port("cost_w", "out", size=size, connection="pyb_cost")
    inp = ardnet.Port("cost_r", "in", size=size, connection="pyb_cost")
    send, tryrec, noop = out.send, inp.tryrec, _noop
    rng = range(length)
    now = ardnet.now_ns

    def timed(body):
        v = []
        for _ in range(batches):
            t = now()
            body()
            v.append(now() - t)
        return float(np.median(v)) / length

    def loop_empty():
        for _ in rng:
            pass

    def loop_noop():
        for _ in rng:
            noop()

    def loop_send():
        for _ in rng:
            send()

    def loop_tryrec():
        for _ in rng:
            tryrec()

    res = {"empty loop": timed(loop_empty), "C no-op call": timed(loop_noop),
           "send": timed(loop_send)}
    assert tryrec() is True
    res["tryrec"] = timed(loop_tryrec)
    out.close()
    inp.close()
    ardnet.domain_unlink(None)
    return res


def c_cost(peer, size, batches, length, cpu):
    r = subprocess.run([peer, "cost", str(size), str(batches), str(length), str(cpu)],
                       capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise RuntimeError("pyb_peer cost: " + r.stderr.strip())
    return {k: float(v) for k, v in (line.split() for line in r.stdout.splitlines())}


# ---- latency ---------------------------------------------------------------------------------

def parse_pairs(text):
    a = np.array([line.split() for line in text.splitlines()], dtype=np.int64).reshape(-1, 2)
    return a[:, 0], a[:, 1]


def pair_up(wseq, t0, rseq, t1):
    """Latencies of the packets both sides saw, warm-up dropped; and how many were missed."""
    sent = dict(zip(wseq.tolist(), t0.tolist()))
    lat = [t - sent[s] for s, t in zip(rseq.tolist(), t1.tolist()) if s > WARMUP and s in sent]
    return lat, len(wseq) - len(rseq)


def start_c_reader(peer, size, n, cpu, spin, conn):
    p = subprocess.Popen([peer, "read", str(size), str(n), str(cpu), str(spin), "--ard",
                          "in=" + conn], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=peer_env(10))
    if p.stdout.readline().strip() != "ready":
        raise RuntimeError("pyb_peer read: " + p.stderr.read().strip())
    return p


def finish(p, what):
    out, err = p.communicate(timeout=120)
    if p.returncode != 0:
        raise RuntimeError("%s: %s" % (what, err.strip()))
    return parse_pairs(out)


def c_writer_cmd(peer, size, n, cpu, conn, spin):
    gap = GAP_US["spin-rec" if spin else "rec"]
    return [peer, "write", str(size), str(n), str(gap[0]), str(gap[1]), str(cpu),
            "--ard", "out=" + conn]


def row_c_c(peer, size, n, spin, cpus, conn):
    r = start_c_reader(peer, size, n, cpus[1], spin, conn)
    w = subprocess.Popen(c_writer_cmd(peer, size, n, cpus[0], conn, spin), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=peer_env(11))
    wseq, t0 = finish(w, "C writer")
    rseq, t1 = finish(r, "C reader")
    return pair_up(wseq, t0, rseq, t1)


def row_c_py(peer, size, n, spin, cpus, conn):
    pin(cpus[1], 10)
    inp = ardnet.Port("lat_r", "in", size=size, connection=conn)
    if spin:
        inp.set_spin(spin)
    rseq = np.zeros(n, dtype=np.int64)
    t1 = np.zeros(n, dtype=np.int64)
    rec, now = inp.rec, ardnet.now_ns
    w = subprocess.Popen(c_writer_cmd(peer, size, n, cpus[0], conn, spin), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=peer_env(11))
    k = 0
    while k < n:
        p = rec(timeout=2.0)
        t = now()
        if p is None:
            break
        t1[k] = t
        rseq[k] = inp.info.seq
        k += 1
        if rseq[k - 1] >= n:
            break
    wseq, t0 = finish(w, "C writer")
    inp.close()
    return pair_up(wseq, t0, rseq[:k], t1[:k])


def row_py_c(peer, size, n, spin, cpus, conn):
    r = start_c_reader(peer, size, n, cpus[1], spin, conn)
    pin(cpus[0], 11)
    out = ardnet.Port("lat_w", "out", size=size, connection=conn)
    rnd = random.Random(12345)
    gaps = [rnd.randint(*GAP_US["spin-rec" if spin else "rec"]) * 1e-6 for _ in range(n)]
    t0 = np.zeros(n, dtype=np.int64)
    send, now, sleep = out.send, ardnet.now_ns, time.sleep
    for k in range(n):
        sleep(gaps[k])
        t = now()
        send()
        t0[k] = t
    wseq = np.arange(1, n + 1, dtype=np.int64)  # a fresh connection numbers from 1
    rseq, t1 = finish(r, "C reader")
    out.close()
    return pair_up(wseq, t0, rseq, t1)


ROWS = [("C -> C", row_c_c), ("C -> Python rec", row_c_py), ("Python send -> C", row_py_c)]


def stats(v):
    a = np.sort(np.array(v, dtype=np.int64))
    if len(a) == 0:
        return None
    pick = lambda q: int(a[min(len(a) - 1, int(np.ceil(q * len(a))) - 1)])
    return {"n": len(a), "min": int(a[0]), "median": pick(0.5), "p90": pick(0.9),
            "p99": pick(0.99), "max": int(a[-1])}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--peer", required=True, help="the pyb_peer program")
    ap.add_argument("--samples", type=int, default=5000, help="latency samples per row")
    ap.add_argument("--rounds", type=int, default=4, help="rounds the samples are spread over")
    ap.add_argument("--sizes", default="64,1024", help="packet sizes in bytes")
    ap.add_argument("--cpus", default="0,1", help="writer CPU, reader CPU (cost runs on the first)")
    ap.add_argument("--spin-ns", type=int, default=100000, help="spin time of the spin-rec rows")
    ap.add_argument("--batches", type=int, default=101, help="cost: timed batches")
    ap.add_argument("--batch-len", type=int, default=10000, help="cost: calls per batch")
    ap.add_argument("--fifo", action="store_true",
                    help="latency rows at SCHED_FIFO (writer 11, reader 10; needs root)")
    ap.add_argument("--quick", action="store_true", help="a smoke run of a few seconds")
    a = ap.parse_args()
    try:
        sizes = [int(s) for s in a.sizes.split(",")]
        cpus = [int(c) for c in a.cpus.split(",")]
        assert len(cpus) == 2 and all(s > 0 for s in sizes)
    except (ValueError, AssertionError):
        ap.error("--sizes takes sizes like 64,1024 and --cpus two CPU numbers like 0,1")
    FIFO["on"] = a.fifo
    if a.quick:
        a.samples, a.rounds, a.batches, a.batch_len = 600, 2, 11, 2000

    os.environ["ARD_DOMAIN"] = "pyb_%d" % os.getpid()
    ardnet.init([])
    ardnet.Period(1000)  # sets this thread's timer slack to 1 ns: the pacing sleeps are exact
    print("pybench (ardnet %s, Python %s, numpy %s): %s" % (
        ardnet.__version__, platform.python_version(), np.__version__, " ".join(sys.argv)))
    print("host: %s %s, %d CPUs online; load average %.2f %.2f %.2f" % (
        platform.system(), platform.release(), os.cpu_count(), *os.getloadavg()))

    try:
        print("\ncost per call, ns (pinned to CPU %d; median over %d batches of %d calls, median "
              "of %d rounds)" % (cpus[0], a.batches, a.batch_len, a.rounds))
        print("size    %-16s %8s %8s %14s %16s" % ("call", "Python", "C", "Python adds",
                                                   "target"))
        for size in sizes:
            # Python and C take turns, --rounds times; each figure is the median of its rounds.
            runs = [(py_cost(size, a.batches, a.batch_len, cpus[0]),
                     c_cost(a.peer, size, a.batches, a.batch_len, cpus[0]))
                    for _ in range(a.rounds)]
            py = {k: float(np.median([r[0][k] for r in runs])) for k in runs[0][0]}
            c = {k: float(np.median([r[1][k] for r in runs])) for k in runs[0][1]}
            print("%-7s %-16s %8.1f %8s" % (fmt_size(size), "empty loop", py["empty loop"], ""))
            print("%-7s %-16s %8.1f %8s %14s" % (fmt_size(size), "C no-op call",
                                                 py["C no-op call"], "", "(the floor)"))
            for call in ("send", "tryrec"):
                add = py[call] - c[call]
                print("%-7s %-16s %8.1f %8.1f %14.1f %10s %s" % (
                    fmt_size(size), call, py[call], c[call], add, "<= %d" % TARGET_NS,
                    "PASS" if add <= TARGET_NS else "MISS"))

        print("\none-way latency, ns (writer on CPU %d, reader on CPU %d%s; %d samples per row in "
              "%d rounds; gap %d-%d us for rec, %d-%d us for spin-rec)" % (
                  cpus[0], cpus[1], ", SCHED_FIFO" if a.fifo else "", a.samples, a.rounds,
                  *GAP_US["rec"], *GAP_US["spin-rec"]))
        per_round = a.samples // a.rounds + WARMUP
        pooled = {}
        rnd = random.Random(4242)
        for r in range(a.rounds):
            jobs = [(mode, size, name, fn) for mode in ("rec", "spin-rec") for size in sizes
                    for name, fn in ROWS]
            rnd.shuffle(jobs)
            for mode, size, name, fn in jobs:
                spin = a.spin_ns if mode == "spin-rec" else 0
                conn = "pyb_lat_%d_%s_%d_%d" % (size, mode, ROWS.index((name, fn)), r)
                lat, missed = fn(a.peer, size, per_round, spin, cpus, conn)
                key = (mode, size, name)
                prev = pooled.get(key, ([], 0))
                pooled[key] = (prev[0] + lat, prev[1] + missed)
                ardnet.domain_unlink(None)
        print("%-9s %-7s %-18s %6s %7s %7s %7s %8s %9s %12s" % (
            "mode", "size", "path", "n", "min", "median", "p90", "p99", "max", "vs C -> C"))
        for mode in ("rec", "spin-rec"):
            for size in sizes:
                base = stats(pooled[(mode, size, "C -> C")][0])
                for name, _ in ROWS:
                    lat, missed = pooled[(mode, size, name)]
                    s = stats(lat)
                    if s is None:
                        print("%-9s %-7s %-18s no samples" % (mode, fmt_size(size), name))
                        continue
                    vs = ("baseline" if name == "C -> C"
                          else "%+.0f ns" % (s["median"] - base["median"]))
                    print("%-9s %-7s %-18s %6d %7d %7d %7d %8d %9d %12s%s" % (
                        mode, fmt_size(size), name, s["n"], s["min"], s["median"], s["p90"],
                        s["p99"], s["max"], vs,
                        "  (%d packets skipped)" % missed if missed else ""))
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        print("pybench: %s" % e, file=sys.stderr)
        return 1
    finally:
        pin(cpus[0])
        ardnet.fini()
        ardnet.domain_unlink(os.environ["ARD_DOMAIN"])
    return 0


def fmt_size(n):
    return "%d KiB" % (n // 1024) if n % 1024 == 0 else "%d B" % n


if __name__ == "__main__":
    sys.exit(main())
