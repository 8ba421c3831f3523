#!/bin/bash
# ard_siggen.sh - `ard siggen` values follow their formulas: every shape, amplitude,
# frequency, phase and offset, from the command line and from a YAML file; t (a ramp of slope
# 1) gives each packet's time, the other fields are checked against the formula at that t.
# Noise stays within its bounds (uniform) and has about the right mean and spread (gaussian).
# Fields not generated keep their last value; bad configurations are refused with the cause.
TEST_NAME=siggen
. "$(dirname "$0")/common.sh"
[ -x /usr/bin/python3 ] || exit 77

TYPE='t:f64 s:f64 c:f32 sq:f64 tri:f64 saw:f64 st:f64 rp:f64 ch:f64 u:f64 g:f64 k:i32 keep:u16 arr:f64[2]'
# Created with its type; keep is set by hand first and must survive.
"$ARD" siggen sig --type "$TYPE" -n 1 t=ramp >/dev/null || fail "siggen --type"
"$ARD" set sig keep=4242 || fail "set keep"
base=$("$ARD" show sig --json | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["seq"])')
# The reader follows from before the generator starts until after it ended.
follow() { # follow OUTFILE [--field ...]: ard show -f in the background, attached when it returns
    local out=$1
    shift
    "$ARD" show sig -f --json "$@" >"$out" &
    S=$!
    PIDS+=($S)
    wait_for grep -q seq "$out"
}
follow "$T/pk"
"$ARD" siggen sig --rate 500 -n 1500 --seed 7 t=ramp \
    's=sine,amp=2,freq=3,phase=0.5,offset=1' 'c=cosine,amp=1.5,freq=2' \
    'sq=square,amp=3,freq=4,offset=-1' 'tri=triangle,freq=2.5,phase=1' 'saw=sawtooth,amp=2,freq=1.5' \
    'st=step,amp=5,at=1.2,offset=1' 'rp=ramp,amp=0.5,offset=2' 'ch=chirp,freq=1,f1=5,T=2' \
    'u=uniform,amp=0.5,offset=10' 'g=gaussian,amp=2,offset=-3' k=-17 'arr=sine,freq=1' ||
    fail "siggen exited non-zero"
sleep 0.3
kill -INT "$S"
wait "$S" || fail "show -f"
/usr/bin/python3 - "$T/pk" "$base" <<'PY' || fail "values do not follow the formulas"
import json, math, sys
# Only the generator's packets: show -f starts with the newest one there was (set's).
pk = [d["fields"] for d in map(json.loads, open(sys.argv[1])) if d["seq"] > int(sys.argv[2])]
assert len(pk) >= 100, len(pk)
frac = lambda x: x - math.floor(x)
def near(name, got, want, t, tol=1e-9):
    if abs(got - want) > tol * max(1, abs(want)):
        raise SystemExit(f"{name} at t={t}: {got}, formula gives {want}")
us, gs = [], []
for f in pk:
    t = f["t"]
    near("sine", f["s"], 1 + 2 * math.sin(2 * math.pi * 3 * t + 0.5), t)
    near("cosine", f["c"], 1.5 * math.cos(2 * math.pi * 2 * t), t, 1e-6)
    x = frac(4 * t)
    if 1e-9 < x < 0.5 - 1e-9 or x > 0.5 + 1e-9:
        near("square", f["sq"], -1 + 3 * (1 if x < 0.5 else -1), t)
    x = frac(2.5 * t + 1 / (2 * math.pi))
    near("triangle", f["tri"], 1 - 4 * abs(x - 0.5), t, 1e-6)
    x = frac(1.5 * t)
    if x > 1e-9 and x < 1 - 1e-9:
        near("sawtooth", f["saw"], 2 * (2 * x - 1), t, 1e-6)
    if abs(t - 1.2) > 1e-9:
        near("step", f["st"], 1 + (5 if t >= 1.2 else 0), t)
    near("ramp", f["rp"], 2 + 0.5 * t, t)
    u = math.fmod(t, 2)
    near("chirp", f["ch"], math.sin(2 * math.pi * (u + 4 * u * u / 4)), t, 1e-6)
    assert 9.5 <= f["u"] <= 10.5, f["u"]
    us.append(f["u"]); gs.append(f["g"])
    assert f["k"] == -17 and f["keep"] == 4242, f
    for e in f["arr"]:
        near("arr", e, math.sin(2 * math.pi * t), t)
n = len(gs)
mean = sum(gs) / n
std = math.sqrt(sum((g - mean) ** 2 for g in gs) / (n - 1))
assert abs(mean + 3) < 0.5 and 1.5 < std < 2.5, (mean, std)
assert max(us) - min(us) > 0.5, "uniform noise does not vary"
ts = [f["t"] for f in pk]
assert ts == sorted(ts) and ts[-1] > 1.5, "t runs on"
PY

# The same from YAML: a sine at a quarter-period phase equals a cosine.
cat >"$T/sig.yaml" <<YAML
connection: sig
rate: 200
seed: 3
signals:
  t: ramp
  s: {shape: sine, amplitude: 1, frequency: 2, phase: 1.5707963267948966}
  c: {shape: cosine, frequency: 2}
  k: 5
YAML
base=$("$ARD" show sig --json | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["seq"])')
follow "$T/pk2" --field t --field s --field c --field k
"$ARD" siggen --config "$T/sig.yaml" -n 300 || fail "siggen --config"
sleep 0.3
kill -INT "$S"
wait "$S" || fail "show -f"
/usr/bin/python3 - "$T/pk2" "$base" <<'PY' || fail "yaml values"
import json, math, sys
for l in open(sys.argv[1]):
    d = json.loads(l)
    if d["seq"] <= int(sys.argv[2]):
        continue
    f = d["fields"]
    assert abs(f["s"] - math.cos(4 * math.pi * f["t"])) < 1e-9, f
    assert abs(f["c"] - math.cos(4 * math.pi * f["t"])) < 1e-6, f
    assert f["k"] == 5
PY

# Bad configurations.
expect 100 "constant '1e400' is out of range for f64" "$ARD" siggen sig s=1e400
expect 100 "unknown shape 'sin'" "$ARD" siggen sig s=sin
expect 100 "unknown key 'ampl'" "$ARD" siggen sig 's=sine,ampl=3'
expect 100 "field 'zz' does not exist" "$ARD" siggen sig zz=sine
expect 100 "no signals given" "$ARD" siggen sig
expect 100 "--rate" "$ARD" siggen sig --rate 0 s=sine
expect 100 "exists with type" "$ARD" siggen sig --type 'a:u8' s=sine
printf 'connection: sig\nsignals:\n  s: {amplitude: 2}\n' >"$T/bad1.yaml"
expect 100 "no shape given" "$ARD" siggen --config "$T/bad1.yaml"
printf 'connection: sig\nfrobs: 3\n' >"$T/bad2.yaml"
expect 100 "bad2.yaml:2: unknown key 'frobs'" "$ARD" siggen --config "$T/bad2.yaml"
printf 'connection: [sig\n' >"$T/bad3.yaml"
expect 100 "bad3.yaml" "$ARD" siggen --config "$T/bad3.yaml"
expect 100 "cannot open" "$ARD" siggen --config "$T/none.yaml"
# Nesting is refused before the file is loaded, as by the other loaders.
printf 'connection: sig\nsignals:\n  s: %s1%s\n' "$(printf '[%.0s' $(seq 100000))" \
    "$(printf ']%.0s' $(seq 100000))" >"$T/deep.yaml"
expect 100 "deep.yaml:3:12: nested deeper than 8 levels" "$ARD" siggen --config "$T/deep.yaml"
echo ok
