"""The C extension ardnet._ardnet for the interpreter that runs the build (pyproject.toml).

The library's sources (src/lib, src/log and the ROS 2 representation it uses, src/ros2, of the
ardnet tree) are compiled into the extension, as
the CMake build links the static library: nothing to install first, no run-time search path.
The build also writes ardnet/_build_info.py, which names this interpreter when the extension
does not import elsewhere.
"""

import glob
import os
import platform
import re
import sys
import sysconfig

import numpy
from setuptools import Extension, setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
TREE = os.path.dirname(HERE)


def tree(*parts):
    return os.path.join(TREE, *parts)


def rel(path):  # setuptools takes sources only relative to setup.py's directory
    return os.path.relpath(path, HERE)


os.chdir(HERE)
if not os.path.isfile(tree("include", "ardnet.h")):
    sys.exit("ardnet: build the binding from the ardnet tree (pip install ./python there): "
             "%s not found" % tree("include", "ardnet.h"))

log_sources = glob.glob(tree("src", "log", "*.c"))
lib_sources = sorted(glob.glob(tree("src", "lib", "*.c")) + log_sources +
                     (glob.glob(tree("src", "ros2", "*.c")) if log_sources else []))
# The compression libraries the recording code includes (zstd, zlib, lz4), linked by name.
headers = {"zstd.h": "zstd", "zlib.h": "z", "lz4.h": "lz4", "lz4frame.h": "lz4"}
libraries = []
for src in lib_sources:
    with open(src, encoding="utf-8") as f:
        for h in re.findall(r'^#\s*include\s*<([a-z0-9]+\.h)>', f.read(), re.M):
            if h in headers and headers[h] not in libraries:
                libraries.append(headers[h])


# The recording part (ardnet.log) when its sources are in the tree, with lz4 chunks when they
# use lz4 (as the CMake build defines ARD_HAVE_LOG and ARD_HAVE_LZ4).
macros = [("_GNU_SOURCE", None), ("ARD_BUILDING_LIB", "1")]
if glob.glob(tree("src", "log", "*.c")):
    macros.append(("ARD_HAVE_LOG", "1"))
if "lz4" in libraries:
    macros.append(("ARD_HAVE_LZ4", "1"))


class BuildPy(build_py):
    def run(self):
        super().run()
        out = os.path.join(self.build_lib, "ardnet", "_build_info.py")
        with open(out, "w", encoding="utf-8") as f:
            f.write("# Written by the build: the interpreter the extension _ardnet was built for.\n"
                    "PYTHON = %r\nVERSION = %r\nSOABI = %r\nNUMPY = %r\n"
                    % (sys.executable, platform.python_version(),
                       sysconfig.get_config_var("SOABI"), numpy.__version__))


setup(
    packages=["ardnet"],
    cmdclass={"build_py": BuildPy},
    ext_modules=[Extension(
        "ardnet._ardnet",
        sources=["_ardnet.c"] + [rel(f) for f in lib_sources],
        include_dirs=[tree("include"), tree("src", "lib"), tree("src", "common"),
                      tree("src", "log"), tree("src", "ros2"), numpy.get_include()],
        define_macros=macros,
        extra_compile_args=["-std=gnu11", "-fvisibility=hidden", "-Wno-unused-function"],
        libraries=libraries + ["pthread", "rt"],
    )],
)
