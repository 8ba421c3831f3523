# web_stop.py BASE TOKEN PID [FOXGLOVE]: `ard web` stops promptly with WebSocket clients connected (see
# web_stop.sh). Three clients: one of the page's protocol that reads, one of the Foxglove
# protocol that reads (when FOXGLOVE is "yes": ard web built with it), one that never reads
# and never answers. Once all three receive (or
# are accepted), the server (PID) gets SIGTERM: the two readers must get a close frame with
# code 1001 ("going away"), the silent one's socket must be closed by the server, and the
# process must have ended within ardkill's default grace (2 s).
import json, os, signal, sys, time, urllib.parse
sys.path.insert(0, os.path.dirname(__file__))
from webtest import Server, Reader, frame, status_of

base, token, pid = sys.argv[1], sys.argv[2], int(sys.argv[3])
with_fox = sys.argv[4:5] == ["yes"]
u = urllib.parse.urlsplit(base)
S = Server(u.hostname, u.port, token)
fails = []

page, head = S.ws_open()
if status_of(head) != 101:
    sys.exit(f"page client: {head[:80]!r}")
page.sendall(frame(1, b"sub sig 1000 s"))
readers = {"page": Reader(page)}
if with_fox:
    fox, head = S.ws_open(path="/", headers={"Sec-WebSocket-Protocol": "foxglove.websocket.v1"})
    if status_of(head) != 101:
        sys.exit(f"Foxglove client: {head[:80]!r}")
    readers["foxglove"] = Reader(fox)
silent, head = S.ws_open()
if status_of(head) != 101:
    sys.exit(f"silent client: {head[:80]!r}")
silent.sendall(frame(1, b"sub sig 1000 s"))  # subscribed: never closed for being idle

# Both readers receive before the stop: the page its data, the Foxglove client its serverInfo.
got = {k: False for k in readers}
end = time.time() + 10
while not all(got.values()) and time.time() < end:
    for k, r in readers.items():
        for op, p in r.poll(0.1):
            if op in (1, 2):
                got[k] = True
if not all(got.values()):
    sys.exit(f"before the stop, nothing received by: {[k for k, v in got.items() if not v]}")

t0 = time.time()
os.kill(pid, signal.SIGTERM)
codes = {}
end = t0 + 5
while len(codes) < len(readers) and time.time() < end:
    for k, r in readers.items():
        if k in codes:
            continue
        for op, p in r.poll(0.05):
            if op == 8:
                codes[k] = int.from_bytes(p[:2], "big") if len(p) >= 2 else None
                r.s.sendall(frame(8, p[:2]))  # answer the close, as a client does
        if r.closed and k not in codes:
            codes[k] = "closed without a close frame"
for k in readers:
    if codes.get(k) != 1001:
        fails.append(f"{k} client after SIGTERM: {codes.get(k, 'nothing within 5 s')}, expected a "
                     "close frame with code 1001")
# The silent client's socket is shut down by the server (it never answered the close).
silent.settimeout(5)
try:
    while silent.recv(65536):
        pass
    shut = time.time() - t0
except OSError:
    shut = time.time() - t0
gone = None
while time.time() - t0 < 5:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        gone = time.time() - t0
        break
    # a zombie until the shell reaps it: look at its state
    try:
        if open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] == "Z":
            gone = time.time() - t0
            break
    except OSError:
        gone = time.time() - t0
        break
    time.sleep(0.01)
print(f"after SIGTERM: close frames {codes}, silent client's socket closed after {shut:.2f} s, "
      f"server ended after {gone if gone is None else round(gone, 2)} s")
if gone is None or gone > 2.0:
    fails.append(f"ard web ended {gone if gone is None else round(gone, 2)} s after SIGTERM, "
                 "not within ardkill's default grace of 2 s")
if fails:
    sys.exit("\n".join(fails))
