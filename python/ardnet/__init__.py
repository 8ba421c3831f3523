"""ardnet: latest-value links between the blocks of a realtime robot system.

A Python program is an ordinary ardnet block::

    import sys, ardnet

    state = ardnet.Port("state", "in", type="q:f64[7] qd:f64[7]")
    cmd = ardnet.Port("cmd", "out", type="tau:f64[7]")
    ardnet.init(sys.argv)            # applies and removes the --ard* options
    while True:
        s = state.rec()              # blocks until a newer packet; Ctrl-C works
        cmd.packet["tau"] = -10.0 * s["q"]
        cmd.send()                   # never blocks

Ports, packets (numpy structured arrays) and errors are described in docs/python.md; the C
library underneath in docs/api.md.
"""

from ._ardnet import (  # noqa: F401
    Error,
    Info,
    Period,
    Port,
    LIBRARY_VERSION,
    domain,
    domain_unlink,
    dtype,
    fini,
    init,
    now_ns,
    realtime_ns,
    set_domain,
    strerror,
    EINVAL,
    ENOMEM,
    ESYS,
    EOPTION,
    ETYPE,
    EBUSY,
    ENODATA,
    ETIMEDOUT,
    EACCES,
    ENOENT,
    ESTALE,
    ERTREFUSED,
    ESTATE,
    EINTR,
)

__version__ = LIBRARY_VERSION
__all__ = [
    "Error", "Info", "Period", "Port", "domain", "domain_unlink", "dtype", "fini", "init",
    "now_ns", "realtime_ns", "set_domain", "strerror",
]
