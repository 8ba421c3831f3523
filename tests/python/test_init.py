"""ardnet.init: the --ard* options are applied and removed from the list it is given."""

import subprocess
import sys

import pytest

import ardnet
from conftest import PYTHON

T = "f64[2]"


def test_init_strips_the_ard_options_and_applies_them(domain, monkeypatch):
    monkeypatch.setenv("ARD_DOMAIN", domain + "_not")  # --ard-domain must win
    p = ardnet.Port("r", "in", type=T)
    argv = ["prog", "--ard", "r=wired", "keep1", "--ard-domain", domain, "--ard-spin=1000",
            "keep2", b"bytes-too", "--", "--ard", "x=y"]
    assert ardnet.init(argv) is argv  # changed in place, and returned
    assert argv == ["prog", "keep1", "keep2", b"bytes-too", "--", "--ard", "x=y"]
    assert p.connection == "wired" and ardnet.domain() == domain


def test_init_defaults_to_sys_argv(domain, monkeypatch):
    argv = ["prog", "--ard", "r=other", "rest"]
    monkeypatch.setattr(sys, "argv", argv)
    p = ardnet.Port("r", "in", type=T)
    ardnet.init()
    assert sys.argv is argv and argv == ["prog", "rest"] and p.connection == "other"


def test_bad_option_is_an_error_naming_it_and_leaves_the_list(domain):
    p = ardnet.Port("r", "in", type=T)
    argv = ["prog", "--ard-bogus", "1", "x"]
    with pytest.raises(ardnet.Error) as e:
        ardnet.init(argv)
    assert e.value.code == ardnet.EOPTION and "--ard-bogus" in e.value.detail
    assert argv == ["prog", "--ard-bogus", "1", "x"]
    with pytest.raises(ardnet.Error) as e:
        ardnet.init(["prog", "--ard", "nosuch=c"])
    assert e.value.code == ardnet.EOPTION and "nosuch" in e.value.detail
    with pytest.raises(ardnet.Error) as e:
        ardnet.init(["prog", "--ard-prio", "1000"])
    assert e.value.code == ardnet.EOPTION and "--ard-prio" in e.value.detail
    ardnet.init(["prog"])  # a failed init can be retried
    assert p.connection == "r"


def test_init_twice_is_refused(domain):
    ardnet.init([])
    with pytest.raises(ardnet.Error) as e:
        ardnet.init([])
    assert e.value.code == ardnet.ESTATE


def test_init_takes_only_a_list_of_strings(domain):
    with pytest.raises(TypeError):
        ardnet.init(("prog", "--ard-lock"))
    with pytest.raises(TypeError):
        ardnet.init(["prog", 3])


def test_ard_help_lists_the_ports_and_exits_0(domain):
    code = ("import ardnet, sys\n"
            "p = ardnet.Port('state', 'in', type='f64[7] u32')\n"
            "q = ardnet.Port('cmd', 'out', size=12)\n"
            "print('before', end='')\n"  # buffered in Python: init flushes it first
            "ardnet.init(['blk', '--ard', 'state=arm.state', '--ard-help'])\n"
            "print('not reached')\n")
    r = subprocess.run([PYTHON, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("before")
    assert "not reached" not in r.stdout
    lines = [line.split() for line in r.stdout.splitlines()]
    assert ["state", "in", "64", "arm.state", "f64[7]", "u32"] in lines
    assert ["cmd", "out", "12", "cmd", "(opaque)"] in lines
