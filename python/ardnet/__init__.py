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

def _not_for_this_interpreter(err):
    """The message of an ImportError of the extension: the interpreter it was built for (the
    build writes _build_info.py), this one, and how to build the binding for this one."""
    import importlib.util
    import os
    import sys
    import sysconfig

    here = os.path.dirname(os.path.abspath(__file__))
    try:
        from . import _build_info as b
        built = "%s (Python %s, %s, numpy %s)" % (b.PYTHON, b.VERSION, b.SOABI, b.NUMPY)
        built_exe = b.PYTHON
    except ImportError:  # a build without the file: the extension's name says the ABI
        names = [f for f in os.listdir(here) if f.startswith("_ardnet.")] or ["none"]
        built, built_exe = "the interpreter of %s" % ", ".join(names), "that interpreter"
    if importlib.util.find_spec("numpy") is None:
        numpy = "no numpy"
    else:
        try:
            import numpy
            numpy = "numpy " + numpy.__version__
        except Exception as e:  # noqa: BLE001  (a broken numpy is reported as it is)
            numpy = "numpy that fails to import: %s" % e
    exe = sys.executable or "python3"
    this = "%s (Python %s, %s, %s)" % (exe, sys.version.split()[0],
                                        sysconfig.get_config_var("SOABI"), numpy)
    get_numpy = ("%s -m pip install numpy, or a venv made with --system-site-packages; then "
                 % exe) if numpy == "no numpy" else ""
    return ("ardnet: the binding in %s was built for %s; this interpreter is %s. Run the "
            "program with %s, or build the binding for this interpreter: %s%s -m pip install "
            "--no-build-isolation ARDNET_SOURCE/python (docs/install.md, \"Python in another interpreter\"). "
            "The import failed with: %s: %s"
            % (here, built, this, built_exe, get_numpy, exe, type(err).__name__, err))


try:
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
except ImportError as _err:
    raise ImportError(_not_for_this_interpreter(_err)) from None

from . import log  # noqa: E402,F401  (ardnet.log.read: recordings as numpy arrays)

__version__ = LIBRARY_VERSION
__all__ = [
    "Error", "Info", "Period", "Port", "domain", "domain_unlink", "dtype", "fini", "init",
    "now_ns", "realtime_ns", "set_domain", "strerror", "log",
]
