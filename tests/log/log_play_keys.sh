#!/bin/bash
# log_play_keys.sh - `ard play` in a terminal (a pty): --start-paused sends nothing, `s` steps
# one packet, `+`/`-` change the rate in the status line, space resumes; the terminal's mode
# is restored at the end, after SIGTERM and after SIGHUP. Without a terminal, SIGUSR1
# resumes. --clock publishes the playback time (rate 0 while paused). --start beyond the
# end, --start after --end and a repeated --remap are refused.
TEST_NAME=keys
. "$(dirname "$0")/common.sh"
# expect CODE TEXT CMD...: CMD exits with CODE and its stderr contains TEXT.
expect() {
    local code=$1 text=$2 rc=0
    shift 2
    "$@" >"$T/out" 2>"$T/err" || rc=$?
    [ "$rc" = "$code" ] || fail "'$*' exited $rc, expected $code; stderr: $(cat "$T/err")"
    grep -qF -- "$text" "$T/err" || fail "'$*': stderr lacks '$text': $(cat "$T/err")"
}
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "SKIP: no /usr/bin/python3 for the pty" >&2; exit 77; }

# A recording: about 100 packets at 100 Hz, n = 0, 1, 2, ...
timeout 20 "$ARD" record c -o "$T/f.mcap" --duration 1.8 2>/dev/null &
rp=$!
sleep 0.3
"$ARD" siggen c --type 'n:u32' 'n=ramp,amplitude=100' --rate 100 -n 100
wait $rp
N=$("$ARD" info --json "$T/f.mcap" | $PY -c 'import json,sys; print(json.load(sys.stdin)["messages"])')
[ "$N" -ge 90 ] || fail "recording: $("$ARD" info "$T/f.mcap")" # siggen skips missed periods
first_real=$("$ARD" export "$T/f.mcap" --csv | awk -F, 'NR == 2 { print $2 }')

expect 100 "--start 5 is beyond the end of '$T/f.mcap' (0.9" "$ARD" play "$T/f.mcap" --start 5
expect 100 "--start 0.5 is after --end 0.2" "$ARD" play "$T/f.mcap" --start 0.5 --end 0.2
expect 100 "--remap 'c=d' and 'c=e': 'c' remapped twice" "$ARD" play "$T/f.mcap" --remap c=d --remap c=e
expect 100 "--remap '=e': expected OLD=NEW" "$ARD" play "$T/f.mcap" --remap =e
expect 100 "--clock needs a value" "$ARD" play "$T/f.mcap" --clock

# In a pty: keys, status, and the terminal restored.
timeout 60 $PY - "$ARD" "$T/f.mcap" "$N" <<'PY' || fail "pty"
import os, pty, sys, time, json, subprocess, signal, re, select
ard, f, N = sys.argv[1], sys.argv[2], int(sys.argv[3])

def run(script):
    pid, fd = pty.fork()
    if pid == 0:
        os.execv("/bin/sh", ["sh", "-c", script, "sh", ard, f])
    return pid, fd

def read_until(fd, pat, out, timeout=5):
    end = time.time() + timeout
    while time.time() < end:
        if re.search(pat, out):  # an earlier read may have brought it already
            return out
        if not select.select([fd], [], [], 0.2)[0]:
            continue
        try:
            b = os.read(fd, 4096)
        except OSError:
            break
        if not b:
            break
        out += b.decode(errors="replace")
    if re.search(pat, out):
        return out
    raise SystemExit("no %r in output: %r" % (pat, out))

def show(conn):
    p = subprocess.run([ard, "show", conn, "--json"], capture_output=True, text=True)
    return p.returncode, (json.loads(p.stdout) if p.returncode == 0 else p.stderr)

pid, fd = run('"$1" play "$2" --start-paused --remap c=p -q; echo "rc=$?"; stty -a')
out = read_until(fd, r"\[paused\] +0\.000 / 0\.9\d\d s  rate 1x  packets 0", "")
time.sleep(0.3)
rc, _ = show("p")
assert rc == 4, "paused, yet something was sent: %s" % rc
os.write(fd, b"s")
out = read_until(fd, r"packets 1\b", out)
rc, d = show("p")
assert rc == 0 and d["seq"] == 1 and d["fields"]["n"] == 0, d
os.write(fd, b"s")
out = read_until(fd, r"packets 2\b", out)
assert show("p")[1]["fields"]["n"] == 1
os.write(fd, b"+")
out = read_until(fd, r"rate 1\.1x", out)
os.write(fd, b"--")
out = read_until(fd, r"rate 0\.909x", out)
time.sleep(0.3)
assert show("p")[1]["seq"] == 2, "still paused"
os.write(fd, b" ")
out = read_until(fd, r"rc=0", out)
out = read_until(fd, r"extproc", out)
assert re.search(r"\[playing\] .*packets %d" % N, out), out
assert show("p")[1]["seq"] == N
assert re.search(r"(?<!-)icanon", out) and re.search(r"(?<![-\w])echo\b", out), "terminal not restored: " + out
os.waitpid(pid, 0)

# SIGTERM and SIGHUP while paused: the terminal comes back either way.
for sig, want in ((signal.SIGTERM, 0), (signal.SIGHUP, 128 + signal.SIGHUP)):
    pid, fd = run('exec 3<&0; "$1" play "$2" --start-paused -q <&3 & echo "pid=$!"; wait $!; '
                  'echo "rc=$?"; stty -a')
    out = read_until(fd, r"\[paused\]", "")
    apid = int(re.search(r"pid=(\d+)", out).group(1))
    os.kill(apid, sig)
    out = read_until(fd, r"extproc", out)
    assert "rc=%d" % want in out, (sig, out)
    assert re.search(r"(?<!-)icanon", out) and re.search(r"(?<![-\w])echo\b", out), \
        "terminal not restored after %s: %s" % (sig, out)
    os.waitpid(pid, 0)
print("pty: ok")
PY

# No terminal: --start-paused holds until SIGUSR1; --clock says where playback is.
"$ARD" play "$T/f.mcap" --start-paused --remap c=q --clock clk -q </dev/null &
pp=$!
PIDS+=($pp)
wait_for "$ARD" show clk
sleep 0.2
expect 4 "nothing was sent yet" "$ARD" show q
"$ARD" show clk --json | $PY -c "
import json, sys
d = json.load(sys.stdin)
f = d['fields']
assert f['rate'] == 0 and f['time_ns'] == d['real_ns'], d
assert abs(f['time_ns'] / 1e9 - float(sys.argv[1])) < 1e-5, (d, sys.argv[1])" "$first_real" ||
    fail "clock while paused: $("$ARD" show clk --json), first packet at $first_real"
kill -USR1 $pp
timeout 10 tail --pid=$pp -f /dev/null || fail "play did not end after SIGUSR1"
wait $pp || fail "play after SIGUSR1 exited $?"
[ "$("$ARD" show q --json | $PY -c 'import json,sys; print(json.load(sys.stdin)["seq"])')" = "$N" ] ||
    fail "SIGUSR1 did not resume"

# Completion knows the new options.
ard() { "$ARD" "$@"; } # the completion asks ard for the options
. "$SRCDIR/src/tools/ard.bash"
COMP_WORDS=(ard play f --start-p) COMP_CWORD=3
_ard || true
[ "${COMPREPLY[*]}" = --start-paused ] || fail "completion of --start-p: ${COMPREPLY[*]}"
echo ok
