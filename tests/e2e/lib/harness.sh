# SPDX-License-Identifier: MIT
# The e2e scripts' common harness, sourced (not a test itself: CMake collects tests/e2e/*.sh
# only). Gives $tmp (removed at exit, after the script's own e2e_cleanup when it defines one),
# counters, and the checks; a script ends with `finish`.
tmp=$(mktemp -d)
e2e_exit() {
    if command -v e2e_cleanup >/dev/null 2>&1; then e2e_cleanup; fi
    rm -rf "$tmp"
}
trap e2e_exit EXIT
pass=0; failn=0; skipn=0
ok() { pass=$((pass + 1)); }
bad() { failn=$((failn + 1)); echo "FAIL: $*"; }
# skip REASON: checks that cannot run here (a tool, root) are counted apart, with the reason
skip() { skipn=$((skipn + 1)); echo "SKIP: $*"; }
# expect STATUS CMD...: run, keep stdout/stderr in $tmp/out and $tmp/err, compare the exit status
expect() {
    want=$1; shift
    "$@" >"$tmp/out" 2>"$tmp/err"; got=$?
    if [ "$got" = "$want" ]; then ok; else bad "exit $got (want $want): $*"; sed 's/^/  | /' "$tmp/err" | head -5; fi
}
# has out|err TEXT: the last command's stdout or stderr holds TEXT (a regex, anywhere: for the
# words of a message; a value is checked by has_line or the json_ checks, which compare it whole)
has() { if grep -q -- "$2" "$tmp/$1"; then ok; else bad "$1 lacks '$2'"; fi; }
# has_line out|err|FILE TEXT: a line is exactly TEXT (no regex)
has_line() {
    if grep -qxF -- "$2" "$(e2e_file "$1")"; then ok; else bad "$1 has no line '$2'"; fi
}
# lacks out|err|FILE TEXT: the file is there and not empty, and no line holds TEXT (a regex): a
# missing or empty file fails rather than passes
lacks() {
    f=$(e2e_file "$1")
    if [ ! -s "$f" ]; then bad "$1 is missing or empty (want it without '$2')"
    elif grep -q -- "$2" "$f"; then bad "$1 holds '$2': $(grep -m 1 -- "$2" "$f" | head -c 200)"
    else ok; fi
}
# the last command's out or err, or a file named by its path
e2e_file() { case $1 in out | err) echo "$tmp/$1" ;; *) echo "$1" ;; esac; }

# ---- JSON values, compared whole. The JSON is jansson's, indented (one key a line) or compact
# (keys inline); json_flat makes both one line without blanks outside strings, json_get reads
# the values of a key from it. With MATCH, only the innermost objects ({...} holding no other
# object) whose flat text holds MATCH count, e.g. '"rails":1,"mode":"rail0"' picks one row.
json_flat() {
    awk 'BEGIN { ORS = "" }
    {
        s = $0; n = length(s)
        for (i = 1; i <= n; i++) {
            c = substr(s, i, 1)
            if (instr) { print c; if (esc) esc = 0; else if (c == "\\") esc = 1; else if (c == "\"") instr = 0 }
            else if (c == "\"") { instr = 1; print c }
            else if (c != " " && c != "\t" && c != "\r") print c
        }
    }
    END { print "\n" }' "$1"
}
# json_get FILE KEY [MATCH]: the values of KEY, one a line, as written (strings keep their quotes,
# arrays and objects come whole)
json_get() {
    json_flat "$1" | awk -v key="\"$2\":" -v m="${3-}" '
    function values(s,   i, j, c, d, q, e, v) {
        while ((i = index(s, key)) > 0) {
            c = i > 1 ? substr(s, i - 1, 1) : "{"
            s = substr(s, i + length(key))
            if (c != "{" && c != ",") continue
            c = substr(s, 1, 1); d = 0; q = 0; e = 0
            for (j = 1; j <= length(s); j++) {
                c = substr(s, j, 1)
                if (q) { if (e) e = 0; else if (c == "\\") e = 1; else if (c == "\"") q = 0; continue }
                if (c == "\"") q = 1
                else if (c == "[" || c == "{") d++
                else if (c == "]" || c == "}") { if (d == 0) break; d-- }
                else if (c == "," && d == 0) break
            }
            print substr(s, 1, j - 1)
        }
    }
    {
        if (m == "") { values($0); next }
        s = $0
        while (match(s, /[{][^{}]*[}]/)) {
            o = substr(s, RSTART, RLENGTH); s = substr(s, RSTART + RLENGTH)
            if (index(o, m)) values(o)
        }
    }'
}
# the values of KEY in FILE (and objects with MATCH), for a message
json_said() { json_get "$(e2e_file "$1")" "$2" "${3-}" | tr '\n' ' ' | sed 's/ $//'; }
# json_check FILE KEY AWK-TEST [MATCH] WANT-TEXT: KEY is there, and every value passes AWK-TEST
# (an awk condition on v, the value as written, and num, true when v is a JSON number)
json_check() {
    if json_get "$(e2e_file "$1")" "$2" "$4" | awk '
        { v = $0; num = v ~ /^-?[0-9]+([.][0-9]+)?([eE][-+]?[0-9]+)?$/; n++; if (!('"$3"')) no = 1 }
        END { exit no || !n }'; then ok
    else bad "$1: \"$2\"${4:+ (in the object with $4)} is '$(json_said "$1" "$2" "$4")', want $5"; fi
}
# json_num FILE KEY NUMBER [MATCH]: every value of KEY is a number equal to NUMBER (as numbers:
# 0.0 is 0, 0.1 is 0.10000000000000001; 0.4 is not 0.43)
json_num() { json_check "$1" "$2" "num && v + 0 == $3" "${4-}" "$3"; }
# json_range FILE KEY LO HI [MATCH]: every value of KEY is a number from LO to HI (for what
# varies: timings, memory, statistics of random traffic)
json_range() { json_check "$1" "$2" "num && v + 0 >= $3 && v + 0 <= $4" "${5-}" "from $3 to $4"; }
# json_val FILE KEY RAW [MATCH]: every value of KEY is written exactly RAW (true, false, null, "a")
json_val() {
    json_check "$1" "$2" "v == \"$(printf '%s' "$3" | sed 's/[\\"]/\\&/g')\"" "${4-}" "$3"
}
# json_str FILE KEY TEXT [MATCH]: every value of KEY is the string TEXT (no escapes in TEXT)
json_str() { json_val "$1" "$2" "\"$3\"" "${4-}"; }
# json_nums FILE KEY "N1 N2 ..." [MATCH]: the values of KEY are these numbers, in this order
json_nums() {
    if json_get "$(e2e_file "$1")" "$2" "${4-}" | awk -v want="$3" '
        BEGIN { n = split(want, w, " ") }
        { k++; if ($0 !~ /^-?[0-9]+([.][0-9]+)?([eE][-+]?[0-9]+)?$/ || k > n || $0 + 0 != w[k] + 0) no = 1 }
        END { exit no || k != n }'; then ok
    else bad "$1: \"$2\"${4:+ (in the objects with $4)} are '$(json_said "$1" "$2" "${4-}")', want '$3'"; fi
}
# line FILE N EXPECTED: line N of FILE is exactly EXPECTED
line() {
    got=$(sed -n "$2p" "$1")
    if [ "$got" = "$3" ]; then ok; else bad "$1 line $2 is '$got', want '$3'"; fi
}
# line_re FILE N REGEX: line N of FILE matches the extended regex
line_re() {
    if sed -n "$2p" "$1" | grep -Eq -- "$3"; then ok; else bad "$1 line $2 '$(sed -n "$2p" "$1")' !~ $3"; fi
}
# the summary line the runner reads, and the script's status: 1 on a failure, 77 (ctest's
# SKIP_RETURN_CODE: "Not Run") when nothing ran but skips
finish() {
    echo "$pass passed, $failn failed, $skipn skipped"
    [ "$failn" = 0 ] || return 1
    if [ "$pass" = 0 ] && [ "$skipn" != 0 ]; then return 77; fi
    return 0
}
# json_vals FILE KEY 'RAW1 RAW2 ...' [MATCH]: the values of KEY as written, in order, one space
# apart, are exactly this text
json_vals() {
    got=$(json_said "$1" "$2" "${4-}")
    if [ -n "$got" ] && [ "$got" = "$3" ]; then ok; else bad "$1: \"$2\"${4:+ (in the objects with $4)} are '$got', want '$3'"; fi
}
