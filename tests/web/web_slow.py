# web_slow.py BASE TOKEN SECONDS: one slow client stalls nobody (see web_slow.sh). A plotting
# client with 1 ms buckets of the 10 kHz connection `sig` measures its rate alone for 5 s
# (the baseline: about 1000 buckets a second, fewer on a loaded machine). Then, next to a
# WebSocket client that subscribes to `sig` and never reads (its receive buffer made small),
# it must keep at least RATE_MIN of the baseline in every 5 s window (a loaded machine moves
# the rate by some 15 %; a stalled plot falls far below), must never wait more than GAP_MAX
# for its next frame (the server sends 30 a second), its newest bucket must never be older
# than LAG_MAX when it arrives, /api/net must answer within 1 s every second, a new WebSocket must get its subscription
# answer within 2 s every 5 s, and the server must disconnect the stuck client (its socket
# leaves ESTABLISHED) within 15 s of its subscription: the kernel's buffers fill first (a few
# seconds), then its queue, then it is behind for the documented 5 s.
import json, socket, sys, time, urllib.parse
sys.path.insert(0, __import__("os").path.dirname(__file__))
from webtest import Server, Reader, frame, status_of

base, token, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
u = urllib.parse.urlsplit(base)
S = Server(u.hostname, u.port, token)
RATE_MIN = 0.7  # of the baseline rate
GAP_MAX = 1.0  # s between two frames of the plot
LAG_MAX = 1.0  # s between the newest bucket's packet and its arrival
GONE_S = 15.0
fails = []


def established(local_port):
    """Is the server's side of our connection from local_port still ESTABLISHED?"""
    with open("/proc/net/tcp") as f:
        for line in f.readlines()[1:]:
            p = line.split()
            lp, rp, st = int(p[1].split(":")[1], 16), int(p[2].split(":")[1], 16), p[3]
            if lp == S.port and rp == local_port and st == "01":
                return True
    return False


plot, head = S.ws_open()
if status_of(head) != 101:
    sys.exit(f"plotting client: no upgrade: {head[:80]!r}")
plot.sendall(frame(1, b"sub sig 1000 s"))
reader = Reader(plot)
worst_lag = worst_gap = 0.0
last_frame = None


def take(frames, counting):
    """Buckets in the frames; the lag of the newest one is checked when `counting`."""
    global worst_lag, worst_gap, last_frame, dropped
    n = 0
    for op, p in frames:
        if op == 1 and p.startswith(b'{"now"'):
            m = json.loads(p)
            t = time.monotonic()
            if counting and last_frame is not None:
                worst_gap = max(worst_gap, t - last_frame)
            last_frame = t
            n += len(m["b"])
            dropped = m.get("dropped", 0)
            if counting and m["b"]:
                worst_lag = max(worst_lag, time.monotonic() - m["tl"])
    return n


dropped = 0
reader.poll(1.0)  # the last second the server holds comes first
t = time.time()
got = 0
while time.time() < t + 5.0:
    got += take(reader.poll(0.1), False)
baseline = got / (time.time() - t)

# The stuck client: a small receive buffer, subscribes with 10 us buckets (every packet a
# bucket) of 4 traces (some 30 kB a frame), never reads.
stuck = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
stuck.connect((S.host, S.port))
import base64, os
key = base64.b64encode(os.urandom(16)).decode()
stuck.sendall(f"GET /ws?token={token} HTTP/1.1\r\nHost: {S.authority}\r\nUpgrade: websocket\r\n"
              f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13"
              "\r\n\r\n".encode() + frame(1, b"sub sig 10" + b" s" * 4))
stuck_port = stuck.getsockname()[1]
t0 = time.time()
stuck_gone = None

windows, wcount, wstart = [], 0, time.time()
net_worst, hs_worst = 0.0, 0.0
next_net = next_hs = time.time()
end = time.time() + seconds
while time.time() < end:
    wcount += take(reader.poll(0.05), True)
    if reader.closed:
        fails.append("the plotting client was disconnected")
        break
    now = time.time()
    if now - wstart >= 5.0:
        windows.append(wcount / (now - wstart))
        wcount, wstart = 0, now
    if stuck_gone is None and not established(stuck_port):
        stuck_gone = now - t0
    if now >= next_net:
        t = time.time()
        st, _, body = S.request("GET", "/api/net", timeout=5)
        d = time.time() - t
        net_worst = max(net_worst, d)
        if st != 200:
            fails.append(f"/api/net answered {st} after {d:.2f} s at {now - t0:.1f} s")
        next_net = now + 1.0
    if now >= next_hs:
        t = time.time()
        s, h = S.ws_open(timeout=5)
        ok = status_of(h) == 101
        if ok:
            s.sendall(frame(1, b"sub sig 1000 s"))
            r, ok = Reader(s), False
            while not ok and not r.closed and time.time() < t + 2.0:
                ok = any(b'"sub":"sig"' in p for _, p in r.poll(0.05))
        s.close()
        d = time.time() - t
        hs_worst = max(hs_worst, d)
        if not ok:
            fails.append(f"a new WebSocket got no subscription at {now - t0:.1f} s")
        next_hs = now + 5.0
plot.close()
stuck.close()
rates = windows
print(f"plot rate alone: {baseline:.0f} buckets/s; next to the stuck client, per 5 s window: "
      f"{' '.join(f'{r:.0f}' for r in windows)}")
print(f"worst gap between plot frames: {worst_gap * 1000:.0f} ms; worst lag of the plot: "
      f"{worst_lag * 1000:.0f} ms; worst /api/net: {net_worst * 1000:.0f}"
      f" ms; worst new WebSocket: {hs_worst * 1000:.0f} ms;"
      f" plot frames dropped: {dropped}; stuck client disconnected after "
      f"{'never' if stuck_gone is None else f'{stuck_gone:.1f} s'}")
if not rates or min(rates) < baseline * RATE_MIN:
    fails.append(f"the plot's rate fell below {RATE_MIN:.0%} of {baseline:.0f} buckets/s: {rates}")
if worst_gap > GAP_MAX:
    fails.append(f"the plot waited {worst_gap:.2f} s for a frame")
if worst_lag > LAG_MAX:
    fails.append(f"the plot lagged {worst_lag:.2f} s behind its signal")
if net_worst > 1.0:
    fails.append(f"/api/net took {net_worst:.2f} s")
if seconds > GONE_S and (stuck_gone is None or stuck_gone > GONE_S):
    fails.append(f"the stuck client was not disconnected in time: {stuck_gone}")
if fails:
    print("\n".join(fails))
    sys.exit(1)
print("one slow client stalled nobody")
