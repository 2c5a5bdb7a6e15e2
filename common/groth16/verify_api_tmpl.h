/*
 * verify_api_tmpl.h — the verification key and the verifier for one curve,
 * declared by verify.h for BLS12-381 (czk_groth16_vk, czk_groth16_verify)
 * and BN254 (czk_groth16_bn254_vk, czk_groth16_bn254_verify) with the names
 * of g16_names_*.h.  Not a header of its own: verify.h is the contract.
 */

/* the contents of snarkjs' verification_key.json */
typedef struct G16(vk) {
    uint32_t n_public;
    CV(g1_aff) alpha1;
    CV(g2_aff) beta2, gamma2, delta2;
    CV(fp12) alphabeta;   /* e(alpha1, beta2): vk_alphabeta_12 */
    CV(g1_aff) *ic;       /* n_public + 1 points, malloc'd, owned by the struct */
} G16(vk);

/* frees vk->ic and clears the struct (safe on a zeroed struct) */
void G16(vk_free)(G16(vk) *vk);

/* the verification key of an opened zkey, as `snarkjs zkey export
 * verificationkey` derives it (alphabeta computed with the pairing).
 * -ENOMEM when IC cannot be allocated. */
int G16(vk_from_zkey)(G16(vk) *vk, const czk_zkey *z, czk_error *e);

/* Returns 0 when the proof verifies, -EBADMSG when it does not (pairing
 * check failed, or a proof point is not on the curve / not in its
 * subgroup), -EINVAL when n_pub != vk->n_public or a public signal is >= r,
 * another -errno (-ENOMEM) when the public-input MSM (over 64 signals)
 * fails.  e (optional) says which. */
int G16(verify)(const G16(vk) *vk, const G16(proof) *proof, const CV(fr) *pub_std, size_t n_pub, czk_error *e);

