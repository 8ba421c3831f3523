"""Recordings (MCAP files written by `ard record` or the C log API) as numpy arrays.

    d = ardnet.log.read("run.mcap")
    s = d["arm.state"]
    plt.plot(s.t, s["q"][:, 3])          # s["q"] is an (N, 7) float64 array
    print(s.missed, d.meta["host"])

The file is read by the C library (ard_logr_*) in one pass, straight into numpy arrays: no
Python object is made per message. docs/python.md, "Recordings", describes every attribute.
"""

import warnings

import numpy as np

from . import _ardnet

__all__ = ["read", "Recording", "Connection"]


class Connection:
    """The messages of one connection, in file (receive time) order, N of them.

    t, t_pub   float64 seconds since the recording's first message (receive time: the
               recorder's realtime clock read once the packet was there; publish time: the
               writer's realtime send stamp). t - t_pub is the link latency plus the
               recorder's polling delay, and on a bridged link also the two clocks' offset
    t_ns, t_pub_ns   the same as uint64 ns since the Unix epoch, exact (MCAP times are
               unsigned: values of 2^63 and more are kept)
    seq        uint64 sequence numbers (the writer's, low 32 bits)
    packets    numpy structured array, one row per message, fields named by the descriptor;
               for an opaque connection a uint8 array of shape (N, size); None when the
               channel was not written by ardnet (times only)
    c["q"]     the field q: shape (N,) for a scalar, (N, 7) for q:f64[7]
    """

    __slots__ = ("name", "key", "channel_id", "type", "size", "ardnet", "schema", "schema_data",
                 "schema_name", "schema_encoding", "encoding", "count", "missed", "seq", "t_ns",
                 "t_pub_ns", "t", "t_pub", "packets")

    def __init__(self, c, start_ns):
        n = c["n"]
        self.name = c["name"]          # the channel's topic
        self.key = c["name"]           # its key in the Recording (see Recording)
        self.channel_id = c["channel_id"]
        self.type = c["type"]          # ardnet descriptor, "" for opaque bytes
        self.size = c["size"]          # packet size in bytes
        self.ardnet = c["ardnet"]      # False: a foreign channel (packets is None)
        self.schema = c["schema"]      # the schema whole: str if UTF-8 (.msg text), else bytes
        self.schema_data = c["schema_data"]  # the schema's bytes, always bytes
        self.schema_name = c["schema_name"]
        self.schema_encoding = c["schema_encoding"]
        self.encoding = c["encoding"]
        self.count = n                 # messages read
        self.missed = c["missed"]      # packets the recorder did not get
        self.seq = c["seq"][:n]
        self.t_ns = c["log_ns"][:n]
        self.t_pub_ns = c["real_ns"][:n]
        # uint64 differences wrap below start_ns; as int64 they are the signed offset again.
        s0 = np.uint64(start_ns)
        self.t = (self.t_ns - s0).view(np.int64) / 1e9
        self.t_pub = (self.t_pub_ns - s0).view(np.int64) / 1e9
        pk = c["packets"]
        self.packets = pk[:n] if pk is not None else None

    @property
    def fields(self):
        """Field names of the packets (() for opaque or foreign connections)."""
        if self.packets is None or self.packets.dtype.names is None:
            return ()
        return self.packets.dtype.names

    @property
    def data(self):
        """Opaque packets as a uint8 array (N, size); for typed ones the same bytes."""
        if self.packets is None:
            return None
        return self.packets.view("u1").reshape(len(self.packets), self.size)

    def __getitem__(self, field):
        if self.packets is None or self.packets.dtype.names is None:
            raise KeyError("connection '%s' has no fields (opaque: use .data)" % self.name)
        return self.packets[field]

    def __len__(self):
        return self.count

    def __repr__(self):
        return "<ardnet.log.Connection %s %r: %d messages, %d missed>" % (
            self.name, self.type, self.count, self.missed)


class Recording(dict):
    """A dict of Connection by connection name, plus:

    connections  every Connection in channel order (a list)
    channels(name)  the Connections whose topic is name (a list)

    MCAP allows several channels with one topic (a writer re-created with another type, or
    another program's file). The first keeps the topic as its key; the next ones get the keys
    "topic#2", "topic#3", ... (Connection.key), and reading such a file warns once naming them.

    path       the file
    meta       the "ardnet" metadata of the file: host, domain, version, format (strings),
               start_ns (int: the recorder's realtime clock when it opened the file)
    summary    messages, chunks, file_size, start_ns, end_ns, compression, complete,
               valid_end, cut (cut: "" or why a file cut short ends where it does)
    start_ns   log time of the first message (t = 0 of every connection)
    """

    def __init__(self, path, raw):
        super().__init__()
        self.path = path
        self.meta = raw["meta"]
        if self.meta.get("start_ns", "").isdigit():
            self.meta["start_ns"] = int(self.meta["start_ns"])
        self.summary = raw["summary"]
        self.start_ns = self.summary["start_ns"]
        self.connections = [Connection(c, self.start_ns) for c in raw["conns"]]
        extra = []
        for c in self.connections:
            n = 1
            while c.key in self:
                n += 1
                c.key = "%s#%d" % (c.name, n)
            if n > 1:
                extra.append(c.key)
            self[c.key] = c
        if extra:
            warnings.warn("%s: several channels share a topic; the later ones are keyed %s"
                          % (path, ", ".join(extra)), stacklevel=3)

    def channels(self, name):
        """Every Connection whose topic is name, in channel order (possibly several)."""
        return [c for c in self.connections if c.name == name]

    def __repr__(self):
        return "<ardnet.log.Recording %s: %s>" % (self.path, ", ".join(self))


def read(path):
    """Read a whole recording: returns a Recording (a dict of Connection by name).

    The file is checked from end to end first; a missing, foreign or damaged file raises
    ardnet.Error whose message names the file (and, for damage, the byte offset and cause).
    A file cut short (recorder killed) is read up to its last complete record
    (summary["complete"] is False, summary["cut"] says why).
    """
    import os
    if not hasattr(_ardnet, "_log_read"):  # ardnet configured without its part ARD_LOG
        raise RuntimeError("ardnet.log: not built (configure ardnet with libzstd: "
                           "apt-get install libzstd-dev zlib1g-dev liblz4-dev)")
    return Recording(os.fspath(path), _ardnet._log_read(path))
