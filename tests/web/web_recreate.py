# web_recreate.py ARD BASE TOKEN: a plot follows its connection when it is removed and created
# afresh with the same type (a block restarted by ardkill/ardstart), and says so when it comes
# back with another type.
import base64, json, os, socket, subprocess, sys, time, urllib.parse

ard, base, token = sys.argv[1:4]
u = urllib.parse.urlsplit(base)
shm = f"/dev/shm/ard.{os.environ['ARD_DOMAIN']}.re"


def gen(typ, *sig):
    p = subprocess.Popen([ard, "siggen", "re", "--type", typ, "--rate", "1000", *sig],
                         stdout=subprocess.DEVNULL)
    for _ in range(100):
        if subprocess.run([ard, "show", "re"], capture_output=True).returncode == 0:
            return p
        time.sleep(0.05)
    raise SystemExit("siggen did not start")


def stop(p):
    p.kill()
    p.wait()
    os.unlink(shm)


s = socket.create_connection((u.hostname, u.port), timeout=3)
key = base64.b64encode(os.urandom(16)).decode()
s.sendall(f"GET /ws?token={token} HTTP/1.1\r\nHost: {u.netloc}\r\nUpgrade: websocket\r\n"
          f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
          .encode())
buf = b""
while b"\r\n\r\n" not in buf:
    buf += s.recv(1)
buf = b""


def read(secs):
    """Messages (parsed) received in `secs`."""
    global buf
    out, end = [], time.time() + secs
    s.settimeout(0.1)
    while time.time() < end:
        try:
            b = s.recv(65536)
            if not b:
                break
            buf += b
        except socket.timeout:
            pass
        while len(buf) >= 2:
            n, i = buf[1] & 127, 2
            if n == 126:
                n, i = int.from_bytes(buf[2:4], "big"), 4
            elif n == 127:
                n, i = int.from_bytes(buf[2:10], "big"), 10
            if len(buf) < i + n:
                break
            out.append(json.loads(buf[i:i + n]))
            buf = buf[i + n:]
    return out


def peak(msgs):
    return max((abs(v) for m in msgs for r in m.get("b", []) for v in r[1:] if v is not None),
               default=None)


p = gen("t:f64 s:f64", "s=sine,amp=1,freq=5")
mask = os.urandom(4)
cmd = b"sub re 10000 s"
s.sendall(bytes([0x81, 0x80 | len(cmd)]) + mask + bytes(c ^ mask[i % 4] for i, c in enumerate(cmd)))
a = peak(read(1.5))
stop(p)
p = gen("t:f64 s:f64", "s=sine,amp=5,freq=5")
read(0.8)  # what was still on its way from the old object, and the switch
b = peak(read(1.5))
stop(p)
p = gen("x:f64", "x=sine")
msgs = read(1.5)
stop(p)
errs = [m["error"] for m in msgs if "error" in m]
print(f"peak before {a}, after re-creation {b}; errors {errs}")
assert a is not None and abs(a - 1) < 0.05, a
assert b is not None and abs(b - 5) < 0.25, b
assert any("re-created with another type" in e for e in errs), errs
