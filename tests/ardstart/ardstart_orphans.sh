#!/bin/bash
# Killing the starting shell, ardstart itself or a supervisor never leaves a block
# unaccounted for: the books keep it and ardkill stops it.
TEST_NAME=orph
source "$(dirname "$0")/common.sh"
local_books

echo "== the starting shell is killed with -9 while it runs"
cat >"$T/starter.sh" <<'SH'
#!/bin/bash
ardstart -q --wait=20 -n s1 -- tblock out:o1
ardstart -q --wait=20 -n s2 -- tblock out:o2
echo started >"$1"
exec sleep 1000
SH
chmod +x "$T/starter.sh"
setsid "$T/starter.sh" "$T/flag" &
shell=$!
for i in $(seq 200); do [ -e "$T/flag" ] && break; sleep 0.05; done
[ -e "$T/flag" ] || fail "starter did not start its blocks"
kill -9 -- "-$shell" 2>/dev/null || kill -9 "$shell"
wait "$shell" 2>/dev/null || true
for p in s1 s2; do
    [ "$(field "$p" 4)" = running ] || fail "$p not running after its shell died"
done
s1=$(field s1 3)
s2=$(field s2 3)

echo "== ardstart itself is killed while it waits for readiness"
"$ARDSTART" --wait=60 -n slow -- tblock --delay 60000 out:o3 &
starter=$!
for i in $(seq 200); do [ "$(field slow 4)" = running ] && break; sleep 0.05; done
kill -9 "$starter"
wait "$starter" 2>/dev/null || true
[ "$(field slow 4)" = running ] || fail "slow not in the books after its ardstart died"
slow=$(field slow 3)

echo "== the supervisor is killed with -9: the block runs on, still in the books"
sup=$(grep '^sup=' "$ARD_BOOKS_DIR/$ARD_DOMAIN/e/s1.entry" | cut -d= -f2)
kill -9 "$sup"
sleep 0.2
alive "$s1" || fail "s1 died with its supervisor"
[ "$(field s1 4)" = running ] || fail "s1 not shown running without supervisor"

echo "== a block whose supervisor is gone and that died shows as lost"
"$ARDSTART" -q --wait=20 -n gone -- tblock out:o4
gsup=$(grep '^sup=' "$ARD_BOOKS_DIR/$ARD_DOMAIN/e/gone.entry" | cut -d= -f2)
gpid=$(field gone 3)
kill -9 "$gsup" "$gpid"
wait_state gone lost

echo "== ardkill stops everything that was left"
out=$("$ARDKILL")
echo "$out"
for p in "$s1" "$s2" "$slow"; do
    alive "$p" && fail "pid $p alive after ardkill"
done
grep -q "gone on .*already gone, status unknown" <<<"$out" || fail "lost entry not reported"
[ "$(shm_count)" = 0 ] || fail "shm left"
[ -z "$("$ARDSTART" --list --raw)" ] || fail "entries left"
echo "PASS"
