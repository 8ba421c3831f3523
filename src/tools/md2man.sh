#!/bin/sh
# md2man.sh IN.md OUT.1 - a man page from one of docs/*.md, at build time: headings, paragraphs,
# lists, tables (first column as the tag), code blocks, `code` and **bold**. Only the Markdown
# those pages use; no dependency beyond awk.
set -eu
in=$1
out=$2
awk -v date="$(date -u -r "$in" +%Y-%m-%d 2>/dev/null || echo 1970-01-01)" '
function esc(s) {
    gsub(/\\/, "\\e", s)
    gsub(/-/, "\\-", s)
    return s
}
# Replace each open..close span by pre body post (mawk has no gensub).
function wrap(s, op, cl, pre, post,    out, i, j) {
    out = ""
    while ((i = index(s, op)) > 0) {
        j = index(substr(s, i + length(op)), cl)
        if (j == 0) break
        out = out substr(s, 1, i - 1) pre substr(s, i + length(op), j - 1) post
        s = substr(s, i + length(op) + j - 1 + length(cl))
    }
    return out s
}
function inline(s,    i, j) {
    s = esc(s)
    while (match(s, /!\[[^]]*\]\([^)]*\)/)) s = substr(s, 1, RSTART - 1) substr(s, RSTART + RLENGTH)
    while (match(s, /\[[^]]*\]\([^)]*\)/)) {
        i = substr(s, RSTART, RLENGTH); j = index(i, "](")
        s = substr(s, 1, RSTART - 1) substr(i, 2, j - 2) substr(s, RSTART + RLENGTH)
    }
    s = wrap(s, "**", "**", "\\fB", "\\fR")
    s = wrap(s, "`", "`", "\\fB", "\\fR")
    return s
}
function line(s) {
    if (s ~ /^[.\x27]/) s = "\\&" s
    print s
}
function cells(s,    n, i, a) {
    sub(/^ *\|/, "", s); sub(/\| *$/, "", s)
    n = split(s, a, /\|/)
    for (i = 1; i <= n; i++) { gsub(/^ +| +$/, "", a[i]); cell[i] = a[i] }
    return n
}
BEGIN { code = 0; intable = 0; first = 1; para = 0 }
code {
    if ($0 ~ /^```/) { print ".fi\n.RE"; code = 0; next }
    line(esc($0)); next
}
/^```/ { print ".PP\n.RS 4\n.nf"; code = 1; next }
first && /^# / {
    t = $0; sub(/^# /, "", t)
    name = t; sec = 1; desc = ""
    if (match(t, /\([0-9]\)/)) {
        sec = substr(t, RSTART + 1, 1); name = substr(t, 1, RSTART - 1)
        desc = substr(t, RSTART + RLENGTH); sub(/^: */, "", desc)
    }
    printf ".TH %s %s %s \"ardnet\" \"ardnet manual\"\n", toupper(name), sec, date
    print ".SH NAME"
    if (desc == "") {
        getline; while ($0 == "") getline
        desc = $0
        while ((getline) > 0 && $0 != "") desc = desc " " $0
    }
    printf "%s \\- %s\n", name, inline(desc)
    first = 0; next
}
/^## / { t = $0; sub(/^## /, "", t); print ".SH " toupper(inline(t)); intable = 0; next }
/^### / { t = $0; sub(/^### /, "", t); print ".SS " inline(t); intable = 0; next }
/^ *\|/ {
    n = cells($0)
    if (!intable) { intable = 1; next }            # header row
    if (cell[1] ~ /^-+$/) next                      # separator
    print ".TP"
    line(inline(cell[1]))
    rest = ""
    for (i = 2; i <= n; i++) rest = rest (i > 2 ? "; " : "") cell[i]
    line(inline(rest))
    next
}
/^- / { t = $0; sub(/^- /, "", t); print ".IP \\(bu 2"; line(inline(t)); intable = 0; next }
/^$/ { if (!intable) print ".PP"; intable = 0; next }
/^!\[/ { next }
{ t = $0; sub(/^ +/, "", t); line(inline(t)) }
' "$in" >"$out.tmp"
mv "$out.tmp" "$out"
