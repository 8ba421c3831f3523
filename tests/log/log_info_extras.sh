#!/bin/bash
# log_info_extras.sh - `ard info` lists the attachments and metadata records of any MCAP file
# (another program's attachment, ardnet's own metadata), in text and JSON, and gives a file
# without messages no start time (not 1970).
TEST_NAME=infox
. "$(dirname "$0")/common.sh"
[ -n "${TMCAPGEN:-}" ] || { echo "SKIP: tmcapgen not built (liblz4-dev missing)" >&2; exit 77; }

"$TMCAPGEN" "$T/foreign.mcap" foreign || fail "tmcapgen"
"$ARD" info "$T/foreign.mcap" >"$T/f.txt" || fail "info foreign: $(cat "$T/f.txt")"
grep -qx 'attachments: 1' "$T/f.txt" || fail "attachment count: $(cat "$T/f.txt")"
grep -qE '^  calib\.yaml +text/yaml +5 bytes$' "$T/f.txt" || fail "attachment: $(cat "$T/f.txt")"
grep -qx 'metadata:    0 records' "$T/f.txt" || fail "metadata of foreign: $(cat "$T/f.txt")"
"$ARD" info --json "$T/foreign.mcap" | python3 -c "
import json, sys
d = json.load(sys.stdin)
assert d['attachments'] == [{'name': 'calib.yaml', 'media_type': 'text/yaml', 'size': 5,
    'log_ns': d['attachments'][0]['log_ns'], 'create_ns': d['attachments'][0]['create_ns']}], d
assert d['attachments'][0]['log_ns'] > 0 and d['metadata'] == [], d" ||
    fail "json foreign: $("$ARD" info --json "$T/foreign.mcap")"

# ardnet's own metadata: the recording's host and domain, the per-connection totals.
"$ARD" set m.x --type 'v:f64' v=1
"$ARD" record m.x -o "$T/m.mcap" --duration 0.2 2>/dev/null
"$ARD" info "$T/m.mcap" >"$T/m.txt"
grep -qx 'metadata:    2 records' "$T/m.txt" || fail "metadata count: $(cat "$T/m.txt")"
grep -qx "    domain = $ARD_DOMAIN" "$T/m.txt" || fail "ardnet metadata: $(cat "$T/m.txt")"
grep -qx "    m.x.recorded = 1" "$T/m.txt" || fail "ardnet.connections: $(cat "$T/m.txt")"
"$ARD" info --json "$T/m.mcap" | python3 -c "
import json, sys
d = json.load(sys.stdin)
m = {r['name']: r['values'] for r in d['metadata']}
assert m['ardnet']['domain'] == sys.argv[1] and m['ardnet.connections']['m.x.type'] == 'v:f64', m
assert d['start_ns'] > 1.7e18, d" "$ARD_DOMAIN" || fail "json metadata: $("$ARD" info --json "$T/m.mcap")"

# No messages: no start time.
rc=0
"$ARD" record nothing.here -o "$T/empty.mcap" --duration 0.2 2>/dev/null || rc=$?
[ $rc = 4 ] || fail "empty recording exited $rc"
"$ARD" info "$T/empty.mcap" >"$T/e.txt" || fail "info empty"
grep -qx 'start:       - (no messages)' "$T/e.txt" || fail "start of an empty file: $(cat "$T/e.txt")"
grep -q 1970 "$T/e.txt" && fail "1970: $(cat "$T/e.txt")"
"$ARD" info --json "$T/empty.mcap" | python3 -c "
import json, sys
d = json.load(sys.stdin)
assert d['messages'] == 0 and d['start_ns'] is None and d['end_ns'] is None, d" ||
    fail "json empty: $("$ARD" info --json "$T/empty.mcap")"
echo ok
