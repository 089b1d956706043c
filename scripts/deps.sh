#!/bin/sh
# SPDX-License-Identifier: MIT
# Installs the Debian packages that netfab's build, tests and tools need, when they are missing.
# Idempotent and silent when everything is there. Usage: scripts/deps.sh [build|fuzz|tsan|bench]...
set -eu

# opensm, infiniband-diags, ibsim-utils, libumad2sim0: the real InfiniBand tools on a simulated
# fabric (tests/e2e/realtools.sh); libibmad-dev, libibumad-dev: its multicast join helper
want="cmake make gcc pkg-config libcmocka-dev libjansson-dev ibsim-utils libumad2sim0 opensm
      infiniband-diags libibmad-dev libibumad-dev gnuplot-nox groff-base graphviz libopenmpi-dev
      openmpi-bin chromium"
for group in "$@"; do
    case "$group" in
        build) ;;
        fuzz) want="$want clang libclang-rt-dev" ;;
        tsan) want="$want clang libclang-rt-dev libomp-dev" ;;
        bench) want="$want hyperfine bc" ;;
        *) echo "deps.sh: unknown group '$group' (build, fuzz, tsan, bench)" >&2; exit 2 ;;
    esac
done

missing=""
for p in $want; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done
[ -z "$missing" ] && exit 0

echo "deps.sh: installing missing Debian packages:$missing" >&2
SUDO=""
if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
        echo "deps.sh: not root and no sudo; install these by hand:$missing" >&2
        exit 1
    fi
fi
export DEBIAN_FRONTEND=noninteractive DEBCONF_NOWARNINGS=yes
$SUDO apt-get update -qq >/dev/null
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
echo "deps.sh: done" >&2
