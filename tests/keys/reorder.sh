#!/bin/sh
# reorder.sh — the synth and the finalizer list the circuits in the other
# order than gpud: circuits travel as name + key id (HELLO), so every
# partition of both circuits is proved with its own key and verifies.
# usage: reorder.sh GPUD SYNTH FINALIZER CLIENT SOURCE_DIR [CZK]
GPUD=$1 SYNTH=$2 FIN=$3 CLIENT=$4 SRC=$5
. "$SRC/tests/keys/lib.sh"

write_key_config "$T/czk.conf" multi linear
write_key_config "$T/other.conf" linear multi
start_gpud; start_synth "$T/other.conf"; start_fin "$T/other.conf"
wait_socket || exit 1

jm=$(submit_job r-multi multi "$FIX/multi/witness.wtns" "$FIX/multi/witness.wtns")
jl=$(submit_job r-linear linear "$FIX/linear/witness.wtns")
[ -n "$jm" ] && [ -n "$jl" ] || { bad "submissions were not accepted"; exit 1; }
wait_done "$jm" 60 || bad "the multi job $jm did not complete"
wait_done "$jl" 60 || bad "the linear job $jl did not complete"
check_partition "$jm" 0 multi
check_partition "$jm" 1 multi
check_partition "$jl" 0 linear
grep -q 'synth pid [0-9]* agrees on 2 of 2 circuits' "$T/gpud.log" || bad "gpud did not map the synth's circuits by name"
grep -q 'refused' "$T/gpud.log" "$T/synth.log" "$T/fin.log" && bad "a circuit was refused although the keys agree"
[ "$fail" = 0 ] || exit 1
have_snarkjs || { echo "snarkjs not installed: proofs checked by the finalizer only"; exit 77; }
echo ok
