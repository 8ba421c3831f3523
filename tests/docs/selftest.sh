#!/bin/bash
# selftest.sh - doccheck.sh fails where it must: untagged blocks (lint), and, when run as
# root, a block exiting otherwise than the doc says, output that differs, a C block that does
# not compile; and it passes a file whose blocks are right (77 = the run part skipped).
set -uo pipefail
check=$(cd "$(dirname "$0")/../.." && pwd)/scripts/doccheck.sh
T=$(mktemp -d /tmp/doccheck-self.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() {
    echo "FAIL: $*" >&2
    exit 1
}
f='```'

cat >"$T/untagged.md" <<DOC
# lint

${f}sh
echo untagged
${f}

${f}
no language
${f}

${f}c norun:
int x;
${f}

Text.

    an indented block

- a list

    a list item's paragraph, not a code block

${f}text
fine
${f}
DOC
out=$(bash "$check" --lint "$T/untagged.md" 2>&1) && fail "lint passed an untagged file: $out"
for want in "untagged.md:3: \`\`\`sh: a shell block needs 'run' or 'norun: REASON'" \
    "untagged.md:7: \`\`\`: a fence without a language" \
    "untagged.md:11: \`\`\`c norun:: norun: needs a reason" \
    "untagged.md:17: an indented code block" \
    "4 problem(s)"; do
    grep -qF "$want" <<<"$out" || fail "lint: no '$want' in: $out"
done
echo "lint: ok"

if [ "$(id -u)" != 0 ]; then
    echo "not root: the run part is not tested"
    exit 77
fi
cat >"$T/wrong.md" <<DOC
${f}sh run
echo one; exit 3
${f}

${f}sh run exit=4
echo two
exit 4
${f}

${f}text output
two
${f}

${f}sh run
printf 'a 1\nb 2\nc 3\n'
${f}

${f}text output
a ...
c 3
${f}

${f}c run
int main(void) { return undeclared; }
${f}

${f}c run main exit=5
if (ard_strerror(ARD_EINVAL) == NULL) return 1;
return 5;
${f}
DOC
out=$(bash "$check" "$T/wrong.md" 2>&1) && fail "doccheck passed wrong.md: $out"
for want in "wrong.md:1: exited 3, the doc says 0" "wrong.md:18: the output differs" \
    "wrong.md:23: the C block does not compile" "FAIL: 3 problem(s)"; do
    grep -qF "$want" <<<"$out" || fail "run: no '$want' in: $out"
done
echo "run, wrong blocks: ok"

# The right blocks of wrong.md alone pass.
{
    sed -n '5,16p' "$T/wrong.md"
    printf '%stext output\na ...\n...\n%s\n' "$f" "$f"
    sed -n '27,30p' "$T/wrong.md"
} >"$T/right.md"
out=$(bash "$check" "$T/right.md" 2>&1) || fail "doccheck failed right.md: $out"
grep -qF "PASS: 3 blocks run" <<<"$out" || fail "right.md: $out"
echo "run, right blocks: ok"
echo PASS
