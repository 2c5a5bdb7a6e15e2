/*
 * json_api_tmpl.h — the JSON readers and writers for one curve, declared by
 * json.h for BLS12-381 (czk_json_*) and BN254 (czk_json_bn254_*) with the
 * names of g16_names_*.h.  Not a header of its own: json.h is the contract.
 */

/* parse from memory; name is the file name used in error messages */
int JS(proof_parse)(G16(proof) *p, const char *text, size_t len, const char *name, czk_error *e);
/* *pub is malloc'd (free()); *n may be 0 (then *pub may be NULL) */
int JS(public_parse)(CV(fr) **pub, size_t *n, const char *text, size_t len, const char *name, czk_error *e);
/* vk->ic is malloc'd: release with G16(vk_free) */
int JS(vk_parse)(G16(vk) *vk, const char *text, size_t len, const char *name, czk_error *e);

/* the same, reading the file at path (at most 256 MiB) */
int JS(proof_read)(G16(proof) *p, const char *path, czk_error *e);
int JS(public_read)(CV(fr) **pub, size_t *n, const char *path, czk_error *e);
int JS(vk_read)(G16(vk) *vk, const char *path, czk_error *e);

/* text in snarkjs layout, malloc'd and NUL-terminated (free()); NULL on ENOMEM */
char *JS(proof_dump)(const G16(proof) *p);
char *JS(public_dump)(const CV(fr) *pub_std, size_t n);
char *JS(vk_dump)(const G16(vk) *vk);

/* atomic file writers */
int JS(proof_write)(const char *path, const G16(proof) *p, czk_error *e);
int JS(public_write)(const char *path, const CV(fr) *pub_std, size_t n, czk_error *e);
int JS(vk_write)(const char *path, const G16(vk) *vk, czk_error *e);

