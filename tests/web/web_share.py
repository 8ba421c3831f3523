# web_share.py ARD BASE TOKEN: both protocols of `ard web` share one reader per connection
# (see web_share.sh). The count is the library's: the server's own IN attachments of the
# connection, as /api/net lists them among its peers (pid = "self", dir "in").
import atexit, json, os, struct, subprocess, sys, time, urllib.parse
sys.path.insert(0, os.path.dirname(__file__))
from webtest import Server, Reader, frame, status_of

ard, base, token = sys.argv[1:4]
u = urllib.parse.urlsplit(base)
S = Server(u.hostname, u.port, token)
CONN = "share"
shm = f"/dev/shm/ard.{os.environ['ARD_DOMAIN']}.{CONN}"
FOX = {"Sec-WebSocket-Protocol": "foxglove.websocket.v1"}
WAIT = 15.0  # s for anything to happen on a loaded machine


writers = []


@atexit.register
def end_writers():
    for w in writers:
        w.kill()
        w.wait()


def gen(amp):
    p = subprocess.Popen([ard, "siggen", CONN, "--type", "s:f64", "--rate", "200",
                          f"s=sine,amp={amp},freq=5"], stdout=subprocess.DEVNULL)
    writers.append(p)
    end = time.time() + WAIT
    while subprocess.run([ard, "show", CONN], capture_output=True).returncode != 0:
        if time.time() > end:
            sys.exit("siggen did not start")
        time.sleep(0.05)
    return p


def stop(p):
    p.kill()
    p.wait()
    os.unlink(shm)


def own_readers():
    """The server's IN attachments of CONN (None when CONN is not listed)."""
    st, _, body = S.request("GET", "/api/net")
    if st != 200:
        sys.exit(f"/api/net answered {st}")
    net = json.loads(body)
    for c in net["connections"]:
        if c["name"] == CONN:
            return [p for p in c.get("peers", []) if p["pid"] == net["self"] and p["dir"] == "in"]
    return None


class Page:
    def __init__(self):
        self.s, head = S.ws_open()
        if status_of(head) != 101:
            sys.exit(f"page client: no upgrade: {head[:80]!r}")
        self.r = Reader(self.s)
        self.s.sendall(frame(1, f"sub {CONN} 1000 s".encode()))

    def peak(self, wait):
        """The largest |value| of the buckets received in `wait` s (None: no bucket)."""
        vals = [abs(v) for op, p in self.r.poll(wait) if op == 1 and p.startswith(b'{"now"')
                for b in json.loads(p)["b"] for v in b[1:] if v is not None]
        return max(vals, default=None)


class Fox:
    """A Foxglove client subscribed to CONN's channel. Should the watcher list the domain
    between the removal of CONN and its creation anew, the channel is unadvertised and
    advertised again (another id): the client then subscribes to the new one, as a viewer
    does."""

    def __init__(self, sub_id):
        self.s, head = S.ws_open(headers=FOX, path="/")
        if status_of(head) != 101:
            sys.exit(f"Foxglove client: no upgrade: {head[:80]!r}")
        self.r = Reader(self.s)
        self.sub_id, self.chan = sub_id, None

    def peak(self, wait):
        """The largest |s| of the messages received in `wait` s (None: no message). A
        message: opcode 1, subscription id, receive time, then CDR (4-byte header, s)."""
        vals = []
        for op, p in self.r.poll(wait):
            if op == 2 and p[0] == 1 and int.from_bytes(p[1:5], "little") == self.sub_id:
                vals.append(abs(struct.unpack("<d", p[17:25])[0]))
            elif op == 1:
                m = json.loads(p)
                if m.get("op") == "unadvertise" and self.chan in m["channelIds"]:
                    self.chan = None
                elif m.get("op") == "advertise" and self.chan is None:
                    for c in m["channels"]:
                        if c["topic"] == "/" + CONN:
                            self.chan = c["id"]
                            sub = {"op": "subscribe",
                                   "subscriptions": [{"id": self.sub_id, "channelId": c["id"]}]}
                            self.s.sendall(frame(1, json.dumps(sub).encode()))
        return max(vals, default=None)


def close(c):
    c.s.sendall(frame(8, b"\x03\xe8"))
    c.s.close()


def until(what, cond):
    end = time.time() + WAIT
    while time.time() < end:
        v = cond()
        if v:
            return v
        time.sleep(0.05)
    sys.exit(f"timed out ({WAIT:.0f} s) waiting for {what}")


def exactly_one(when, clients):
    """While every client reads, the server holds one reader of CONN: asked 10 times (the
    clients read in between, so that none falls behind)."""
    for _ in range(10):
        r = own_readers()
        if r is None or len(r) != 1:
            sys.exit(f"{when}: the server holds {'no listing' if r is None else len(r)} "
                     f"reader(s) of {CONN}, expected 1: {r}")
        for c in clients:
            c.peak(0.02)
    return r[0]


def all_read(clients, lo, hi, what):
    """Every client receives values with a peak in [lo, hi] (the writer's amplitude). The
    clients are read in turns, so that none falls behind."""
    done = [False] * len(clients)
    end = time.time() + WAIT
    while not all(done):
        if time.time() > end:
            bad = [f"{i} ({type(c).__name__})" for i, c in enumerate(clients) if not done[i]]
            sys.exit(f"timed out ({WAIT:.0f} s): {what}: client(s) {', '.join(bad)} received "
                     f"no values in [{lo}, {hi}]")
        for i, c in enumerate(clients):
            pk = c.peak(0.05)
            done[i] = done[i] or (pk is not None and lo <= pk <= hi)


p = gen(1)
pages = [Page(), Page()]
foxes = [Fox(7), Fox(8)]
clients = pages + foxes
all_read(clients, 0.5, 1.01, "first object")
first = exactly_one("two page and two Foxglove clients", clients)

# Created anew with the same type: the one reader follows it, for all four clients.
stop(p)
p = gen(5)
all_read(clients, 2.0, 5.01, "after re-creation")
again = exactly_one("after re-creation", clients)

# The reader stays while anyone watches, and goes with the last.
for c in pages:
    close(c)
all_read(foxes, 2.0, 5.01, "page clients gone")
exactly_one("page clients gone", foxes)
close(foxes[0])
all_read(foxes[1:], 2.0, 5.01, "one Foxglove client left")
exactly_one("one Foxglove client left", foxes[1:])
close(foxes[1])
until(f"the server's reader of {CONN} to close after the last client left",
      lambda: own_readers() == [])
stop(p)
print(f"one reader for 2 page + 2 Foxglove clients ({first['port']}), followed to the new "
      f"object ({again['port']}), closed after the last client")
