#!/bin/sh
# fetch_large.sh — a proof whose text does not fit in an EVENT (gpud/events.c:
# proof + public text over one record, here ~900 public signals) reaches
# `czk submit --out` through FETCH (gpud/clients.c on_fetch, cli/cmd_submit.c
# fetch_partition), with the real daemons (tests/pipeline/lib.sh):
#   1. a generated circuit with 900 public signals, its key made by
#      `czk setup` and its public.json by `czk prove` (the single-process
#      prover, not the pipeline);
#   2. `czk submit --wait --out` of it exits 0 and its proof.json /
#      public.json equal the finalizer's, although no event could carry them
#      and the client's own configuration names an empty output_dir (so the
#      files came through gpud);
#   3. public.json equals the single-process prover's, snarkjs accepts the
#      proof, each partition written and journaled once.
# usage: fetch_large.sh CZK GPUD SYNTH FIN TOOL SRC
. "$(dirname "$0")/lib.sh"
require_snarkjs

W=$T/wide
mkdir -p "$W"
log "a circuit with 900 public signals"
"$CZK" gen-circuit --constraints 1500 --publics 900 --bits 0.3 --seed 11 "$W/c.r1cs" "$W/w.wtns" >"$T/gen.log" 2>&1 &&
    "$CZK" setup "$W/c.r1cs" "$W/c.zkey" >"$T/setup.log" 2>&1 &&
    "$CZK" vkey "$W/c.zkey" "$W/verification_key.json" >"$T/vkey.log" 2>&1 &&
    "$CZK" prove "$W/c.zkey" "$W/w.wtns" "$W/proof0.json" "$W/public.json" >"$T/prove.log" 2>&1 ||
    { bad "making the wide circuit: $(cat "$T/gen.log" "$T/setup.log" "$T/vkey.log" "$T/prove.log")"; exit 1; }
n=$(wc -c <"$W/public.json")
[ "$n" -gt 65536 ] || { bad "public.json is $n bytes: it would fit in an event and FETCH would not be used"; exit 1; }

write_config <<CONF
[circuit.wide]
zkey = $W/c.zkey
CONF
start_gpud; start_synth 0; start_fin
wait_up 1 || exit 1

log "czk submit --wait --out of a proof too large for an event"
# the client's configuration names an empty output_dir: reading the files
# itself (the fallback for a gpud without FETCH) cannot succeed
sed "s|^output_dir = .*|output_dir = $T/not-the-output|" "$CONF" >"$T/client.conf"
mkdir -p "$T/not-the-output"
"$CZK" submit --config "$T/client.conf" --circuit wide --wait --out "$T/client/w" "$W/w.wtns" >"$T/sub.w" 2>&1 ||
    bad "czk submit exited $?: $(cat "$T/sub.w")"
JW=$(job_of "$T/sub.w")
[ -n "$JW" ] || { bad "the job was not accepted: $(cat "$T/sub.w")"; exit 1; }
grep -q "^job $JW done: 1 partition proved" "$T/sub.w" || bad "no final line: $(cat "$T/sub.w")"
[ -s "$T/client/w/0/public.json" ] || bad "--out has no public.json: $(ls -lR "$T/client/w" 2>&1)"
expect_job "$JW" "$W" 1 "$T/client/w"

check_all
[ "$fail" = 0 ] && echo "ok"
exit $fail
