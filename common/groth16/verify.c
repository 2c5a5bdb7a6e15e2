/*
 * verify.c — Groth16 verification (snarkjs equation) and the verification
 * key derived from a zkey; see verify.h.
 */
#include "common/groth16/verify.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/crypto/bn254_msm.h"
#include "common/crypto/msm.h"

/* below this many public signals, plain scalar multiplications are faster */
#define VERIFY_MSM_MIN 64

#include "common/groth16/g16_names_bls12_381.h"
#include "common/groth16/verify_tmpl.h"
#include "common/groth16/g16_names_bn254.h"
#include "common/groth16/verify_tmpl.h"
#include "common/groth16/g16_names_undef.h"
