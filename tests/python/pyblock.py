"""A Python block for the launcher test: echoes each packet of port "in" to port "out" with
field f9[0] incremented, until stopped."""

import sys

import ardnet

TYPE = "i8 u8[3] i16 u16 i32 u32 i64 u64 f32 f64[3]"

inp = ardnet.Port("in", "in", type=TYPE)
out = ardnet.Port("out", "out", type=TYPE)
ardnet.init(sys.argv)  # tells ardstart --wait that the block is ready
if len(sys.argv) != 1:
    sys.exit("pyblock: unexpected arguments %r" % sys.argv[1:])
while True:
    p = inp.rec()
    out.packet[...] = p
    out.packet["f9"][0] += 1
    out.send()
