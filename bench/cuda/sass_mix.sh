#!/bin/sh
# sass_mix.sh BINARY [FUNCTION-PATTERN]: per kernel of BINARY whose mangled
# name matches the pattern (grep -E, default: every kernel), the count of
# each SASS opcode (with its modifiers) and the total, most frequent first.
# Needs cuobjdump (the CUDA toolkit); used for docs/bench-gpu.md's
# instruction counts ("Field products").
set -eu
bin=$1
pat=${2:-.}
cuobjdump -sass "$bin" | awk -v pat="$pat" '
    /Function :/ { fn = $3; next }
    fn ~ pat && /^ *\/\*[0-9a-f]+\*\// {
        line = $0
        sub(/^ *\/\*[0-9a-f]+\*\/ */, "", line)
        sub(/^@!?U?P[0-9T] +/, "", line)
        split(line, w, /[ ;]/)
        op = w[1]
        sub(/\.(U32|S32|U64|64|32)$/, "", op)
        if (op != "") { n[fn, op]++; tot[fn]++ }
    }
    END {
        for (k in n) {
            split(k, kk, SUBSEP)
            printf "%s %d %s\n", kk[1], n[k], kk[2]
        }
        for (f in tot)
            printf "%s %d TOTAL\n", f, tot[f]
    }' | sort -k1,1 -k2,2nr | awk '{ if ($1 != last) { print ""; print $1; last = $1 } printf "  %8d %s\n", $2, $3 }'
