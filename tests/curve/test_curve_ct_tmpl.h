/*
 * test_curve_ct_tmpl.h — the G1 / G2 body of test_curve_ct.c, included once
 * per group with TG (function prefix), TJ / TA (Jacobian / affine types), TF
 * (coordinate type), TGEN (CZK_G1_GEN / CZK_G2_GEN), T_TO_O (affine ->
 * oracle point).
 */
#define TC_(a, b) a##b
#define TC(a, b) TC_(a, b)
#define TGF(op) TC(TG, op)

/* the reference: double-and-add from the top bit with the variable-time
 * Jacobian dbl / add of curve.h (branches on infinity, P == Q, P == -Q) */
static void TGF(_ref_mul)(TJ *r, const TJ *p, const czk_fr *k)
{
    TJ acc;
    TGF(_set_inf)(&acc);
    for (int bit = 255; bit >= 0; bit--) {
        TGF(_dbl)(&acc, &acc);
        if ((k->l[bit / 64] >> (bit % 64)) & 1)
            TGF(_add)(&acc, &acc, p);
    }
    *r = acc;
}

/* the same point with Z multiplied by a random non-zero l */
static void TGF(_rescale_ct)(TJ *r, const TJ *p)
{
    TF l, l2, l3;
    memset(&l, 0, sizeof(l));
    czk_fp_from_u64((czk_fp *)&l, 2 + t_rand64() % 1000000007);
    TF_SQR(&l2, &l);
    TF_MUL(&l3, &l2, &l);
    TF_MUL(&r->x, &p->x, &l2);
    TF_MUL(&r->y, &p->y, &l3);
    TF_MUL(&r->z, &p->z, &l);
}

/* a ct result must be the same point as the reference, infinity exactly as
 * _set_inf writes it, and both normalisations must give the same bytes */
static int TGF(_same)(const TJ *got, const TJ *want)
{
    TA a1, a2, a3;
    TJ inf;
    TGF(_set_inf)(&inf);
    if (!TGF(_eq)(got, want))
        return 0;
    if (TGF(_is_inf)(got) && memcmp(got, &inf, sizeof(inf)) != 0)
        return 0;
    TGF(_to_aff)(&a1, want);
    TGF(_to_aff_ct)(&a2, got);
    TGF(_to_aff)(&a3, got);
    return memcmp(&a1, &a2, sizeof(a1)) == 0 && memcmp(&a1, &a3, sizeof(a1)) == 0;
}

static void TGF(_rand_scalar)(czk_fr *k, int it)
{
    for (int i = 0; i < 4; i++)
        k->l[i] = t_rand64();
    switch (it % 12) {
    case 0: memset(k, 0, sizeof(*k)); break;
    case 1: memset(k, 0, sizeof(*k)); k->l[0] = 1; break;
    case 2: memset(k, 0, sizeof(*k)); k->l[0] = 2; break;
    case 3: *k = CZK_FR_MOD; k->l[0] -= 1; break;  /* r - 1 */
    case 4: *k = CZK_FR_MOD; break;                /* r: k P = inf */
    case 5: *k = CZK_FR_MOD; k->l[0] += 1; break;  /* r + 1 */
    case 6: memset(k, 0xff, sizeof(*k)); break;    /* 2^256 - 1 */
    case 7: memset(k, 0, sizeof(*k)); k->l[3] = 1ULL << 63; break;
    case 8: k->l[3] &= 0x7fffffffffffffffULL; break;
    default: break;
    }
}

static void TC(test_ct_, TG)(int iters)
{
    TJ g, p, q, u, s, want, inf, inf2, inf3;
    TA ga, pa, qa, na, inf_a, a1, a2;
    o_pt og, o1;
    mpz_t k;
    int ninf = 0;

    o_pt_init(&og);
    o_pt_init(&o1);
    mpz_init(k);
    ga = TGEN;
    TGF(_from_aff)(&g, &ga);
    T_TO_O(&og, &ga);
    memset(&inf_a, 0, sizeof(inf_a));
    TGF(_set_inf)(&inf);
    TGF(_dbl)(&inf2, &g);
    memset(&inf2.z, 0, sizeof(inf2.z)); /* infinity with X, Y not (1, 1) */
    memset(&inf3, 0, sizeof(inf3));   /* all zero: Z == 0, so infinity too */

    /* scalar multiplication: edge scalars and random ones, on the generator,
     * random points (random Z), infinity in three Jacobian forms */
    for (int it = 0; it < iters; it++) {
        czk_fr kk, kb;
        TGF(_rand_scalar)(&kk, it);
        for (int i = 0; i < 4; i++)
            kb.l[i] = t_rand64();
        switch (it % 7) {
        case 0: p = g; break;
        case 1: p = inf; break;
        case 2: p = inf2; break;
        case 3: p = inf3; break;
        default:
            TGF(_ref_mul)(&p, &g, &kb);
            TGF(_rescale_ct)(&p, &p);
            break;
        }
        TGF(_ref_mul)(&want, &p, &kk);
        memset(&s, 0xa5, sizeof(s)); /* s may hold infinity from the last iteration */
        TGF(_mul_ct)(&s, &p, &kk);
        CHECK(TGF(_same)(&s, &want), "mul_ct vs double-and-add it=%d", it);
        ninf += TGF(_is_inf)(&s);
        u = p;
        TGF(_mul_ct)(&u, &u, &kk); /* aliased */
        CHECK(memcmp(&u, &s, sizeof(u)) == 0, "mul_ct aliased it=%d", it);
        memset(&u, 0xa5, sizeof(u)); /* u holds the aliased mul_ct's result */
        TGF(_mul)(&u, &p, &kk);
        CHECK(memcmp(&u, &s, sizeof(u)) == 0, "mul == mul_ct it=%d", it);
        TGF(_to_aff)(&pa, &p);
        memset(&s, 0xa5, sizeof(s)); /* s holds mul_ct's result */
        TGF(_mul_aff_ct)(&s, &pa, &kk);
        CHECK(TGF(_same)(&s, &want), "mul_aff_ct vs double-and-add it=%d", it);
        if (it % 4 == 0 && (it % 7) == 0) {
            /* k G against the GMP oracle */
            mpz_import(k, 4, -1, sizeof(uint64_t), 0, 0, kk.l);
            o_pt_mul(&o1, &og, k);
            TGF(_to_aff_ct)(&a1, &s);
            o_pt t;
            o_pt_init(&t);
            T_TO_O(&t, &a1);
            CHECK(t.inf == o1.inf && (t.inf || (o_f2_eq(&t.x, &o1.x) && o_f2_eq(&t.y, &o1.y))),
                  "mul_aff_ct(G) vs GMP oracle it=%d", it);
            o_pt_clear(&t);
        }
    }
    CHECK(ninf > 0 && ninf < iters, "scalar tests hit infinity %d of %d times", ninf, iters);

    /* additions: random, P + P (other Z), P + (-P), with infinity, aliased */
    for (int it = 0; it < iters; it++) {
        czk_fr ka, kb;
        TGF(_rand_scalar)(&ka, 9);
        TGF(_rand_scalar)(&kb, 10);
        TGF(_ref_mul)(&p, &g, &ka);
        TGF(_ref_mul)(&q, &g, &kb);
        TGF(_rescale_ct)(&p, &p);
        TGF(_to_aff)(&pa, &p);
        TGF(_to_aff)(&qa, &q);
        TGF(_aff_neg)(&na, &pa);
        switch (it % 8) {
        case 1: TGF(_rescale_ct)(&q, &p); qa = pa; break;             /* P + P */
        case 2: TGF(_neg)(&q, &p); TGF(_rescale_ct)(&q, &q); qa = na; break; /* P + (-P) */
        case 3: q = inf; qa = inf_a; break;
        case 4: q = inf2; qa = inf_a; break;
        case 5: p = inf; TGF(_to_aff)(&pa, &p); break;
        case 6: p = inf3; q = inf; qa = inf_a; TGF(_to_aff)(&pa, &p); break;
        default: break;
        }
        TGF(_aff_neg)(&na, &pa); /* p may have changed */
        TGF(_add)(&want, &p, &q);
        memset(&s, 0xa5, sizeof(s)); /* s may hold infinity from the last iteration */
        TGF(_add_ct)(&s, &p, &q);
        CHECK(TGF(_same)(&s, &want), "add_ct vs add it=%d", it);
        memset(&s, 0xa5, sizeof(s)); /* s holds add_ct's result, here and below */
        TGF(_add_ct)(&s, &q, &p);
        CHECK(TGF(_same)(&s, &want), "add_ct commuted it=%d", it);
        u = p;
        TGF(_add_ct)(&u, &u, &q);
        CHECK(TGF(_same)(&u, &want), "add_ct aliased it=%d", it);
        u = q; /* aliased on the other operand: not vacuous when Q is infinity */
        TGF(_add_ct)(&u, &p, &u);
        CHECK(TGF(_same)(&u, &want), "add_ct aliased on b it=%d", it);
        memset(&s, 0xa5, sizeof(s));
        TGF(_add_aff_ct)(&s, &p, &qa);
        CHECK(TGF(_same)(&s, &want), "add_aff_ct vs add it=%d", it);
        u = p;
        TGF(_add_aff_ct)(&u, &u, &qa);
        CHECK(TGF(_same)(&u, &want), "add_aff_ct aliased it=%d", it);
        if (it % 8 == 2)
            CHECK(TGF(_is_inf)(&s), "P + (-P) is infinity it=%d", it);
        /* P + P through add_ct equals dbl */
        TGF(_dbl)(&want, &p);
        TGF(_rescale_ct)(&u, &p);
        memset(&s, 0xa5, sizeof(s)); /* s holds P + Q, which is 2P when Q is P */
        TGF(_add_ct)(&s, &p, &u);
        CHECK(TGF(_same)(&s, &want), "add_ct(P, P) == dbl it=%d", it);
        memset(&s, 0xa5, sizeof(s));
        TGF(_add_aff_ct)(&s, &u, &pa);
        CHECK(TGF(_same)(&s, &want), "add_aff_ct(P, P) == dbl it=%d", it);
        memset(&s, 0xa5, sizeof(s)); /* s is infinity already when P is */
        TGF(_add_aff_ct)(&s, &u, &na);
        CHECK(TGF(_is_inf)(&s), "add_aff_ct(P, -P) is infinity it=%d", it);
    }

    /* to_aff_ct == to_aff byte for byte; every infinity form gives all zero */
    for (int it = 0; it < iters; it++) {
        czk_fr kb;
        TGF(_rand_scalar)(&kb, it);
        TGF(_ref_mul)(&p, &g, &kb);
        TGF(_rescale_ct)(&p, &p);
        TGF(_to_aff)(&a1, &p);
        TGF(_to_aff_ct)(&a2, &p);
        CHECK(memcmp(&a1, &a2, sizeof(a1)) == 0, "to_aff_ct == to_aff it=%d", it);
    }
    memset(&a1, 0xa5, sizeof(a1)); /* a1 is all zero already after the first of these */
    TGF(_to_aff_ct)(&a1, &inf);
    CHECK(memcmp(&a1, &inf_a, sizeof(a1)) == 0, "to_aff_ct(1, 1, 0) is all zero");
    memset(&a1, 0xa5, sizeof(a1));
    TGF(_to_aff_ct)(&a1, &inf2);
    CHECK(memcmp(&a1, &inf_a, sizeof(a1)) == 0, "to_aff_ct(X, Y, 0) is all zero");
    memset(&a1, 0xa5, sizeof(a1));
    TGF(_to_aff_ct)(&a1, &inf3);
    CHECK(memcmp(&a1, &inf_a, sizeof(a1)) == 0, "to_aff_ct(0, 0, 0) is all zero");
    memset(&s, 0xa5, sizeof(s));
    TGF(_mul_aff_ct)(&s, &inf_a, &CZK_FR_ONE);
    CHECK(memcmp(&s, &inf, sizeof(s)) == 0, "mul_aff_ct(inf) is (1, 1, 0)");

    o_pt_clear(&og);
    o_pt_clear(&o1);
    mpz_clear(k);
}
#undef TGF
