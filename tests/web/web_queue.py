# web_queue.py BASE TOKEN: a client that pauses loses the oldest frames, not the newest, and
# is not disconnected for a pause shorter than the 5 s rule (see web_slow.sh). It subscribes
# to the 10 kHz `sig` with 10 us buckets of 16 traces (some 100 kB a frame: the kernel's
# buffers fill within a second) with a 4 KiB receive buffer,
# reads nothing for PAUSE seconds, then reads for 2 s: frames were dropped (`dropped` > 0),
# the stream jumps over them (its largest gap between frames), and after the jump come the
# frames the queue kept:
# at least 16 of them sent before the client resumed, the last within 0.3 s of resuming (the
# newest were kept, the oldest dropped), so the plot is current again at once. Server and
# test share CLOCK_MONOTONIC.
import json, socket, sys, time, urllib.parse, base64, os
sys.path.insert(0, os.path.dirname(__file__))
from webtest import Server, Reader, frame

base, token = sys.argv[1], sys.argv[2]
u = urllib.parse.urlsplit(base)
S = Server(u.hostname, u.port, token)
PAUSE = 4.0  # the queue starts dropping within about a second: behind < 5 s
fails = []

s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.connect((S.host, S.port))
key = base64.b64encode(os.urandom(16)).decode()
s.sendall(f"GET /ws?token={token} HTTP/1.1\r\nHost: {S.authority}\r\nUpgrade: websocket\r\n"
          f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13"
          "\r\n\r\n".encode())
head = b""
while b"\r\n\r\n" not in head:
    head += s.recv(1)
s.sendall(frame(1, b"sub sig 10" + b" s" * 16))
time.sleep(PAUSE)
resumed = time.monotonic()
r = Reader(s)
frames = [json.loads(p) for op, p in r.poll(2.0) if op == 1 and p.startswith(b'{"now"')]
s.close()
if r.closed:
    fails.append("the client was disconnected after a pause shorter than 5 s")
nows = [f["now"] for f in frames]
dropped = max((f.get("dropped", 0) for f in frames), default=0)
gaps = sorted(((b - a, a, b) for a, b in zip(nows, nows[1:])), reverse=True)
jump = gaps[0][1:] if gaps and gaps[0][0] > 0.1 else None
print(f"{len(frames)} frames after a {PAUSE:.0f} s pause, {dropped} dropped, largest jump "
      f"{[round(t - resumed, 2) for t in jump] if jump else None} (s from resuming)")
if dropped == 0:
    fails.append(f"no frame was dropped for a client that did not read for {PAUSE:.0f} s")
if nows != sorted(nows):
    fails.append("frames out of order")
if not jump:
    fails.append("no jump over dropped frames")
else:
    kept = [n for n in nows if jump[1] <= n < resumed]
    print(f"after the jump: {len(kept)} frames sent before resuming, the last "
          f"{(resumed - max(kept)) * 1000 if kept else -1:.0f} ms before")
    if len(kept) < 16 or resumed - max(kept) > 0.3:
        fails.append("the queue did not keep the newest frames")
if not nows or nows[-1] < time.monotonic() - 3.0:
    fails.append("no current frame after resuming")
if fails:
    print("\n".join(fails))
    sys.exit(1)
print("a paused client got the newest frames")
