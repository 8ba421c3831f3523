# webtest.py - raw HTTP and WebSocket helpers of the ard web tests (web_trust, web_slow,
# web_idle): requests written byte by byte so that any header can be sent or left out.
import base64, os, socket, time


class Server:
    def __init__(self, host, port, token):
        self.host, self.port, self.token = host, port, token
        self.authority = f"{host}:{port}"

    def raw(self, data, timeout=5.0):
        """Send bytes, return all the server answers until it closes (or times out)."""
        s = socket.create_connection((self.host, self.port), timeout=timeout)
        out = b""
        try:
            s.sendall(data)
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

    def request(self, method, path, body=b"", headers=None, host=True, token=True,
                timeout=5.0):
        """(status, head, body) of one request. host: True for this server's authority, a
        string for that Host, None for none. token: add ?token=."""
        if token and self.token:
            path += ("&" if "?" in path else "?") + "token=" + self.token
        h = f"{method} {path} HTTP/1.1\r\n"
        if host is True:
            h += f"Host: {self.authority}\r\n"
        elif host is not None:
            h += f"Host: {host}\r\n"
        for k, v in (headers or {}).items():
            for one in (v if isinstance(v, list) else [v]):
                h += f"{k}: {one}\r\n"
        if body or method == "POST":
            h += f"Content-Length: {len(body)}\r\n"
        r = self.raw(h.encode() + b"\r\n" + body, timeout)
        head, _, rest = r.partition(b"\r\n\r\n")
        try:
            st = int(head.split(b" ", 2)[1])
        except (IndexError, ValueError):
            st = None
        return st, head, rest

    def ws_open(self, headers=None, host=True, token=True, path="/ws", timeout=5.0):
        """A WebSocket: (socket, status line and headers). The socket stays open."""
        s = socket.create_connection((self.host, self.port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        q = f"?token={self.token}" if token and self.token else ""
        h = f"GET {path}{q} HTTP/1.1\r\n"
        if host is True:
            h += f"Host: {self.authority}\r\n"
        elif host is not None:
            h += f"Host: {host}\r\n"
        h += (f"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
              "Sec-WebSocket-Version: 13\r\n")
        for k, v in (headers or {}).items():
            h += f"{k}: {v}\r\n"
        s.sendall(h.encode() + b"\r\n")
        head = b""
        try:
            while b"\r\n\r\n" not in head:
                b = s.recv(1)
                if not b:
                    break
                head += b
        except (socket.timeout, ConnectionResetError):
            pass
        return s, head


def status_of(head):
    try:
        return int(head.split(b" ", 2)[1])
    except (IndexError, ValueError):
        return None


def frame(op, data, mask=True, fin=True):
    n = len(data)
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


class Reader:
    """Reads server frames from a WebSocket, answers pings, keeps text payloads as bytes."""

    def __init__(self, sock):
        self.s, self.buf, self.closed = sock, b"", False

    def poll(self, wait):
        """Frames (op, payload) that arrived within `wait` seconds."""
        out = []
        end = time.time() + wait
        while not self.closed:
            left = end - time.time()
            if left <= 0:
                break
            self.s.settimeout(left)
            try:
                b = self.s.recv(1 << 20)
            except socket.timeout:
                break
            except (ConnectionResetError, BrokenPipeError, OSError):
                self.closed = True
                break
            if not b:
                self.closed = True
                break
            self.buf += b
            out += self._frames()
        return out

    def _frames(self):
        out = []
        while len(self.buf) >= 2:
            op, n, i = self.buf[0] & 15, self.buf[1] & 127, 2
            if n == 126:
                if len(self.buf) < 4:
                    break
                n, i = int.from_bytes(self.buf[2:4], "big"), 4
            elif n == 127:
                if len(self.buf) < 10:
                    break
                n, i = int.from_bytes(self.buf[2:10], "big"), 10
            if len(self.buf) < i + n:
                break
            payload = self.buf[i:i + n]
            self.buf = self.buf[i + n:]
            if op == 9:
                try:
                    self.s.sendall(frame(10, payload))
                except OSError:
                    pass
            if op == 8:
                self.closed = True
            out.append((op, payload))
        return out
