# The e2e scripts' common harness, sourced (not a test itself: CMake collects tests/e2e/*.sh
# only). Gives $tmp (removed at exit, after the script's own e2e_cleanup when it defines one),
# counters, and the checks; a script ends with `finish`.
tmp=$(mktemp -d)
e2e_exit() {
    if command -v e2e_cleanup >/dev/null 2>&1; then e2e_cleanup; fi
    rm -rf "$tmp"
}
trap e2e_exit EXIT
pass=0; failn=0
ok() { pass=$((pass + 1)); }
bad() { failn=$((failn + 1)); echo "FAIL: $*"; }
# expect STATUS CMD...: run, keep stdout/stderr in $tmp/out and $tmp/err, compare the exit status
expect() {
    want=$1; shift
    "$@" >"$tmp/out" 2>"$tmp/err"; got=$?
    if [ "$got" = "$want" ]; then ok; else bad "exit $got (want $want): $*"; sed 's/^/  | /' "$tmp/err" | head -5; fi
}
# has out|err TEXT: the last command's stdout or stderr holds TEXT
has() { if grep -q -- "$2" "$tmp/$1"; then ok; else bad "$1 lacks '$2'"; fi; }
# line FILE N EXPECTED: line N of FILE is exactly EXPECTED
line() {
    got=$(sed -n "$2p" "$1")
    if [ "$got" = "$3" ]; then ok; else bad "$1 line $2 is '$got', want '$3'"; fi
}
# line_re FILE N REGEX: line N of FILE matches the extended regex
line_re() {
    if sed -n "$2p" "$1" | grep -Eq -- "$3"; then ok; else bad "$1 line $2 '$(sed -n "$2p" "$1")' !~ $3"; fi
}
# the summary line the runner reads, and the script's status
finish() {
    echo "$pass passed, $failn failed"
    [ "$failn" = 0 ]
}
