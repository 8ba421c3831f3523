"""cmake --install puts the package where python3 finds it."""

import os
import shutil
import subprocess
import sys

BUILD = os.environ.get("ARD_BUILD_DIR", "")
SUBDIR = os.environ.get("ARD_PYTHON_INSTALL_DIR", "")
PYTHON = os.environ.get("ARD_TEST_PYTHON", sys.executable)
LOGWRITE = os.environ.get("ARD_TEST_LOGWRITE", "")


def test_default_install_dir_is_on_the_system_pythons_path():
    # With the default prefix /usr/local (or /usr), the package lands on sys.path as is.
    path = subprocess.run([PYTHON, "-c", "import sys; print('\\n'.join(sys.path))"],
                          capture_output=True, text=True, env={}, check=True).stdout.split()
    if SUBDIR.startswith("lib/python3/"):
        assert "/usr/" + SUBDIR in path
    else:
        assert "/usr/local/" + SUBDIR in path


def test_installed_package_imports_and_works(domain, tmp_path):
    prefix = tmp_path / "prefix"
    # the binding alone: cmake --install BUILD --component python
    r = subprocess.run(["cmake", "--install", BUILD, "--component", "python", "--prefix",
                        str(prefix)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    site = prefix / SUBDIR
    files = sorted(os.listdir(site / "ardnet"))
    assert "__init__.py" in files and "log.py" in files, files
    assert any(f.startswith("_ardnet.") and f.endswith(".so") for f in files), files
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(site)
    code = ("import ardnet, sys\n"
            "o = ardnet.Port('o', 'out', type='x:f64 n:u32')\n"
            "i = ardnet.Port('i', 'in', type='x:f64 n:u32', connection='o')\n"
            "ardnet.init(sys.argv)\n"
            "o.packet['n'] = 7\n"
            "o.send()\n"
            "print(ardnet.__file__, i.tryrec(), int(i.packet['n']), sys.argv[1:])\n")
    r = subprocess.run([PYTHON, "-c", code, "--ard-spin", "0", "left"], capture_output=True,
                       text=True, env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    where, new, n, rest = r.stdout.split(" ", 3)
    assert where.startswith(str(site)) and (new, n, rest.strip()) == ("True", "7", "['left']")


# --- The binding in an interpreter it was not built for, and pip install ./python ---

SOURCE = os.environ.get("ARD_SOURCE_DIR", "")
ROUND_TRIP = ("import ardnet, sys\n"
              "o = ardnet.Port('o', 'out', type='x:f64 n:u32')\n"
              "i = ardnet.Port('i', 'in', type='x:f64 n:u32', connection='o')\n"
              "ardnet.init(sys.argv)\n"
              "o.packet['n'] = 7\n"
              "o.send()\n"
              "assert i.tryrec() and int(i.packet['n']) == 7\n"
              "import ardnet._build_info as b\n"
              "print(ardnet.__file__, b.PYTHON, b.NUMPY)\n")


def clean_env(uninstrumented=False, **extra):
    # uninstrumented: for what pip builds, which the sanitizer build does not instrument (and
    # for the compiler pip runs): without the sanitizer runtime the tests preload.
    drop = ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")
    if uninstrumented:
        drop += ("LD_PRELOAD", "ASAN_OPTIONS")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(extra)
    return env


def built_for():
    """The interpreter the build tree's extension was built for (its _build_info.py)."""
    info = {}
    with open(os.path.join(BUILD, "python", "ardnet", "_build_info.py")) as f:
        exec(f.read(), info)  # noqa: S102  (a file this build wrote)
    return info


def test_build_records_its_interpreter():
    b = built_for()
    assert os.path.realpath(b["PYTHON"]) == os.path.realpath(PYTHON)
    r = subprocess.run([PYTHON, "-c", "import sys, sysconfig, numpy; print(sys.version.split()[0],"
                        " sysconfig.get_config_var('SOABI'), numpy.__version__)"],
                       capture_output=True, text=True, check=True, env=clean_env())
    assert r.stdout.split() == [b["VERSION"], b["SOABI"], b["NUMPY"]]


def test_interpreter_without_numpy_is_told_what_to_do(tmp_path):
    # A venv of the same Python without the system's site-packages has no numpy, like a
    # pyenv python3 first on PATH: the import names both interpreters and the way out.
    venv = tmp_path / "venv"
    subprocess.run([PYTHON, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=60)
    py = str(venv / "bin" / "python3")
    r = subprocess.run([py, "-c", "import ardnet"], capture_output=True, text=True, timeout=60,
                       env=clean_env(PYTHONPATH=os.path.join(BUILD, "python")))
    assert r.returncode != 0
    msg = r.stderr.strip().splitlines()[-1]
    b = built_for()
    assert msg.startswith("ImportError: ardnet: the binding in "), r.stderr
    assert "was built for %s (Python %s, %s, numpy %s)" % (
        b["PYTHON"], b["VERSION"], b["SOABI"], b["NUMPY"]) in msg, msg
    assert "this interpreter is %s (" % py in msg and "no numpy" in msg, msg
    assert "Run the program with %s" % b["PYTHON"] in msg, msg
    assert "%s -m pip install numpy" % py in msg, msg
    assert "%s -m pip install --no-build-isolation" % py in msg, msg


def test_other_python_version_is_told_what_to_do(tmp_path):
    # The binding of another Python version (its extension named for that ABI): this
    # interpreter finds no extension of its own; the message names the one it was built for.
    pkg = tmp_path / "site" / "ardnet"
    shutil.copytree(os.path.join(BUILD, "python", "ardnet"), pkg)
    b = built_for()
    for f in os.listdir(pkg):
        if f.startswith("_ardnet.") and f.endswith(".so"):
            os.rename(pkg / f, pkg / f.replace(b["SOABI"], "cpython-399-x86_64-linux-gnu"))
    (pkg / "_build_info.py").write_text(
        'PYTHON = "/opt/python3.99/bin/python3"\nVERSION = "3.99.0"\n'
        'SOABI = "cpython-399-x86_64-linux-gnu"\nNUMPY = "9.0.0"\n')
    r = subprocess.run([PYTHON, "-c", "import ardnet"], capture_output=True, text=True,
                       timeout=60, env=clean_env(PYTHONPATH=str(tmp_path / "site")))
    assert r.returncode != 0
    msg = r.stderr.strip().splitlines()[-1]
    assert ("was built for /opt/python3.99/bin/python3 (Python 3.99.0, "
            "cpython-399-x86_64-linux-gnu, numpy 9.0.0)") in msg, r.stderr
    assert "this interpreter is %s (Python 3." % PYTHON in msg and "numpy 1." in msg, msg
    assert "pip install numpy" not in msg, msg  # it has numpy: no need to get one
    assert "%s -m pip install --no-build-isolation" % PYTHON in msg, msg
    assert "_ardnet" in msg, msg  # the original error is kept


def test_pip_install_in_a_venv(tmp_path, domain):
    # pip builds the binding for the venv's interpreter against its numpy (the system's, as
    # the venv sees system site-packages), with setuptools as Debian ships it, no index.
    tree = tmp_path / "tree"  # pip builds in the source directory: a copy, not the checkout
    for d in ("python", "include", "src/lib", "src/common", "src/log", "src/ros2"):
        shutil.copytree(os.path.join(SOURCE, d), tree / d,
                        ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    venv = tmp_path / "venv"
    subprocess.run([PYTHON, "-m", "venv", "--system-site-packages", str(venv)], check=True,
                   timeout=120)
    py = str(venv / "bin" / "python3")
    r = subprocess.run([py, "-m", "pip", "install", "--no-build-isolation", "--no-index",
                        str(tree / "python")], capture_output=True, text=True, timeout=600,
                       env=clean_env(True, PIP_DISABLE_PIP_VERSION_CHECK="1"))
    assert r.returncode == 0, r.stdout + r.stderr
    r = subprocess.run([py, "-c", ROUND_TRIP, "--ard-spin", "0"], capture_output=True,
                       text=True, timeout=60, cwd=str(tmp_path), env=clean_env(True))
    assert r.returncode == 0, r.stderr
    where, exe, numpy = r.stdout.split()
    assert where.startswith(str(venv / "lib")), where
    assert exe == py and numpy == built_for()["NUMPY"]
    # The recording reader is in the pip-built extension too.
    if LOGWRITE:
        rec = tmp_path / "r.mcap"
        subprocess.run([LOGWRITE, str(rec), "zstd"], check=True, timeout=60)
        r = subprocess.run([py, "-c", "import ardnet, sys; d = ardnet.log.read(sys.argv[1]); "
                            "print(sorted((k, c.count) for k, c in d.items()))", str(rec)],
                           capture_output=True, text=True, timeout=60, env=clean_env(True))
        assert r.returncode == 0 and "('arm.state', 300)" in r.stdout, r.stdout + r.stderr
