/*
 * test_prove_buffers.c — czk_groth16_prove / czk_groth16_bn254_prove with
 * their own a, b, c buffer at sizes on both sides of its 1 MiB switch
 * (malloc below, a huge-page mapping from there on: domains 2^12 and 2^14),
 * against the three stages run on a plain heap buffer: same r, s, same proof
 * byte for byte, and the proof verifies under the key's verification key.
 *     test_prove_buffers SCRATCH_DIR
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/groth16/gencircuit.h"
#include "common/groth16/groth16.h"
#include "common/groth16/setup.h"
#include "common/groth16/verify.h"

#include "tests/common/test_util.h"

#include "common/groth16/g16_names_bls12_381.h"
#include "tests/groth16/prove_buffers_tmpl.h"
#include "common/groth16/g16_names_bn254.h"
#include "tests/groth16/prove_buffers_tmpl.h"
#include "common/groth16/g16_names_undef.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_prove_buffers SCRATCH_DIR\n");
        return 2;
    }
    if (mkdir(argv[1], 0755) < 0 && errno != EEXIST)
        DIE("cannot create %s: %s", argv[1], strerror(errno));
    for (unsigned log_n = 12; log_n <= 14; log_n += 2) {
        czk_check_prove(argv[1], log_n);
        czk_bn254_check_prove(argv[1], log_n);
    }
    if (t_failures) {
        fprintf(stderr, "test_prove_buffers: %d checks failed\n", t_failures);
        return 1;
    }
    printf("test_prove_buffers: ok\n");
    return 0;
}
