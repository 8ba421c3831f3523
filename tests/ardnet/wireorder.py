#!/usr/bin/env python3
"""wireorder.py - the order of ardnet datagrams on one UDP port, for tests.

    wireorder.py PORT IDLE_SECONDS SMALL_ID FRAG_ID

Receives on PORT until IDLE_SECONDS pass without a datagram (after the first one; before it,
60 s), with a receive buffer of 256 MiB (root), so that a slow reader loses nothing, and reads each datagram's header (docs/wire.md): whole packets of connection id
SMALL_ID, fragments of connection id FRAG_ID. Prints "small=N frags=N packets=N inside=N":
inside counts the whole SMALL_ID packets that arrived between two fragments of one and the
same FRAG_ID packet (the sender interleaved them into that packet's fragments).
"""
import socket
import struct
import sys
import time

MAGIC = 0x4E445241
FLAG_FRAG = 0x01


def main():
    port, idle, small_id, frag_id = (int(a) for a in sys.argv[1:5])
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    SO_RCVBUFFORCE = getattr(socket, "SO_RCVBUFFORCE", 33)
    s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 256 << 20)
    s.bind(("", port))
    s.settimeout(0.2)
    print("ready", flush=True)
    end = time.monotonic() + 60
    small = frags = 0
    seqs = set()
    last_frag_seq = None
    waiting = 0  # small packets seen since the last fragment
    inside = 0
    while time.monotonic() < end:
        try:
            d = s.recv(65536)
        except socket.timeout:
            continue
        end = time.monotonic() + idle
        if len(d) < 56:
            continue
        magic, _ver, flags, _hlen, conn = struct.unpack_from("<IBBHI", d, 0)
        if magic != MAGIC:
            continue
        seq = struct.unpack_from("<Q", d, 24)[0]
        if conn == small_id and flags == 0:
            small += 1
            waiting += 1
        elif conn == frag_id and flags & FLAG_FRAG:
            frags += 1
            seqs.add(seq)
            if seq == last_frag_seq:
                inside += waiting
            last_frag_seq = seq
            waiting = 0
    print(f"small={small} frags={frags} packets={len(seqs)} inside={inside}", flush=True)


if __name__ == "__main__":
    main()
