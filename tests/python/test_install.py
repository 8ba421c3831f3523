"""cmake --install puts the package where python3 finds it."""

import os
import subprocess
import sys

BUILD = os.environ.get("ARD_BUILD_DIR", "")
SUBDIR = os.environ.get("ARD_PYTHON_INSTALL_DIR", "")
PYTHON = os.environ.get("ARD_TEST_PYTHON", sys.executable)


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
    assert "__init__.py" in files and any(f.startswith("_ardnet.") and f.endswith(".so")
                                          for f in files), files
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
