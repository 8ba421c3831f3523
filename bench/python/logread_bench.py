"""Time ardnet.log.read on a recording next to `ard info` on the same file (which opens and
checks the whole file through the same C reader but builds no arrays). docs/performance.md,
"Python binding: reading recordings".

    PYTHONPATH=build/python python3 bench/python/logread_bench.py build/src/tools/ard FILE...
"""

import statistics
import subprocess
import sys
import time

import ardnet


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: logread_bench.py ARD FILE...")
    ard = sys.argv[1]
    for path in sys.argv[2:]:
        info, read = [], []
        for _ in range(5):
            t0 = time.perf_counter()
            subprocess.run([ard, "info", path], check=True, capture_output=True)
            info.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            d = ardnet.log.read(path)
            read.append(time.perf_counter() - t0)
        n = d.summary["messages"]
        print("%s: %d messages, %.0f MB, compression '%s'" % (
            path, n, d.summary["file_size"] / 1e6, d.summary["compression"]))
        print("  ard info      median %6.0f ms  min %6.0f ms" % (
            statistics.median(info) * 1e3, min(info) * 1e3))
        print("  log.read      median %6.0f ms  min %6.0f ms  (%.0f ns per message)" % (
            statistics.median(read) * 1e3, min(read) * 1e3, statistics.median(read) / n * 1e9))
        del d


if __name__ == "__main__":
    main()
