# web_requests.py BASE TOKEN PID: the request table of web_requests.sh.
import base64, json, os, random, socket, sys, time, urllib.parse

base, token, pid = sys.argv[1], sys.argv[2], int(sys.argv[3])
host, port = urllib.parse.urlsplit(base).hostname, urllib.parse.urlsplit(base).port
fails = []


def raw(data, timeout=5.0, shut=False):
    """Send bytes (then end our side when `shut`), return everything the server answers until
    it closes (or times out)."""
    s = socket.create_connection((host, port), timeout=timeout)
    out = b""
    try:
        s.sendall(data)
        if shut:
            s.shutdown(socket.SHUT_WR)
        while True:
            b = s.recv(65536)
            if not b:
                break
            out += b
    except (socket.timeout, ConnectionResetError, BrokenPipeError):
        pass
    finally:
        s.close()
    return out


def status(resp):
    try:
        return int(resp.split(b" ", 2)[1])
    except (IndexError, ValueError):
        return None


def req(method, path, body=b"", headers="", tok=True):
    if tok:
        path += ("&" if "?" in path else "?") + "token=" + token
    h = f"{method} {path} HTTP/1.1\r\nHost: {host}:{port}\r\n{headers}"
    if body or method == "POST":
        h += f"Content-Length: {len(body)}\r\nContent-Type: application/x-www-form-urlencoded\r\n"
    return raw(h.encode() + b"\r\n" + body)


def alive(what):
    for _ in range(50):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            fails.append(f"{what}: the server died")
            raise SystemExit("\n".join(fails))
        if status(req("GET", "/api/net")) == 200:
            return
        time.sleep(0.1)
    fails.append(f"{what}: the server no longer answers")


def case(what, resp, want_status=None, want_text=None):
    st = status(resp)
    if want_status is not None and st != want_status:
        fails.append(f"{what}: status {st}, expected {want_status}: {resp[:200]!r}")
    if want_text is not None and want_text.encode() not in resp:
        fails.append(f"{what}: answer lacks {want_text!r}: {resp[:300]!r}")
    alive(what)


# ---- HTTP ----
case("good", req("GET", "/api/net"), 200, '"name":"sig"')
case("page: token to cookie", req("GET", "/"), 303, f"Set-Cookie: ard_token_{port}={token}; Path=/; HttpOnly; SameSite=Strict")
case("page", req("GET", "/", headers=f"Cookie: ard_token_{port}={token}\r\n", tok=False), 200,
     "<title>ard web</title>")
case("no token", req("GET", "/api/net", tok=False), 401, "token is required")
case("bad token", req("GET", "/api/net?token=sesame-1235", tok=False), 401)
case("token prefix", req("GET", "/api/net?token=sesame", tok=False), 401)
case("token longer", req("GET", "/api/net?token=sesame-12345", tok=False), 401)
case("cookie token", req("GET", "/api/net", headers=f"Cookie: ard_token_{port}={token}\r\n",
                         tok=False), 200)
case("bad cookie", req("GET", "/api/net", headers=f"Cookie: ard_token_{port}=nope\r\n",
                       tok=False), 401)
case("cookie of another port", req("GET", "/api/net", headers=f"Cookie: ard_token={token}\r\n",
                                   tok=False), 401)
case("asset needs the token", req("GET", "/app.js", tok=False), 401)
case("unknown page", req("GET", "/etc/passwd"), 404, "no such page")
case("traversal", req("GET", "/../../../../etc/passwd"), None)
r = req("GET", "/../../../../etc/passwd")
if b"root:" in r:
    fails.append("traversal: a file was served")
case("method", req("DELETE", "/index.html"), 405)
case("get set", req("GET", "/api/set"), 405)
case("huge header", req("GET", "/api/net", headers="X-Big: " + "a" * 40000 + "\r\n"), None)
r = req("GET", "/api/net", headers="X-Big: " + "a" * 40000 + "\r\n")
if status(r) == 200:
    fails.append("a 40 kB header was accepted")
case("many headers", req("GET", "/api/net", headers="X: y\r\n" * 2000), None)
case("garbage line", raw(b"GARBAGE\r\n\r\n"), None)
case("binary junk", raw(bytes(range(256)) * 4), None)
case("half a request", raw(b"GET /api/net HTTP/1.1\r\nHost:", timeout=1), None)
case("empty", raw(b"", timeout=0.5), None)
# Set: bodies.
case("set ok", req("POST", "/api/set", b"c=quiet&a=b%3D5"), 200, '"code":0')
case("set big body", req("POST", "/api/set", b"c=quiet&a=" + b"1" * 20000), 413)
r = raw(f"POST /api/set?token={token} HTTP/1.1\r\nHost: {host}:{port}\r\n"
        "Content-Length: 99999999999\r\n\r\n".encode(), timeout=2)
case("set huge length", r, 413)
r = raw(f"POST /api/set?token={token} HTTP/1.1\r\nHost: {host}:{port}\r\n"
        "Content-Length: 50\r\n\r\nc=quiet".encode(), shut=True)
case("set short body", r, 400)
case("set no conn", req("POST", "/api/set", b"a=b%3D1"), 400, "no connection")
case("set no assign", req("POST", "/api/set", b"c=quiet"), 400, "nothing to set")
case("set option as conn", req("POST", "/api/set", b"c=--help&a=b%3D1"), 400)
case("set unknown conn", req("POST", "/api/set", b"c=nope&a=b%3D1"), 404, "does not exist")
case("set bad name", req("POST", "/api/set", b"c=a%2Fb&a=b%3D1"), 400)
case("set bad field", req("POST", "/api/set", b"c=quiet&a=zz%3D1"), 400, "zz")
case("set bad value", req("POST", "/api/set", b"c=quiet&a=b%3Dxyz"), 400, "xyz")
case("set range", req("POST", "/api/set", b"c=quiet&a=b%3D1e12"), 400)
case("set live writer", req("POST", "/api/set", b"c=sig&a=k%3D1"), 409)
case("set long assign", req("POST", "/api/set", b"c=quiet&a=b%3D" + b"1" * 600), 400, "too long")
case("set many", req("POST", "/api/set", b"c=quiet" + b"&a=b%3D1" * 70), 400, "too many")
case("set bad escape", req("POST", "/api/set", b"c=quiet&a=b%3D%zz"), None)

# ---- WebSocket ----


def ws_open(tok=True):
    s = socket.create_connection((host, port), timeout=3)
    key = base64.b64encode(os.urandom(16)).decode()
    q = f"?token={token}" if tok else ""
    s.sendall(f"GET /ws{q} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
              f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        b = s.recv(1)
        if not b:
            break
        head += b
    return s, head


def frame(op, data, mask=True, fin=True, length=None):
    n = len(data) if length is None else length
    b = bytes([(0x80 if fin else 0) | op])
    m = 0x80 if mask else 0
    if n < 126:
        b += bytes([m | n])
    elif n < 65536:
        b += bytes([m | 126]) + n.to_bytes(2, "big")
    else:
        b += bytes([m | 127]) + n.to_bytes(8, "big")
    if mask:
        k = os.urandom(4)
        b += k + bytes(c ^ k[i % 4] for i, c in enumerate(data))
    else:
        b += data
    return b


def ws_read(s, wait=1.0):
    """Messages received within `wait` (text payloads of unmasked server frames)."""
    s.settimeout(wait)
    buf, msgs, closed = b"", [], False
    end = time.time() + wait
    try:
        while time.time() < end:
            b = s.recv(65536)
            if not b:
                closed = True
                break
            buf += b
    except (socket.timeout, ConnectionResetError):
        pass
    while len(buf) >= 2:
        op, n, i = buf[0] & 15, buf[1] & 127, 2
        if n == 126:
            n, i = int.from_bytes(buf[2:4], "big"), 4
        elif n == 127:
            n, i = int.from_bytes(buf[2:10], "big"), 10
        if len(buf) < i + n:
            break
        if op == 8:
            closed = True
        else:
            msgs.append(buf[i:i + n].decode(errors="replace"))
        buf = buf[i + n:]
    return msgs, closed


def ws_case(what, frames, want=None, want_close=False, tok=True):
    s, head = ws_open(tok)
    if not tok:
        if b" 401 " not in head.split(b"\r\n")[0]:
            fails.append(f"{what}: upgrade without token answered {head[:80]!r}")
        s.close()
        alive(what)
        return
    if b" 101 " not in head.split(b"\r\n")[0]:
        fails.append(f"{what}: no upgrade: {head[:80]!r}")
    try:
        for f in frames:
            s.sendall(f)
    except (BrokenPipeError, ConnectionResetError):
        pass
    msgs, closed = ws_read(s)
    s.close()
    text = "\n".join(msgs)
    if want and want not in text:
        fails.append(f"{what}: messages lack {want!r}: {text[:300]!r}")
    if want_close and not closed:
        fails.append(f"{what}: connection not closed")
    alive(what)
    return msgs


T = 1  # text opcode
m = ws_case("ws good", [frame(T, b"sub sig 1000 s q[1]")], '"plot":["s","q[1]"]')
if not any('"b":[[' in x for x in m):
    fails.append("ws good: no buckets arrived")
# Decimation: 10 ms buckets of a 1 kHz sine (1 Hz): about 100 buckets a second instead of
# 1000 packets, each on a multiple of 10 ms, each with min <= max, most with min < max.
s, head = ws_open()
s.sendall(frame(T, b"sub sig 10000 s"))
msgs, _ = ws_read(s, 2.5)
s.close()
rows = [r for x in msgs if x.startswith('{"now"') for r in json.loads(x)["b"]]
rows = [r for r in rows if r[0] >= rows[-1][0] - 1.0] if rows else []
if not 60 <= len(rows) <= 102:
    fails.append(f"decimation: {len(rows)} buckets in the last second, expected about 100")
if any(abs(r[0] * 100 - round(r[0] * 100)) > 1e-3 for r in rows):
    fails.append("decimation: bucket times not on 10 ms")
if any(r[1] > r[2] for r in rows) or sum(r[1] < r[2] for r in rows) < len(rows) * 0.8:
    fails.append(f"decimation: min/max per bucket: {rows[:5]}")
if any(abs(v) > 1 + 1e-9 for r in rows for v in r[1:]):
    fails.append("decimation: a value beyond the sine's amplitude")
alive("decimation")
ws_case("ws no token", [], tok=False)
ws_case("ws unknown conn", [frame(T, b"sub nope 1000 s")], "does not exist")
ws_case("ws bad conn name", [frame(T, b"sub ../x 1000 s")], '"error"')
ws_case("ws unknown field", [frame(T, b"sub sig 1000 zz")], "not a field element")
ws_case("ws whole array", [frame(T, b"sub sig 1000 q")], "not a field element")
ws_case("ws index out", [frame(T, b"sub sig 1000 q[3]")], "not a field element")
ws_case("ws bucket 0", [frame(T, b"sub sig 0 s")], "usage: sub")
ws_case("ws bucket junk", [frame(T, b"sub sig 12x s")], "usage: sub")
ws_case("ws no args", [frame(T, b"sub")], "usage: sub")
ws_case("ws empty", [frame(T, b"")], "empty command")
ws_case("ws unknown cmd", [frame(T, b"rm -rf /")], "unknown command")
ws_case("ws 17 fields", [frame(T, b"sub sig 1000" + b" s" * 17)], "at most 16")
ws_case("ws unsub", [frame(T, b"sub sig 1000 s"), frame(T, b"unsub"), frame(T, b"unsub")])
ws_case("ws long", [frame(T, b"x" * 5000)], "too long", True)
ws_case("ws binary", [frame(2, b"\x00\x01")], "one complete text message", True)
ws_case("ws nul", [frame(T, b"sub\x00sig")], "NUL", True)
ws_case("ws unmasked", [frame(T, b"sub sig 1000 s", mask=False)])
ws_case("ws reserved op", [frame(3, b"abc")])
ws_case("ws fragment", [frame(T, b"sub sig", fin=False), frame(0, b" 1000 s")])
ws_case("ws lone continuation", [frame(0, b"abc")])
ws_case("ws huge length", [frame(T, b"abc", length=1 << 62)])
ws_case("ws 1 MB", [frame(T, b"y" * (1 << 20))])
ws_case("ws truncated", [frame(T, b"sub sig 1000 s")[:5]])
ws_case("ws close", [frame(8, b"\x03\xe8")])
ws_case("ws ping", [frame(9, b"hi"), frame(T, b"sub sig 1000 s")], '"sub":"sig"')

# ---- random bytes ----
rnd = random.Random(1234)
for i in range(150):
    junk = bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 3000)))
    pre = rnd.choice([b"", b"GET /api/net?token=" + token.encode() + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n",
                      b"POST /api/set?token=" + token.encode() + b" HTTP/1.1\r\n"])
    raw(pre + junk, timeout=0.3)
alive("random requests")
for i in range(60):
    s, head = ws_open()
    try:
        for _ in range(rnd.randrange(1, 6)):
            if rnd.random() < 0.5:
                s.sendall(bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 200))))
            else:
                s.sendall(frame(rnd.choice([0, 1, 2, 8, 9, 10, 3]),
                                bytes(rnd.randrange(256) for _ in range(rnd.randrange(0, 300))),
                                mask=rnd.random() < 0.9, fin=rnd.random() < 0.8))
    except OSError:
        pass
    s.close()
alive("random frames")

if fails:
    print("\n".join(fails))
    sys.exit(1)
print("all requests answered as expected")
