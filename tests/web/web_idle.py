# web_idle.py BASE TOKEN: idle sockets cannot exhaust the server (see web_idle.sh). The server
# runs with --max-clients 64 --idle-timeout 5. One client subscribes; 99 more WebSockets are
# opened and never subscribe, next to 20 TCP connections that send nothing: exactly 63 of the
# 99 are accepted and 36 answered 503 naming the limit; meanwhile the page and /api/net answer
# within 1 s. The idle ones get a close frame (1008, "idle ...") after the timeout, the
# subscribed one keeps receiving, and a new WebSocket is accepted again.
import json, socket, sys, time, urllib.parse
sys.path.insert(0, __import__("os").path.dirname(__file__))
from webtest import Server, Reader, frame, status_of

base, token = sys.argv[1], sys.argv[2]
u = urllib.parse.urlsplit(base)
S = Server(u.hostname, u.port, token)
IDLE_S = 5.0
fails = []

active, head = S.ws_open()
if status_of(head) != 101:
    sys.exit(f"first client: {head[:80]!r}")
active.sendall(frame(1, b"sub sig 1000 s"))
ar = Reader(active)
t0 = time.time()
idle, refused = [], []
for i in range(99):
    s, head = S.ws_open()
    st = status_of(head)
    if st == 101:
        idle.append(s)
    elif st is None:
        fails.append(f"WebSocket {i + 2} got no answer within 5 s")
        sys.exit("\n".join(fails))
    else:
        refused.append((st, s))
raw = [socket.create_connection((S.host, S.port)) for _ in range(20)]
opened = time.time() - t0
if not (len(idle) == 63 and len(refused) == 36):
    fails.append(f"{len(idle)} idle WebSockets accepted and {len(refused)} refused, expected 63"
                 f" and 36")
for st, s in refused[:3]:
    s.settimeout(2)
    try:
        body = s.recv(4096)
    except OSError:
        body = b""
    if st != 503 or b"too many clients" not in body or b"64" not in body:
        fails.append(f"refused with {st}: {body[:200]!r}")
for st, s in refused:
    s.close()
worst = 0.0
for path in ["/", "/api/net", "/app.js", "/api/net"]:
    t = time.time()
    st, head, body = S.request("GET", path, token=False,
                               headers={"Cookie": f"ard_token_{S.port}={token}"}, timeout=5)
    d = time.time() - t
    worst = max(worst, d)
    if st != 200 or d > 1.0:
        fails.append(f"GET {path} with 100 sockets open: {st} after {d:.2f} s")
print(f"opened 100 WebSockets and 20 TCP connections in {opened:.2f} s; the page and /api/net "
      f"answered within {worst * 1000:.0f} ms")
if time.time() - t0 > IDLE_S:
    fails.append(f"opening took {time.time() - t0:.1f} s, longer than the idle timeout: the "
                 "counts above may be off")
# The idle timeout.
closes = {}
deadline = t0 + IDLE_S + 3.0
got_active = 0
for s in idle:
    r = Reader(s)
    while not r.closed and time.time() < deadline:
        for op, p in r.poll(0.2):
            if op == 8:
                closes[s] = (int.from_bytes(p[:2], "big") if len(p) >= 2 else None, p[2:],
                             time.time() - t0)
        got_active += sum(1 for op, p in ar.poll(0.001) if op == 1 and b'"now"' in p)
    if s not in closes:
        fails.append("an idle WebSocket was not closed with a close frame in time")
        break
if closes:
    first = min(c[2] for c in closes.values())
    codes = {c[0] for c in closes.values()}
    why = {c[1] for c in closes.values()}
    print(f"{len(closes)} idle WebSockets closed {first:.1f} s after the first opened, with "
          f"codes {codes}: {why}")
    if codes != {1008} or not all(b"idle" in w for w in why) or first < IDLE_S - 0.5:
        fails.append(f"idle close: codes {codes}, reasons {why}, first at {first:.1f} s")
for op, p in ar.poll(1.0):
    got_active += op == 1 and b'"now"' in p
if ar.closed or got_active < 10:
    fails.append(f"the subscribed client: closed={ar.closed}, {got_active} frames")
s, head = S.ws_open()
if status_of(head) != 101:
    fails.append(f"a new WebSocket after the idle ones left: {head[:80]!r}")
for x in idle + raw + [s, active]:
    x.close()
if fails:
    print("\n".join(fails))
    sys.exit(1)
print("idle sockets did not exhaust the server")
