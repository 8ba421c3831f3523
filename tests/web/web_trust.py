# web_trust.py ARD BASE TOKEN [HOSTNAME]: the trust rules of ard web, as a cross-site page, a
# rebinding name or a client without token would try them (see web_trust.sh). The server runs
# with --allow-set on loopback; connection `quiet` (b:i32, no writer) and `sig` (s:f64) exist.
import json, subprocess, sys, urllib.parse
sys.path.insert(0, __import__("os").path.dirname(__file__))
from webtest import Server, Reader, frame, status_of

ard, base, token = sys.argv[1:4]
alias = sys.argv[4] if len(sys.argv) > 4 else None
u = urllib.parse.urlsplit(base)
S = Server(u.hostname, u.port, token)
fails = []


def check(ok, what):
    if not ok:
        fails.append(what)


def quiet_b():
    out = subprocess.run([ard, "show", "quiet", "--json"], capture_output=True, text=True)
    return json.loads(out.stdout)["fields"]["b"] if out.returncode == 0 else None


def want(what, got, status, text=None):
    st, head, body = got
    check(st == status, f"{what}: status {st}, expected {status}: {head[:120]!r} {body[:200]!r}")
    if text is not None:
        check(text.encode() in head + body, f"{what}: answer lacks {text!r}: {body[:300]!r}")


form = {"Content-Type": "application/x-www-form-urlencoded"}
b0 = quiet_b()

# ---- 1. Host and Origin ----
evil = f"evil.example:{S.port}"
want("good", S.request("GET", "/api/net"), 200, '"name":"quiet"')
want("Host of another name", S.request("GET", "/api/net", host=evil), 403, "evil.example")
want("Host of another name, page", S.request("GET", "/", host=evil), 403)
want("Host of another name, script", S.request("GET", "/app.js", host=evil), 403)
want("Host of another port", S.request("GET", "/api/net", host=f"127.0.0.1:{S.port + 1}"), 403)
want("Host without port", S.request("GET", "/api/net", host="127.0.0.1"), 200)
want("name without port", S.request("GET", "/api/net", host="evil.example"), 403)
want("Host with junk port", S.request("GET", "/api/net", host=f"127.0.0.1:{S.port}x"), 403)
want("no Host", S.request("GET", "/api/net", host=None), 403, "no Host")
want("two Hosts", S.request("GET", "/api/net", headers={"Host": "127.0.0.1:1"}), 400)
want("localhost", S.request("GET", "/api/net", host=f"localhost:{S.port}"), 200)
want("LOCALHOST", S.request("GET", "/api/net", host=f"LocalHost:{S.port}"), 200)
want("rebinding name with set", S.request("POST", "/api/set", b"c=quiet&a=b%3D11",
                                          headers=form, host=evil), 403)
if alias:
    want("--host-name", S.request("GET", "/api/net", host=f"{alias}:{S.port}"), 200)
    want("--host-name, its origin",
         S.request("GET", "/api/net", host=f"{alias}:{S.port}",
                   headers={"Origin": f"http://{alias}:{S.port}"}), 200)
# The request: a page of another site posting a form.
xs = {"Origin": "http://evil.example", "Content-Type": "text/plain"}
want("cross-site set", S.request("POST", "/api/set", b"c=quiet&a=b=123", headers=xs), 403,
     "Origin 'http://evil.example'")
check(quiet_b() == b0, f"cross-site set wrote the value: b={quiet_b()}")
want("cross-site read", S.request("GET", "/api/net", headers={"Origin": "http://evil.example"}),
     403)
want("Origin null", S.request("GET", "/api/net", headers={"Origin": "null"}), 403)
want("Origin https", S.request("GET", "/api/net",
                               headers={"Origin": f"https://127.0.0.1:{S.port}"}), 403)
want("Origin of another port", S.request("GET", "/api/net",
                                         headers={"Origin": f"http://127.0.0.1:{S.port + 1}"}),
     403)
want("Origin localhost with Host 127.0.0.1",
     S.request("GET", "/api/net", headers={"Origin": f"http://localhost:{S.port}"}), 403)
want("two Origins", S.request("GET", "/api/net", headers={
    "Origin": [f"http://127.0.0.1:{S.port}", "http://evil.example"]}), 400)
want("own Origin", S.request("GET", "/api/net", headers={"Origin": f"http://{S.authority}"}), 200)
want("own Origin, set", S.request("POST", "/api/set", b"c=quiet&a=b%3D12",
                                  headers=dict(form, Origin=f"http://{S.authority}")), 200)
check(quiet_b() == 12, f"set from the page's own origin: b={quiet_b()}")
# The WebSocket handshake is a request like the others.
for what, kw in [("ws Host", {"host": evil}),
                 ("ws Origin", {"headers": {"Origin": "http://evil.example"}}),
                 ("ws Origin null", {"headers": {"Origin": "null"}})]:
    s, head = S.ws_open(**kw)
    check(status_of(head) == 403, f"{what}: handshake answered {head[:60]!r}")
    s.close()
s, head = S.ws_open(headers={"Origin": f"http://{S.authority}"})
check(status_of(head) == 101, f"ws own Origin: {head[:60]!r}")
s.close()

# ---- 2. Values never become options ----
for body, name in [(b"c=quiet&a=--domain=other&a=b=99", "--domain=other"),
                   (b"c=quiet&a=--help", "--help"), (b"c=quiet&a=-h", "-h"),
                   (b"c=quiet&a=b=1&a=--domain%3Dother", "--domain=other"),
                   (b"c=--help&a=b=1", "--help"), (b"c=-d&a=other&a=b=1", "-d"),
                   (b"c=quiet&a=nothing", "nothing"), (b"c=quiet&a==5", "=5")]:
    st, head, rb = S.request("POST", "/api/set", body, headers=form)
    check(st == 400 and f"'{name}'".encode() in rb,
          f"set {body!r}: {st} {rb[:200]!r}, expected 400 naming '{name}'")
    check(b"usage:" not in rb, f"set {body!r} answered with a usage text")
check(quiet_b() == 12, f"a refused set wrote: b={quiet_b()}")
want("set ok after refusals", S.request("POST", "/api/set", b"c=quiet&a=b%3D13", headers=form),
     200)
check(quiet_b() == 13, "set after refusals")

# ---- 3. The token, loopback included ----
for path in ["/", "/index.html", "/app.js", "/api/net", "/nowhere"]:
    want(f"no token {path}", S.request("GET", path, token=False), 401, "token is required")
want("no token set", S.request("POST", "/api/set", b"c=quiet&a=b%3D1", headers=form,
                               token=False), 401)
s, head = S.ws_open(token=False)
check(status_of(head) == 401, f"ws without token: {head[:60]!r}")
s.close()
st, head, _ = S.request("GET", "/")
ck = f"ard_token_{S.port}={token}"
check(st == 303 and b"Location: /\r\n" in head and
      f"Set-Cookie: {ck}; Path=/; HttpOnly; SameSite=Strict".encode() in head,
      f"first request: {head!r}")
want("cookie", S.request("GET", "/", headers={"Cookie": ck}, token=False), 200, "<title>")
want("cookie among others", S.request("GET", "/api/net", token=False,
                                      headers={"Cookie": f"a=b; {ck}; c=d"}), 200)
want("wrong cookie", S.request("GET", "/api/net", token=False,
                               headers={"Cookie": f"ard_token_{S.port}=x{token}"}), 401)
want("token prefix", S.request("GET", f"/api/net?token={token[:-1]}", token=False), 401)
s, head = S.ws_open(token=False, headers={"Cookie": ck})
check(status_of(head) == 101, f"ws with the cookie: {head[:60]!r}")
s.close()

# ---- 6. UTF-8, 400, CSP ----
st, head, body = S.request("GET", "/api/net")
try:
    net = json.loads(body.decode("utf-8"))
    names = [c["name"] for c in net["connections"]]
    check(any("\\xff" in n for n in names), f"the bad name is not escaped: {names}")
except (UnicodeDecodeError, ValueError) as e:
    fails.append(f"/api/net is not UTF-8 JSON: {e}: {body[:300]!r}")
s, head = S.ws_open()
r = Reader(s)
s.sendall(frame(1, b"sub bad\xff\xfename 1000 s"))
s.sendall(frame(1, b"sub sig 1000 " + "\u00e9".encode() * 40))
s.sendall(frame(1, b"sub sig 1000 s"))
got = r.poll(2.0)
s.close()
texts = [p for op, p in got if op == 1]
check(any(b'"sub":"sig"' in p for p in texts), f"no subscription after the bad ones: {texts[:3]}")
for p in texts:
    try:
        p.decode("utf-8")
    except UnicodeDecodeError:
        fails.append(f"a text frame is not UTF-8: {p[:200]!r}")
check(any(b"\\\\xff" in p for p in texts), f"the bad name is not escaped in the error: {texts[:3]}")
st, head, _ = S.request("GET", "/ws", headers={"Upgrade": "websocket", "Connection": "Upgrade",
                                               "Sec-WebSocket-Version": "13"})
check(head.startswith(b"HTTP/1.1 400 "), f"upgrade without key: {head[:80]!r}")
st, head, _ = S.request("GET", "/ws", headers={"Upgrade": "websocket", "Connection": "Upgrade",
                                               "Sec-WebSocket-Key": "short",
                                               "Sec-WebSocket-Version": "13"})
check(head.startswith(b"HTTP/1.1 400 "), f"upgrade with a bad key: {head[:80]!r}")
st, head, _ = S.request("GET", "/", headers={"Cookie": ck}, token=False)
csp = [line for line in head.split(b"\r\n") if line.lower().startswith(b"content-security")]
check(len(csp) == 1 and b"connect-src 'self';" in csp[0] + b";" and b"ws:" not in csp[0],
      f"CSP: {csp}")

if fails:
    print("\n".join(fails))
    sys.exit(1)
print("trust rules hold")
