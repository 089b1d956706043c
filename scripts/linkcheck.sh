#!/bin/sh
# SPDX-License-Identifier: MIT
# Usage: sh scripts/linkcheck.sh [DIR] (DIR: the top of the tree, default .). Checks every
# relative link [text](target) in README.md and docs/*.md: the file exists and, for #anchor, a
# heading of that file slugs to it (GitHub's rule: lowercase, drop punctuation except - and _,
# spaces to -). Prints each broken link; exits 1 when there is one, 0 (silent) otherwise.
cd "${1:-.}" || exit 2
slugs() { grep -E '^#{1,6} ' "$1" | sed -E 's/^#+ //' | tr 'A-Z' 'a-z' | sed -E 's/[^a-z0-9 _-]//g; s/ /-/g'; }
for f in README.md docs/*.md; do
  dir=$(dirname "$f")
  grep -oE '\]\([^)# ]*(#[^) ]*)?\)' "$f" | sed -E 's/^\]\(//; s/\)$//' | while read -r t; do
    case "$t" in http*|mailto*) continue;; esac
    path=${t%%#*}; anchor=; case "$t" in *'#'*) anchor=${t#*#};; esac
    target=$f; [ -n "$path" ] && target="$dir/$path"
    if [ ! -e "$target" ]; then echo "$f: missing file $t"; continue; fi
    if [ -n "$anchor" ]; then slugs "$target" | grep -qx -- "$anchor" || echo "$f: missing anchor $t"; fi
  done
done | { out=$(cat); [ -z "$out" ] && exit 0; printf '%s\n' "$out"; exit 1; }
