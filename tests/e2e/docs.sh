#!/bin/sh
# SPDX-License-Identifier: MIT
# Every relative link in README.md and docs/*.md leads to a file and heading that exist
# (scripts/linkcheck.sh), and the checker itself reports a broken one.
# Usage: docs.sh NETFAB SOURCE_DIR FABRICS_DIR
set -u
. "$2/tests/e2e/lib/harness.sh"
expect 0 sh "$2/scripts/linkcheck.sh" "$2"
[ -s "$tmp/out" ] && bad "broken links: $(head -5 "$tmp/out")" || ok
mkdir -p "$tmp/tree/docs"
printf '# A\n\n[ok](docs/b.md#there) [gone](docs/c.md) [no anchor](docs/b.md#nowhere)\n' >"$tmp/tree/README.md"
printf '# There\n' >"$tmp/tree/docs/b.md"
expect 1 sh "$2/scripts/linkcheck.sh" "$tmp/tree"
has out "README.md: missing file docs/c.md"
has out "README.md: missing anchor docs/b.md#nowhere"
[ "$(wc -l <"$tmp/out")" = 2 ] && ok || bad "linkcheck: $(cat "$tmp/out")"
finish
