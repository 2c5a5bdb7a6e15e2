/*
 * formats_tool.c — test helper: rewrites snarkjs files through the czk
 * readers and writers so that snarkjs can judge the writers' output
 * (test_snarkjs.sh), and prints r1cs counts in `snarkjs r1cs info` terms.
 *
 *   formats_tool rewrite-zkey IN OUT | rewrite-wtns IN OUT | rewrite-r1cs IN OUT
 *   formats_tool r1cs-info IN
 */
#include <stdio.h>
#include <string.h>

#include "common/formats/formats.h"

static int add_cb(void *ctx, uint32_t index, const czk_r1cs_term *a, uint32_t na,
                  const czk_r1cs_term *b, uint32_t nb, const czk_r1cs_term *c, uint32_t nc)
{
    return czk_r1cs_writer_add(ctx, a, na, b, nb, c, nc);
}

int main(int argc, char **argv)
{
    czk_error e = {0};
    int rc = -1;

    if (argc == 4 && !strcmp(argv[1], "rewrite-zkey")) {
        czk_zkey z;
        if (!(rc = czk_zkey_open(&z, argv[2], &e))) {
            czk_zkey_spec s = {
                .n_vars = z.n_vars, .n_public = z.n_public, .domain_size = z.domain_size,
                .alpha1 = z.alpha1, .beta1 = z.beta1, .delta1 = z.delta1,
                .beta2 = z.beta2, .gamma2 = z.gamma2, .delta2 = z.delta2,
                .ic = z.ic, .a = z.a, .b1 = z.b1, .c = z.c, .h = z.h, .b2 = z.b2,
                .n_coefs = z.n_coefs, .coefs = z.coefs,
            };
            rc = czk_zkey_write(argv[3], &s, &e);
            czk_zkey_close(&z);
        }
    } else if (argc == 4 && !strcmp(argv[1], "rewrite-wtns")) {
        czk_wtns w;
        if (!(rc = czk_wtns_open(&w, argv[2], &e))) {
            rc = czk_wtns_write(argv[3], w.w, w.n_witness, &e);
            czk_wtns_close(&w);
        }
    } else if (argc == 4 && !strcmp(argv[1], "rewrite-r1cs")) {
        czk_r1cs r;
        czk_r1cs_writer *wr;
        if (!(rc = czk_r1cs_open(&r, argv[2], &e))) {
            rc = czk_r1cs_writer_open(&wr, argv[3], r.n_wires, r.n_pub_out, r.n_pub_in,
                                      r.n_prv_in, &e);
            if (!rc) {
                czk_r1cs_foreach(&r, add_cb, wr);
                rc = czk_r1cs_writer_close(wr, &e);
            }
            czk_r1cs_close(&r);
        }
    } else if (argc == 3 && !strcmp(argv[1], "r1cs-info")) {
        czk_r1cs r;
        if (!(rc = czk_r1cs_open(&r, argv[2], &e))) {
            printf("# of Wires: %u\n# of Constraints: %u\n# of Private Inputs: %u\n"
                   "# of Public Inputs: %u\n# of Labels: %llu\n# of Outputs: %u\n",
                   r.n_wires, r.n_constraints, r.n_prv_in, r.n_pub_in,
                   (unsigned long long)r.n_labels, r.n_pub_out);
            czk_r1cs_close(&r);
        }
    } else {
        fprintf(stderr, "usage: %s rewrite-zkey|rewrite-wtns|rewrite-r1cs IN OUT | r1cs-info IN\n",
                argv[0]);
        return 2;
    }
    if (rc)
        fprintf(stderr, "%s\n", e.msg);
    return rc ? 1 : 0;
}
