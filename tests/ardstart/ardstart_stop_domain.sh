#!/bin/bash
# ardkill without a path (the whole domain) on a host that started an entry on another host
# where other entries of the domain still run: the remote entry is stopped without removing
# that host's shared memory at once (the other entries there are still attached to it); the
# host is swept at the end, so everything is stopped, removed and gone from the books, exit 0.
# (Found by the soak run: the remote entry stayed in the books and ardkill exited 111.)
# "Other hosts" are reached through a fake transport that runs the remote command here with
# books of their own; they share /dev/shm, as processes of one host do.
TEST_NAME=stopdom
source "$(dirname "$0")/common.sh"
local_books
D=$ARD_DOMAIN

cat >"$BIN/fakersh" <<SH
#!/bin/bash
h=\$1
shift
ARD_BOOKS_DIR="$T/books_\$h" ARD_HOST=\$h exec bash -c "\$1"
SH
chmod +x "$BIN/fakersh"
export ARD_RSH=fakersh

# On h1: a remote entry started from here, and an entry started there by itself; both use
# connection t.c of h1.
"$ARDSTART" -q --wait=20 -H h1 -n writer -- tblock out:t.c
ARD_BOOKS_DIR="$T/books_h1" ARD_HOST=h1 "$ARDSTART" -q --wait=20 -n reader -- tblock in:t.c
[ -e "/dev/shm/ard.$D.t.c" ] || fail "no connection t.c"

out=$("$ARDKILL" 2>&1) || fail "ardkill of the whole domain failed: $out"
echo "$out"
! grep -q "kept shared memory" <<<"$out" || fail "memory kept while its blocks were being stopped: $out"
grep -q "stopped writer on h1" <<<"$out" && grep -q "stopped reader on h1" <<<"$out" || fail "not both stopped"
n=$(ls "$ARD_BOOKS_DIR/$D/e" "$T/books_h1/$D/e" 2>/dev/null | grep -c '\.entry$' || true)
[ "$n" = 0 ] || fail "$n entries left in the books"
[ "$(shm_count)" = 0 ] || fail "shared memory of $D left: $(ls /dev/shm | grep "^ard\.$D\.")"
[ -z "$(domain_pids tblock "$D")" ] || fail "blocks left"

echo "== with a path and -u, the memory of the hosts reached is removed at once (as before)"
"$ARDSTART" -q --wait=20 -H h1 -n w2 -- tblock out:t.d
"$ARDKILL" -q -u w2 || fail "ardkill -u w2 failed"
[ ! -e "/dev/shm/ard.$D.t.d" ] || fail "ardkill -u w2 left t.d"
echo "ok"
