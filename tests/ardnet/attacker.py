#!/usr/bin/python3
"""attacker.py - the third host of tests/ardnet/ardnet_seal_netns.sh: hears every datagram on
the bridge (ageing time 0: the bridge floods like a hub) and sends datagrams with any source
address (raw socket).

  attacker.py capture DST_PORT SECONDS FILE
      record the UDP datagrams to DST_PORT (0: any) seen on eth0 for SECONDS into FILE (one
      per line: src_ip src_port dst_ip dst_port hex_payload; with --stamp, the kernel's
      arrival time first, CLOCK_REALTIME in s); prints how many
  attacker.py replay FILE [--count N] [--gap-ms G]
      send the recorded datagrams again, each from its recorded source address and port
  attacker.py forge FILE MODE [--count N]
      send datagrams made from the last recorded one, from its source:
        seq-high   sequence (bytes 24..31) set far ahead, N of them, each one higher
        flip       one payload byte flipped (a sealed one then fails its tag)
        plain      the header only, version 1, sequence far ahead (an unsealed forgery)
        ardc-seq   a catalog announcement's snapshot number (bytes 20..23) 2^30 ahead
      (--from IP, --to IP: the last recorded one from IP, to IP)
  attacker.py announce FILE SRC_IP DST_IP KIND NAME SIZE TYPE PORT
      catalog announcements of its own (plain, version 1, the domain of the recorded ones, a
      new host id, host name "evil", 5 snapshots 50 ms apart): KIND has or want NAME, sent
      from SRC_IP to DST_IP:7400
  attacker.py listen PORT SECONDS
      count the bytes of the datagrams that arrive on PORT; prints the number
"""
import socket
import struct
import sys
import time


def capture(port, seconds, path, stamp=False):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(0x0800))
    s.bind(("eth0", 0x0800))
    s.settimeout(0.1)
    s.setsockopt(socket.SOL_SOCKET, 35, 1)  # SO_TIMESTAMPNS: the kernel's arrival time
    end = time.monotonic() + seconds
    n = 0
    with open(path, "w") as out:
        while time.monotonic() < end:
            try:
                pkt, anc, _, _ = s.recvmsg(70000, 64)
            except socket.timeout:
                continue
            ts = time.time()
            for level, kind, data in anc:
                if level == socket.SOL_SOCKET and kind == 35 and len(data) >= 16:
                    sec, nsec = struct.unpack("qq", data[:16])
                    ts = sec + nsec / 1e9
            if len(pkt) < 28 or pkt[9] != 17:
                continue
            ihl = (pkt[0] & 15) * 4
            sport, dport, ulen = struct.unpack("!HHH", pkt[ihl:ihl + 6])
            if port and dport != port:
                continue
            payload = pkt[ihl + 8:ihl + ulen]
            src = socket.inet_ntoa(pkt[12:16])
            dst = socket.inet_ntoa(pkt[16:20])
            if stamp:
                out.write("%.6f " % ts)
            out.write("%s %d %s %d %s\n" % (src, sport, dst, dport, payload.hex()))
            n += 1
    print(n)


def load(path):
    rows = []
    for line in open(path):
        src, sport, dst, dport, hexp = line.split()
        rows.append((src, int(sport), dst, int(dport), bytes.fromhex(hexp)))
    return rows


def checksum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def send_spoofed(raw, src, sport, dst, dport, payload):
    udp = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0x4000, 64, 17, 0,
                     socket.inet_aton(src), socket.inet_aton(dst))
    ip = ip[:10] + struct.pack("!H", checksum(ip)) + ip[12:]
    raw.sendto(ip + udp, (dst, 0))


def main():
    a = sys.argv[1:]
    if a[0] == "capture":
        capture(int(a[1]), float(a[2]), a[3], "--stamp" in a)
        return
    if a[0] == "listen":
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("0.0.0.0", int(a[1])))
        s.settimeout(0.1)
        end = time.monotonic() + float(a[2])
        total = 0
        while time.monotonic() < end:
            try:
                total += len(s.recv(70000))
            except socket.timeout:
                pass
        print(total)
        return
    rows = load(a[1])
    count = int(a[a.index("--count") + 1]) if "--count" in a else len(rows)
    gap = float(a[a.index("--gap-ms") + 1]) / 1000 if "--gap-ms" in a else 0.0
    raw = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    sent = 0
    if a[0] == "replay":
        for i in range(count):
            src, sport, dst, dport, p = rows[i % len(rows)]
            send_spoofed(raw, src, sport, dst, dport, p)
            sent += 1
            if gap:
                time.sleep(gap)
    elif a[0] == "announce":
        src_ip, dst, kind, name, size, typ, port = a[2], a[3], a[4], a[5], int(a[6]), a[7], int(a[8])
        dport, p = 7400, rows[-1][4]
        host = b"evil"
        entry = struct.pack("<BBHIBBH", 1 if kind == "has" else 2, 0,
                            0 if kind == "has" else port, size, len(name), 0, len(typ))
        entry += name.encode() + typ.encode()
        hdr = b"ARDC" + struct.pack("<BBHQ", 1, 0, 32, 0x5EED0000 + port) + p[16:20]
        hdr += struct.pack("<IHHHBB", 1, 0, 1, 1, len(host), 0)
        for i in range(count if "--count" in a else 5):
            d = bytearray(hdr + host + entry)
            d[20:24] = struct.pack("<I", i + 1)
            send_spoofed(raw, src_ip, 7400, dst, dport, bytes(d))
            sent += 1
            time.sleep(0.05)
    elif a[0] == "forge":
        mode = a[2]
        if "--from" in a:
            rows = [r for r in rows if r[0] == a[a.index("--from") + 1]]
        if "--to" in a:
            rows = [r for r in rows if r[2] == a[a.index("--to") + 1]]
        src, sport, dst, dport, p = rows[-1]
        for i in range(count):
            b = bytearray(p)
            if mode == "seq-high":
                b[24:32] = struct.pack("<Q", (1 << 62) + i)
            elif mode == "flip":
                b[-20] ^= 0x55
            elif mode == "ardc-seq":
                b[20:24] = struct.pack("<I", (struct.unpack("<I", b[20:24])[0] + (1 << 30) + i)
                                       & 0xFFFFFFFF)
            elif mode == "plain":
                # a whole version 1 datagram of the same connection and size (zeros)
                size = struct.unpack("<I", b[12:16])[0]
                b = bytearray(b[:56]) + bytearray(size)
                b[4] = 1
                b[5] = 0
                b[6:8] = struct.pack("<H", 56)
                b[24:32] = struct.pack("<Q", (1 << 62) + i)
            send_spoofed(raw, src, sport, dst, dport, bytes(b))
            sent += 1
            if gap:
                time.sleep(gap)
    print(sent)


if __name__ == "__main__":
    main()
