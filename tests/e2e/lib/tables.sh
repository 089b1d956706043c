# SPDX-License-Identifier: MIT
# Readers of the real tools' forwarding tables written in awk, for the e2e scripts: they check
# netfab's readers and writers against a second reading that owes netfab nothing. Sourced (not a
# test itself). Layouts: docs/real-tools.md.
#
#   mft_osm FILE    "SWITCHGUID MLID PORT..." lines (lowercase, sorted) of OpenSM's opensm.mcfdbs
#                   (and netfab's --dump-mft, the same layout)
#   mft_diag FILE   the same of dump_fts -M or ibroute -M output (read by column position)
#   lft_canon FILE  "GUID LID PORT" lines (sorted) of an opensm-lfts.dump, dump_fts or ibroute file

mft_osm() {
    awk '/^Switch 0x/ { sw = tolower(substr($2, 3)) }
        /^0x[0-9A-Fa-f]+ :/ { s = sw " " tolower($1); for (i = 3; i <= NF; i++) s = s " " $i + 0; print s }' \
        "$1" | sort
}
mft_diag() {
    awk '/^Multicast mlids/ { sw = $0; sub(/.* guid 0x/, "", sw); sub(/ .*/, "", sw); next }
        # the k-th digit column of the "Ports:" line is port k (above it, for switches of 10 ports
        # or more, a line of tens digits); an "x" in that column sets port k
        /^ *Ports:/ { n = 0; split("", col)
            for (i = index($0, ":") + 1; i <= length($0); i++) if (substr($0, i, 1) ~ /[0-9]/) col[i] = n++
            next }
        /^0x[0-9a-f]+ / { s = sw " " $1
            for (i = length($1) + 1; i <= length($0); i++)
                if (substr($0, i, 1) == "x") s = s " " (i in col ? col[i] : "?")
            print s }' "$1" | sort
}
lft_canon() {
    awk '/^Unicast lids/ { sw = $0; sub(/.* guid 0x/, "", sw); sub(/[^0-9a-fA-F].*/, "", sw); next }
        /^0x[0-9a-fA-F]+ [0-9]+/ { print tolower(sw), tolower($1), $2 + 0 }' "$1" | sort
}
