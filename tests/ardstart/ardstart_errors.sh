#!/bin/bash
# Every documented exit code of ardstart and ardkill, and the message for each kind of bad
# input: bad options and values (100), books that cannot be made (111), a host that cannot
# be reached or has no ardstart (4), remote results passed through, ardkill's unreachable
# host (2) and a process it may not signal (1, as root only). "Other hosts" are reached
# through a fake transport that runs the remote command here with books of its own.
TEST_NAME=err
source "$(dirname "$0")/common.sh"
local_books
D=$ARD_DOMAIN

# fakersh HOST CMD: CMD run here as on HOST (books $T/books_HOST); host "down" cannot be
# reached (exit 255, as ssh), host "bare" has no ardstart in its PATH (127).
cat >"$BIN/fakersh" <<SH
#!/bin/bash
h=\$1
shift
case \$h in
down) echo "fakersh: connect to \$h: No route to host" >&2; exit 255 ;;
bare) PATH=/usr/bin:/bin ;;
esac
ARD_BOOKS_DIR="$T/books_\$h" exec bash -c "\$1"
SH
chmod +x "$BIN/fakersh"
export ARD_RSH=fakersh

echo "== ardstart usage errors: exit 100, the message names the value and the cause"
expect_fail 100 "unknown option '--bogus'" "$ARDSTART" --bogus -- true
expect_fail 100 "usage: ardstart" "$ARDSTART"
expect_fail 100 "name 'a b': character ' '" "$ARDSTART" -n 'a b' -- true
expect_fail 100 "is longer than 63 characters" "$ARDSTART" -n "$(printf 'x%.0s' $(seq 64))" -- true
expect_fail 100 "name '..' is not allowed" "$ARDSTART" -n .. -- true
expect_fail 100 "parent: path 'a//b': names must be joined by single '/'" "$ARDSTART" -p a//b -- true
expect_fail 100 "domain name 'a.b': character '.'" "$ARDSTART" -d a.b -- true
expect_fail 100 "--wait '0': expected seconds > 0" "$ARDSTART" --wait=0 -- true
expect_fail 100 "--wait 'soon': expected seconds > 0" "$ARDSTART" --wait=soon -- true
expect_fail 100 "--wait '1e9': expected seconds > 0, at most 86400" "$ARDSTART" --wait=1e9 -- true
expect_fail 100 "--env 'NOVALUE': expected NAME=VALUE" "$ARDSTART" -E NOVALUE -- true
expect_fail 100 "host '': must have 1 to 255 characters" "$ARDSTART" -H '' -- true
expect_fail 100 "host '-oProxyCommand=x': must not start with '-'" "$ARDSTART" -H -oProxyCommand=x -- true
expect_fail 100 "host 'a b': character ' '" "$ARDSTART" -H 'a b' -- true
expect_fail 100 "transport 'fakersh 'x': unbalanced '" "$ARDSTART" -H h1 -e "fakersh 'x" -- true
expect_fail 100 "usage: ardstart" "$ARDSTART" --list a b
expect_fail 100 "usage: ardstart" "$ARDSTART" --log
expect_fail 100 "no entry 'nosuch' in domain $D here" "$ARDSTART" --log nosuch
expect_fail 100 "--system takes no command" "$ARDSTART" --system x.yaml -- true
expect_fail 100 "cannot open '$T/none.yaml': No such file" "$ARDSTART" --system "$T/none.yaml"
expect_fail 100 "--set-host 'sim': expected ROLE=HOST" "$ARDSTART" --set-host sim --system x.yaml
expect_fail 100 "--set-host 'a;b': character ';'" "$ARDSTART" --set-host 'sim=a;b' --system x.yaml
expect_fail 100 "--as-host 'x y'" "$ARDSTART" --as-host 'x y' -- true

echo "== a usage error is said once, in one line (the helpers fail, main prints)"
for args in "--bogus -- true" "-E NOVALUE -- true" "-p a//b -- true" "--wait=0 -- true" \
    "--restart=x -- true" "--set-host sim --system x.yaml" "-n .. -- true"; do
    # shellcheck disable=SC2086
    expect_fail 100 "ardstart: " "$ARDSTART" $args
    [ "$(wc -l <<<"$err")" = 1 ] || fail "not one line for '$args': $err"
done
expect_fail 100 "ardkill: " "$ARDKILL" --bogus
[ "$(wc -l <<<"$err")" = 1 ] || fail "not one line for ardkill --bogus: $err"

echo "== --help: the options' table, without the options one level passes to the next"
help=$("$ARDSTART" --help) || fail "ardstart --help"
for want in "usage: ardstart [OPTIONS] [--] COMMAND" "  -w, --wait[=SECONDS]     return when" \
    "                           time only attached: --wait=5 or -w5)" \
    "  --restart-limit N/S      give up" "exit codes: 0 ok, 1 cannot execute"; do
    grep -qF -- "$want" <<<"$help" || fail "ardstart --help lacks '$want': $help"
done
if grep -qe "--cwd-if-exists" -e "--as-host" <<<"$help"; then fail "ardstart --help: $help"; fi
help=$("$ARDKILL" -h) || fail "ardkill -h"
for want in "usage: ardkill [OPTIONS] [PATH...]" "  -g, --grace SECONDS     time between" \
    "exit codes: 0 stopped"; do
    grep -qF -- "$want" <<<"$help" || fail "ardkill --help lacks '$want': $help"
done
if grep -qe "--visited" -e "--as-host" <<<"$help"; then fail "ardkill --help: $help"; fi
[ -z "$("$ARDSTART" --list --raw)" ] || fail "a refused start left an entry"

echo "== ardstart system error: books that cannot be made, exit 111"
expect_fail 111 "cannot create books directory '/dev/null/b': Not a directory" \
    env ARD_BOOKS_DIR=/dev/null/b "$ARDSTART" -n x -- true

echo "== stdout and stderr closed: the command's output still goes to its log"
"$ARDSTART" -n closed -- sh -c 'echo to-the-log; echo err-to-the-log >&2' >&- 2>&-
wait_state closed exited 0
log=$("$ARDSTART" --log closed)
grep -q '^to-the-log$' "$log" || fail "stdout of the command not in $log: $(cat "$log")"
grep -q '^err-to-the-log$' "$log" || fail "stderr of the command not in $log"
[ ! -s "$ARD_BOOKS_DIR/$D/lock" ] || fail "output went into the books' lock file"

echo "== another host: unreachable or without ardstart is exit 4, and nothing is recorded"
expect_fail 4 "ardstart: x: cannot reach host down through 'fakersh'" "$ARDSTART" -H down -n x -- true
expect_fail 4 "ardstart: x: no ardstart on host bare (set --remote-bindir or ARD_REMOTE_BINDIR)" \
    "$ARDSTART" -H bare -n x -- true
expect_fail 4 "ardstart: x: cannot execute 'no-such-rsh': No such file" \
    "$ARDSTART" -H h1 -e no-such-rsh -n x -- true
[ -z "$("$ARDSTART" --list --raw x)" ] || fail "x recorded although it never started"

echo "== another host: its exit codes come back (1, 2, 5), its entry is listed"
expect_fail 1 "cannot execute '/nonexistent/prog'" "$ARDSTART" -H h1 -n nope -- /nonexistent/prog
[ "$(field nope 2) $(field nope 4)" = "h1 failed" ] || fail "nope: $(field nope 2) $(field nope 4)"
expect_fail 2 "exited 3 before it was ready" "$ARDSTART" --wait=20 -H h1 -n early -- sh -c 'exit 3'
"$ARDSTART" -q --wait=20 -H h1 -n r1 -- tblock out:r1.x || fail "start of r1 on h1"
[ -e "$T/books_h1/$D/e/r1.entry" ] || fail "r1 not in h1's books"
# The path is taken on h1 (its own books refuse), the remote entry here stays as it was.
seq=$(grep '^seq=' "$ARD_BOOKS_DIR/$D/e/r1.entry")
ARD_BOOKS_DIR="$T/books_other" expect_fail 5 "'r1' is already running here" \
    "$ARDSTART" -H h1 -n r1 -- tblock out:r1.y
expect_fail 5 "'r1' is already started on host h1; stop it first (ardkill r1)" \
    "$ARDSTART" -n r1 -- true
[ "$(grep '^seq=' "$ARD_BOOKS_DIR/$D/e/r1.entry")" = "$seq" ] || fail "r1's entry changed"

echo "== ardkill usage errors: exit 100"
expect_fail 100 "unknown option '--bogus'" "$ARDKILL" --bogus
expect_fail 100 "--grace '-1': expected seconds >= 0" "$ARDKILL" --grace=-1 x
expect_fail 100 "--grace 'x': expected seconds >= 0" "$ARDKILL" -g x x
expect_fail 100 "path 'a/': names must be joined by single '/'" "$ARDKILL" a/
expect_fail 100 "entry name 'b c'" "$ARDKILL" 'a/b c'
expect_fail 100 "domain name 'a.b': character '.'" "$ARDKILL" -d a.b
expect_fail 100 "--as-host '-x': must not start with '-'" "$ARDKILL" --as-host=-x r1

echo "== ardkill system error: exit 111"
expect_fail 111 "cannot open books directory '/dev/null/b': Not a directory" \
    env ARD_BOOKS_DIR=/dev/null/b "$ARDKILL" x

echo "== ardkill of an entry whose host cannot be reached: exit 2, the entry is kept"
r1=$(ARD_BOOKS_DIR="$T/books_h1" field r1 3)
alive "$r1" || fail "r1 not running"
expect_fail 2 "cannot reach host h1 through 'fakersh down'; r1 there is not stopped" \
    "$ARDKILL" -e 'fakersh down' r1
alive "$r1" || fail "r1 stopped although its host was unreachable"
[ -e "$ARD_BOOKS_DIR/$D/e/r1.entry" ] || fail "the remote entry of r1 was dropped"
out=$("$ARDKILL" r1) || fail "ardkill r1 through the recorded transport"
grep -q "stopped r1 on h1" <<<"$out" || fail "r1 stop not reported: $out"
alive "$r1" && fail "r1 alive after ardkill"

if [ "$(id -u)" = 0 ]; then
    echo "== ardkill of a process it may not signal: exit 1, the entry is kept"
    sleep 600 >/dev/null 2>&1 &
    victim=$!
    TEST_PIDS+=("$victim")
    chmod o+x "$T" # nobody reaches its books below it, nothing else
    nb="$T/books_nobody"
    (umask 077 && mkdir -p "$nb/$D/e") # books are private: mode 0700
    start=$(awk '{ sub(/.*\) /, ""); split($0, f, " "); print f[20] }' "/proc/$victim/stat")
    printf 'path=v\nhost=here\nremote=0\nseq=1\nstate=running\ncode=0\npid=%s\npid_start=%s\npgid=%s\npgid_start=%s\nsup=0\nsup_start=0\nstart_ns=1\nend_ns=0\ncmd=sleep 600\nlog=/dev/null\n' \
        "$victim" "$start" "$victim" "$start" >"$nb/$D/e/v.entry"
    chown -R nobody "$nb"
    # nobody runs a copy of ardkill: the build tree may be out of its reach (under /root).
    nbin="$T/bin_nobody" # removed with $T
    mkdir -m 755 "$nbin"
    cp "$ARDKILL" "$nbin/ardkill"
    chmod 755 "$nbin/ardkill"
    expect_fail 1 "ardkill: v on here (pid $victim, group $victim) still alive 5 s after SIGKILL" \
        setpriv --reuid=nobody --regid=nogroup --clear-groups \
        env ARD_BOOKS_DIR="$nb" ARD_HOST=here "$nbin/ardkill" -g 0 v
    rm -rf "$nbin"
    alive "$victim" || fail "the victim died"
    [ -e "$nb/$D/e/v.entry" ] || fail "the entry of a survivor was removed"
    kill "$victim"
    wait "$victim" 2>/dev/null || true
fi

echo "== ardkill of everything reaches the other host's books too"
"$ARDSTART" -q --wait=20 -H h1 -n r2 -- tblock out:r2.x || fail "start of r2 on h1"
"$ARDKILL" -q || fail "ardkill of everything"
[ -z "$(ls "$T/books_h1/$D/e")" ] || fail "entries left on h1: $(ls "$T/books_h1/$D/e")"
[ -z "$(domain_pids ardstart_tblock "$D")" ] || fail "tblocks of this test still run"

echo "== a damaged entry is named and passed over: the others are listed and stopped (111)"
"$ARDSTART" -q --wait=20 -n good -- tblock out:good.x || fail "start of good"
good=$(field good 3)
printf 'path=bad\nstate=running\npid=many\n' >"$ARD_BOOKS_DIR/$D/e/bad.entry"
damaged="books entry '$ARD_BOOKS_DIR/$D/e/bad.entry' is damaged: bad value 'many' for pid"
expect_fail 111 "$damaged" "$ARDSTART" --list
raw=$("$ARDSTART" --list --raw 2>/dev/null) || true
grep -q "^good" <<<"$raw" || fail "good not listed beside a damaged entry"
expect_fail 111 "$damaged; 1 such entry not stopped" "$ARDKILL"
alive "$good" && fail "good not stopped beside a damaged entry"
rm "$ARD_BOOKS_DIR/$D/e/bad.entry"
echo "PASS"
