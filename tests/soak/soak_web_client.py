# soak_web_client.py LOGFILE NAME CONN FIELD [foxglove]: a scripted `ard web` client for the
# soak run. Reads the server's address (with its token, if it printed one) from the last
# address line of LOGFILE (the web entry's log), opens the WebSocket, subscribes to CONN's
# FIELD and reads what the server sends. With "foxglove" it is a client of the Foxglove
# WebSocket protocol instead (subprotocol foxglove.websocket.v1 at /): it subscribes to the
# channel that the server advertises for CONN (topic /a/b for a.b) and counts the message
# data of that subscription whose payload is CDR of the connection's size (FIELD unused).
# When the socket closes (a restarted server) it reads the address again and reconnects.
# Prints once a second:
#   web NAME msgs=N buckets=N reconnects=N max_silence_ms=X
# (max_silence_ms: the longest time without a message while connected or reconnecting;
# buckets: the page protocol's plot buckets); a Foxglove client adds bad=N, the message data
# that were not whole CDR of the connection (the report fails the run on any).
import base64, json, os, re, socket, sys, time

logfile, name, conn, field = sys.argv[1:5]
foxglove = sys.argv[5:6] == ["foxglove"]
topic = "/" + conn.replace(".", "/")
# the probe's packet (tests/soak/soak_probe.c) as CDR: the 4-byte header, 9 fields of 8 bytes
CDR_SIZE = 4 + 9 * 8
msgs = buckets = reconnects = bad = 0
max_silence = 0.0
last_msg = time.monotonic()
next_print = time.monotonic() + 1


def address():
    try:
        text = open(logfile, errors="replace").read()
    except OSError:
        return None
    found = re.findall(r"http://([0-9.]+):([0-9]+)/(\?token=[A-Za-z0-9_.-]+)?", text)
    if not found:
        return None
    host, port, tok = found[-1]
    return host, int(port), tok[len("?token="):] if tok else ""


def report():
    global next_print
    now = time.monotonic()
    if now >= next_print:
        print(f"web {name} msgs={msgs} buckets={buckets} reconnects={reconnects} "
              f"max_silence_ms={max_silence:.0f}" + (f" bad={bad}" if foxglove else ""), flush=True)
        next_print = now + 1


def session(host, port, tok):
    global msgs, buckets, last_msg, max_silence
    s = socket.create_connection((host, port), timeout=2)
    key = base64.b64encode(os.urandom(16)).decode()
    q = f"?token={tok}" if tok else ""
    path, proto = ("/", "Sec-WebSocket-Protocol: foxglove.websocket.v1\r\n") if foxglove else ("/ws", "")
    s.sendall(f"GET {path}{q} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
              f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n{proto}\r\n".encode())
    buf = b""
    while b"\r\n\r\n" not in buf:
        b = s.recv(1)
        if not b:
            raise ConnectionError("closed during the handshake")
        buf += b
    if b" 101 " not in buf.split(b"\r\n", 1)[0]:
        raise ConnectionError(buf.split(b"\r\n", 1)[0].decode(errors="replace"))
    if not foxglove:
        send_text(s, f"sub {conn} 10000 {field}")
    s.settimeout(0.2)
    buf = b""
    while True:
        try:
            b = s.recv(65536)
            if not b:
                raise ConnectionError("closed")
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
            op, payload = buf[0] & 15, buf[i:i + n]
            buf = buf[i + n:]
            if op == 8:
                raise ConnectionError("close frame")
            if foxglove:
                foxglove_frame(s, op, payload)
                continue
            if op != 1:
                continue
            now = time.monotonic()
            max_silence = max(max_silence, (now - last_msg) * 1000)
            last_msg = now
            msgs += 1
            try:
                buckets += len(json.loads(payload).get("b", []))
            except (ValueError, AttributeError):
                pass
        report()


def send_text(s, text):
    data, mask = text.encode(), os.urandom(4)
    n = len(data)
    head = bytes([0x81, 0x80 | n]) if n < 126 else bytes([0x81, 0x80 | 126]) + n.to_bytes(2, "big")
    s.sendall(head + mask + bytes(c ^ mask[i % 4] for i, c in enumerate(data)))


def foxglove_frame(s, op, payload):
    """A frame of the Foxglove protocol: subscribe to CONN's channel when it is advertised
    (again after a re-advertise), count the subscription's message data."""
    global msgs, bad, last_msg, max_silence
    if op == 1:
        try:
            m = json.loads(payload)
        except ValueError:
            return
        if m.get("op") == "advertise":
            for ch in m.get("channels", []):
                if ch.get("topic") == topic:
                    send_text(s, json.dumps({"op": "subscribe",
                                             "subscriptions": [{"id": ch["id"], "channelId": ch["id"]}]}))
        return
    if op != 2 or not payload:
        return
    # message data: opcode 1, subscription id (u32), receive time (u64), the CDR payload
    if payload[0] != 1:
        return
    now = time.monotonic()
    max_silence = max(max_silence, (now - last_msg) * 1000)
    last_msg = now
    body = payload[13:]
    if len(payload) >= 13 and len(body) >= CDR_SIZE and body[:2] == b"\x00\x01":
        msgs += 1
    else:
        bad += 1


why = ""
while True:
    a = address()
    if a:
        try:
            session(*a)
        except (OSError, ConnectionError) as e:
            if why != str(e):
                print(f"web {name} reconnecting: {e}", flush=True)
            why = str(e)
        reconnects += 1
    max_silence = max(max_silence, (time.monotonic() - last_msg) * 1000)
    report()
    time.sleep(0.2)
