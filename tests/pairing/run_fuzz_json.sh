#!/bin/sh
# run_fuzz_json.sh FUZZER CORPUS_DIR FIXTURES_DIR [SECONDS]
# Bounded libFuzzer run of fuzz_json: seeds are the fixtures' proof.json,
# public.json and verification_key.json with the reader selector byte
# (0 proof, 1 public, 2 vk) prepended.  Exit 77 when the fuzzer is not built.
fuzzer=$1 corpus=$2 fixtures=$3 secs=${4:-25}
if [ ! -x "$fuzzer" ]; then
    echo "$fuzzer not built (cmake --build <dir> --target fuzz_json)"
    exit 77
fi
rm -rf "$corpus" && mkdir -p "$corpus" || exit 1
i=0
for k in 0:proof 1:public 2:verification_key; do
    sel=${k%%:*} name=${k#*:}
    for f in "$fixtures"/*/"$name".json; do
        [ -f "$f" ] || continue
        i=$((i + 1))
        { printf "\\$(printf %03o "$sel")"; cat "$f"; } > "$corpus/seed$i"
    done
done
exec "$fuzzer" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 "$corpus"
