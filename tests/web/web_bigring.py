# web_bigring.py ARD BASE TOKEN WEBPID: a reader of large packets keeps few of them. A page
# client plots a connection of 4 MiB packets while 70 are written; the server's resident
# memory grows by far less than the 64 packets (256 MiB) a ring of the small packets' minimum
# would hold: at most 16 MiB of ring, and the connection's own mapping.
import os, subprocess, sys, time, urllib.parse
sys.path.insert(0, os.path.dirname(__file__))
from webtest import Server, Reader, frame, status_of

ard, base, token, pid = sys.argv[1:5]
u = urllib.parse.urlsplit(base)
S = Server(u.hostname, u.port, token)
CONN = "big"
TYPE = "s:f64 pad:u8[4194296]"  # 4 MiB


def rss_mib():
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    sys.exit("no VmRSS")


def put(v):
    subprocess.run([ard, "set", CONN, "--type", TYPE, f"s={v}"], check=True,
                   stdout=subprocess.DEVNULL)


put(0)
before = rss_mib()
s, head = S.ws_open()
if status_of(head) != 101:
    sys.exit(f"page client: no upgrade: {head[:80]!r}")
r = Reader(s)
s.sendall(frame(1, f"sub {CONN} 1000 s".encode()))
got = 0
for i in range(1, 71):
    put(i)
    for op, p in r.poll(0.02):
        got += op == 1 and p.startswith(b'{"now"')
for op, p in r.poll(1.0):
    got += op == 1 and p.startswith(b'{"now"')
after = rss_mib()
print(f"web_bigring: ard web's resident memory {before:.0f} -> {after:.0f} MiB, "
      f"{got} plot messages")
if got == 0:
    sys.exit("the page client got no plot of the connection")
if after - before > 128:
    sys.exit(f"ard web grew by {after - before:.0f} MiB reading 4 MiB packets "
             "(a ring of 64 of them holds 256 MiB)")
