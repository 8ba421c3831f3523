# shellcheck shell=bash
# pingpong.sh - sourced by run.sh and seal_latency.sh: the routes of the bridged ping-pong
# between hostA and hostB (block "ping" on hostA -> hostB, block "pong" on hostB -> hostA,
# 1 KiB, each input only from the other host).
# pingpong_routes DIR: writes DIR/A.yaml (hostA's ardnet) and DIR/B.yaml (hostB's).
pingpong_routes() {
    cat >"$1/A.yaml" <<Y
routes:
  - in: ping
    out: udp://hostB:7101
    size: 1024
  - in: udp://:7102
    out: pong
    size: 1024
    from: hostB
Y
    cat >"$1/B.yaml" <<Y
routes:
  - in: udp://:7101
    out: ping
    size: 1024
    from: hostA
  - in: pong
    out: udp://hostA:7102
    size: 1024
Y
}
