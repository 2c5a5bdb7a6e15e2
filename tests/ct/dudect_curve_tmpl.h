/*
 * dudect_curve_tmpl.h — the inputs and targets of test_dudect.c that every
 * curve has, included once for BLS12-381 and once for BN254.  The includer
 * defines:
 *   DC_SUF      the suffix of the static names it defines (bls makes
 *               rand_fp_bls ... targets_bls), DC_NAME the prefix of the
 *               target names ("" or "bn254_"),
 *   DC_FP, DC_FP2, DC_FR, DC_G1, DC_G2  the types, also the function
 *               prefixes (czk_fp ... czk_g2); DC_FP_ONE, DC_FP2_ONE, DC_FR_ONE,
 *               DC_G1_GEN, DC_G2_GEN,
 *   DC_FP_LIMBS and DC_FP_TOP, DC_FR_TOP: the masks on the top limbs that
 *               keep random limbs below p and r.
 * It defines setup_fixed_SUF(special) (the fixed class of every target: a
 * random value drawn once, or an edge value with special), g1_rand_aff_SUF
 * and targets_SUF[] (NTARGETS_CURVE entries):
 *   fp_inv_ct, fp2_inv_ct, fr_inv_ct   the Fermat inversions (the value)
 *   g1_mul_ct, g2_mul_ct               scalar multiplication (the scalar)
 *   g1_to_aff_ct, g2_to_aff_ct         the normalisation (Z)
 *   fp_inv, g1_to_aff                  the VARIABLE-TIME counterparts, to show
 *                                      the harness catches a leak
 */
#define DC_CAT_(a, b) a##b
#define DC_CAT(a, b) DC_CAT_(a, b)
#define DCS(name) DC_CAT(name##_, DC_SUF)
#define FP(name) DC_CAT(DC_FP, name)
#define FP2(name) DC_CAT(DC_FP2, name)
#define G1(name) DC_CAT(DC_G1, name)
#define G2(name) DC_CAT(DC_G2, name)
#define G1A DC_CAT(DC_G1, _aff)
#define G2A DC_CAT(DC_G2, _aff)

static void DCS(rand_fp)(DC_FP *a)
{
    for (int i = 0; i < DC_FP_LIMBS; i++)
        a->l[i] = t_rand64();
    a->l[DC_FP_LIMBS - 1] &= DC_FP_TOP; /* < p */
}

static void DCS(rand_fr)(DC_FR *a)
{
    for (int i = 0; i < 4; i++)
        a->l[i] = t_rand64();
    a->l[3] &= DC_FR_TOP; /* < r */
}

/* the fixed values, drawn once */
static struct {
    DC_FP fp;
    DC_FP2 fp2;
    DC_FR fr, k;
    G1A p1;
    G2A p2;
    DC_G1 j1;
    DC_G2 j2;
} DCS(fix);

static void DCS(g1_rand_aff)(G1A *a)
{
    DC_FR k;
    DC_G1 p;
    DCS(rand_fr)(&k);
    G1(_mul_aff)(&p, &DC_G1_GEN, &k);
    G1(_to_aff)(a, &p);
}

static void DCS(g2_rand_aff)(G2A *a)
{
    DC_FR k;
    DC_G2 p;
    DCS(rand_fr)(&k);
    G2(_mul_aff)(&p, &DC_G2_GEN, &k);
    G2(_to_aff)(a, &p);
}

/* (x l^2, y l^3, l): the same point with Z = l */
static void DCS(g1_scaled)(DC_G1 *r, const G1A *a, const DC_FP *l)
{
    DC_FP l2, l3;
    FP(_sqr)(&l2, l);
    FP(_mul)(&l3, &l2, l);
    FP(_mul)(&r->x, &a->x, &l2);
    FP(_mul)(&r->y, &a->y, &l3);
    r->z = *l;
}

static void DCS(g2_scaled)(DC_G2 *r, const G2A *a, const DC_FP2 *l)
{
    DC_FP2 l2, l3;
    FP2(_sqr)(&l2, l);
    FP2(_mul)(&l3, &l2, l);
    FP2(_mul)(&r->x, &a->x, &l2);
    FP2(_mul)(&r->y, &a->y, &l3);
    r->z = *l;
}

static void DCS(rand_fp2)(DC_FP2 *a)
{
    DCS(rand_fp)(&a->c0);
    DCS(rand_fp)(&a->c1);
}

static void DCS(setup_fixed)(bool special)
{
    DCS(g1_rand_aff)(&DCS(fix).p1);
    DCS(g2_rand_aff)(&DCS(fix).p2);
    if (special) {
        DCS(fix).fp = DC_FP_ONE;
        DCS(fix).fp2 = DC_FP2_ONE;
        DCS(fix).fr = DC_FR_ONE;
        memset(&DCS(fix).k, 0, sizeof(DCS(fix).k));
        DCS(g1_scaled)(&DCS(fix).j1, &DCS(fix).p1, &DC_FP_ONE);
        DCS(g2_scaled)(&DCS(fix).j2, &DCS(fix).p2, &DC_FP2_ONE);
    } else {
        DC_FP l;
        DC_FP2 l2;
        DCS(rand_fp)(&DCS(fix).fp);
        DCS(rand_fp2)(&DCS(fix).fp2);
        DCS(rand_fr)(&DCS(fix).fr);
        DCS(rand_fr)(&DCS(fix).k);
        DCS(rand_fp)(&l);
        DCS(g1_scaled)(&DCS(fix).j1, &DCS(fix).p1, &l);
        DCS(rand_fp2)(&l2);
        DCS(g2_scaled)(&DCS(fix).j2, &DCS(fix).p2, &l2);
    }
}

/* ---- targets: gen fills one input of class cls (0 fixed, 1 random) ---- */

static void DCS(gen_fp)(void *in, int cls)
{
    if (cls)
        DCS(rand_fp)(in);
    else
        memcpy(in, &DCS(fix).fp, sizeof(DC_FP));
}
static void DCS(run_fp_inv_ct)(const void *in)
{
    DC_FP r;
    FP(_inv_ct)(&r, in);
    sink(&r, sizeof(r));
}
static void DCS(run_fp_inv)(const void *in)
{
    DC_FP r;
    FP(_inv)(&r, in);
    sink(&r, sizeof(r));
}

static void DCS(gen_fp2)(void *in, int cls)
{
    if (cls)
        DCS(rand_fp2)(in);
    else
        memcpy(in, &DCS(fix).fp2, sizeof(DC_FP2));
}
static void DCS(run_fp2_inv_ct)(const void *in)
{
    DC_FP2 r;
    FP2(_inv_ct)(&r, in);
    sink(&r, sizeof(r));
}

static void DCS(gen_fr)(void *in, int cls)
{
    if (cls)
        DCS(rand_fr)(in);
    else
        memcpy(in, &DCS(fix).fr, sizeof(DC_FR));
}
static void DCS(run_fr_inv_ct)(const void *in)
{
    DC_FR r;
    DC_CAT(DC_FR, _inv_ct)(&r, in);
    sink(&r, sizeof(r));
}

static void DCS(gen_k)(void *in, int cls)
{
    if (cls)
        DCS(rand_fr)(in);
    else
        memcpy(in, &DCS(fix).k, sizeof(DC_FR));
}
static void DCS(run_g1_mul_ct)(const void *in)
{
    DC_G1 r, p;
    G1(_from_aff)(&p, &DCS(fix).p1);
    G1(_mul_ct)(&r, &p, in);
    sink(&r, sizeof(r));
}
static void DCS(run_g2_mul_ct)(const void *in)
{
    DC_G2 r, p;
    G2(_from_aff)(&p, &DCS(fix).p2);
    G2(_mul_ct)(&r, &p, in);
    sink(&r, sizeof(r));
}

static void DCS(gen_j1)(void *in, int cls)
{
    if (cls) {
        DC_FP l;
        DCS(rand_fp)(&l);
        DCS(g1_scaled)(in, &DCS(fix).p1, &l);
    } else {
        memcpy(in, &DCS(fix).j1, sizeof(DC_G1));
    }
}
static void DCS(run_g1_to_aff_ct)(const void *in)
{
    G1A r;
    G1(_to_aff_ct)(&r, in);
    sink(&r, sizeof(r));
}
static void DCS(run_g1_to_aff)(const void *in)
{
    G1A r;
    G1(_to_aff)(&r, in);
    sink(&r, sizeof(r));
}

static void DCS(gen_j2)(void *in, int cls)
{
    if (cls) {
        DC_FP2 l;
        DCS(rand_fp2)(&l);
        DCS(g2_scaled)(in, &DCS(fix).p2, &l);
    } else {
        memcpy(in, &DCS(fix).j2, sizeof(DC_G2));
    }
}
static void DCS(run_g2_to_aff_ct)(const void *in)
{
    G2A r;
    G2(_to_aff_ct)(&r, in);
    sink(&r, sizeof(r));
}

static const struct target DCS(targets)[NTARGETS_CURVE] = {
    { DC_NAME "fp_inv_ct", sizeof(DC_FP), DCS(gen_fp), DCS(run_fp_inv_ct), 200000 },
    { DC_NAME "fp2_inv_ct", sizeof(DC_FP2), DCS(gen_fp2), DCS(run_fp2_inv_ct), 200000 },
    { DC_NAME "fr_inv_ct", sizeof(DC_FR), DCS(gen_fr), DCS(run_fr_inv_ct), 200000 },
    { DC_NAME "g1_mul_ct", sizeof(DC_FR), DCS(gen_k), DCS(run_g1_mul_ct), 40000 },
    { DC_NAME "g2_mul_ct", sizeof(DC_FR), DCS(gen_k), DCS(run_g2_mul_ct), 20000 },
    { DC_NAME "g1_to_aff_ct", sizeof(DC_G1), DCS(gen_j1), DCS(run_g1_to_aff_ct), 200000 },
    { DC_NAME "g2_to_aff_ct", sizeof(DC_G2), DCS(gen_j2), DCS(run_g2_to_aff_ct), 200000 },
    { DC_NAME "fp_inv", sizeof(DC_FP), DCS(gen_fp), DCS(run_fp_inv), 200000 },
    { DC_NAME "g1_to_aff", sizeof(DC_G1), DCS(gen_j1), DCS(run_g1_to_aff), 200000 },
};

#undef DCS
#undef FP
#undef FP2
#undef G1
#undef G2
#undef G1A
#undef G2A
#undef DC_SUF
#undef DC_NAME
#undef DC_FP
#undef DC_FP2
#undef DC_FR
#undef DC_G1
#undef DC_G2
#undef DC_FP_ONE
#undef DC_FP2_ONE
#undef DC_FR_ONE
#undef DC_G1_GEN
#undef DC_G2_GEN
#undef DC_FP_LIMBS
#undef DC_FP_TOP
#undef DC_FR_TOP
