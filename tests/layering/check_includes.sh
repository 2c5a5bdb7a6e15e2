#!/bin/sh
# check_includes.sh SRCDIR — the library layering of docs/HACKING.md, checked on
# the source: every #include "dir/..." of a file must name a folder its own
# folder may depend on.  Fails listing each include that breaks a rule.
set -eu
src=${1:-.}
cd "$src"

# folder -> folders it may include (besides itself)
allowed() {
    case $1 in
        common/base)     echo "" ;;
        common/crypto)   echo "common/base" ;;
        common/formats)  echo "common/base common/crypto" ;;
        common/groth16)  echo "common/base common/crypto common/formats" ;;
        common/runtime)  echo "common/base" ;;
        ipc)             echo "common/base common/runtime" ;;
        backend|backend/cpu|backend/cuda)
                         echo "common/base common/crypto common/formats common/groth16 common/runtime backend backend/cpu backend/cuda" ;;
        gpud)            echo "common/base common/crypto common/formats common/groth16 common/runtime ipc backend backend/cuda" ;;
        synth|finalizer) echo "common/base common/crypto common/formats common/groth16 common/runtime ipc" ;;
        cli)             echo "common/base common/crypto common/formats common/groth16 common/runtime ipc backend" ;;
        *)               echo "ANY" ;;
    esac
}

bad=0
files=$(find common ipc backend gpud synth finalizer cli -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) | sort)
[ -n "$files" ] || { echo "no sources under $src"; exit 1; }
n=0
for f in $files; do
    dir=$(dirname "$f")
    ok=$(allowed "$dir")
    [ "$ok" = "ANY" ] && { echo "no layering rule for folder $dir ($f)"; bad=1; continue; }
    for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
        n=$((n + 1))
        case $inc in */*) ;; *) continue ;; esac   # same-folder include
        idir=$(dirname "$inc")
        [ "$idir" = "$dir" ] && continue
        hit=0
        for a in $ok; do [ "$idir" = "$a" ] && hit=1; done
        if [ $hit -eq 0 ]; then
            echo "$f includes \"$inc\": $dir may include only: ${ok:-nothing outside itself}"
            bad=1
        fi
    done
done
[ $bad -eq 0 ] || exit 1
echo "layering holds: $n includes checked in $(echo "$files" | wc -l) files"
