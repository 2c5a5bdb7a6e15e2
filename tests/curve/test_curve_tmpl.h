/*
 * test_curve_tmpl.h — the G1 / G2 test body, included by test_curve.c once
 * per group with TG (function prefix), TJ / TA (Jacobian / affine types),
 * TF (coordinate type), T_TO_O / T_FROM_O (affine <-> oracle point), TB (the
 * oracle's curve constant), T_GEN_HEX (4 hex strings: x.c0 x.c1 y.c0 y.c1).
 */
#define TC_(a, b) a##b
#define TC(a, b) TC_(a, b)
#define TGF(op) TC(TG, op)

/* Jacobian copy of an affine point with a random Z (same point, other coordinates) */
static void TC(TG, _rescale)(TJ *r, const TJ *p)
{
    TF l, l2, l3;
    memset(&l, 0, sizeof(l));
    czk_fp_from_u64((czk_fp *)&l, 2 + t_rand64() % 1000000);
    TF_SQR(&l2, &l);
    TF_MUL(&l3, &l2, &l);
    TF_MUL(&r->x, &p->x, &l2);
    TF_MUL(&r->y, &p->y, &l3);
    TF_MUL(&r->z, &p->z, &l);
}

/* compare a Jacobian point with an oracle point */
static int TC(TG, _is_o)(const TJ *p, const o_pt *o)
{
    TA a;
    o_pt t;
    TGF(_to_aff)(&a, p);
    o_pt_init(&t);
    T_TO_O(&t, &a);
    int ok = t.inf == o->inf && (t.inf || (o_f2_eq(&t.x, &o->x) && o_f2_eq(&t.y, &o->y)));
    o_pt_clear(&t);
    return ok;
}

static void TC(test_, TG)(int nmul, int nfb)
{
    o_pt og, o1, o2, o3;
    mpz_t k, k2;
    TJ g, p, q, s, u;
    TA ga, pa, qa, inf_a;
    o_pt_init(&og); o_pt_init(&o1); o_pt_init(&o2); o_pt_init(&o3);
    mpz_inits(k, k2, NULL);
    memset(&inf_a, 0, sizeof(inf_a));

    /* generator: standard coordinates, on the curve, order r */
    {
        const char *hex[4] = T_GEN_HEX;
        mpz_set_str(og.x.a, hex[0], 16);
        mpz_set_str(og.x.b, hex[1], 16);
        mpz_set_str(og.y.a, hex[2], 16);
        mpz_set_str(og.y.b, hex[3], 16);
        og.inf = 0;
        T_TO_O(&o1, &TC(TC(CZK_, TGEN), _GEN));
        CHECK(!o1.inf && o_f2_eq(&o1.x, &og.x) && o_f2_eq(&o1.y, &og.y), "generator coordinates");
        CHECK(o_pt_on_curve(&og, &TB), "oracle: generator on curve");
        o_pt_mul(&o1, &og, o_r);
        CHECK(o1.inf, "oracle: r * G == infinity");
    }
    ga = TC(TC(CZK_, TGEN), _GEN);
    TGF(_from_aff)(&g, &ga);
    CHECK(TGF(_aff_on_curve)(&ga), "generator on curve");
    CHECK(TGF(_aff_in_subgroup)(&ga), "generator in subgroup");
    CHECK(TGF(_aff_on_curve)(&inf_a) && TGF(_aff_is_inf)(&inf_a), "infinity on curve");
    CHECK(TGF(_aff_in_subgroup)(&inf_a), "infinity in subgroup");
    {
        czk_fr r_std = CZK_FR_MOD;
        TGF(_mul)(&p, &g, &r_std);
        CHECK(TGF(_is_inf)(&p), "r * G == infinity");
        TGF(_to_aff)(&pa, &p);
        CHECK(memcmp(&pa, &inf_a, sizeof(pa)) == 0, "to_aff(infinity) is all zero");
    }

    /* scalar multiples against the oracle */
    for (int it = 0; it < nmul; it++) {
        czk_fr ks;
        for (int i = 0; i < 4; i++)
            ks.l[i] = t_rand64();
        switch (it) {
        case 0: memset(&ks, 0, sizeof(ks)); break;
        case 1: memset(&ks, 0, sizeof(ks)); ks.l[0] = 1; break;
        case 2: memset(&ks, 0, sizeof(ks)); ks.l[0] = 2; break;
        case 3: ks = CZK_FR_MOD; ks.l[0] -= 1; break;
        case 4: ks = CZK_FR_MOD; ks.l[0] += 1; break;
        case 5: memset(&ks, 0xff, sizeof(ks)); break;
        default:
            if (it % 3 == 0)
                ks.l[3] &= 0x7fffffffffffffffULL;
            break;
        }
        mpz_import(k, 4, -1, sizeof(uint64_t), 0, 0, ks.l);
        o_pt_mul(&o1, &og, k);
        if (it % 2)
            TGF(_mul_aff)(&p, &ga, &ks);
        else
            TGF(_mul)(&p, &g, &ks);
        CHECK(TC(TG, _is_o)(&p, &o1), "k * G vs oracle it=%d", it);
    }

    /* add / dbl / mixed add against the oracle and each other */
    for (int it = 0; it < nmul; it++) {
        czk_fr ka, kb;
        for (int i = 0; i < 4; i++) {
            ka.l[i] = t_rand64();
            kb.l[i] = t_rand64();
        }
        ka.l[3] >>= 2;
        kb.l[3] >>= 2;
        TGF(_mul)(&p, &g, &ka);
        TGF(_mul)(&q, &g, &kb);
        TGF(_to_aff)(&pa, &p);
        TGF(_to_aff)(&qa, &q);
        T_TO_O(&o1, &pa);
        T_TO_O(&o2, &qa);
        CHECK(TGF(_aff_on_curve)(&pa) && o_pt_on_curve(&o1, &TB), "k*G on curve it=%d", it);
        o_pt_add(&o3, &o1, &o2);

        TC(TG, _rescale)(&u, &q);
        TGF(_add)(&s, &p, &u);
        CHECK(TC(TG, _is_o)(&s, &o3), "add vs oracle it=%d", it);
        memset(&s, 0xa5, sizeof(s)); /* s holds P + Q from add */
        TGF(_add_aff)(&s, &p, &qa);
        CHECK(TC(TG, _is_o)(&s, &o3), "add_aff vs oracle it=%d", it);
        s = p;
        TGF(_add)(&s, &s, &q);
        CHECK(TC(TG, _is_o)(&s, &o3), "add aliased it=%d", it);

        o_pt_add(&o3, &o1, &o1);
        TGF(_dbl)(&s, &p);
        CHECK(TC(TG, _is_o)(&s, &o3), "dbl vs oracle it=%d", it);
        TC(TG, _rescale)(&u, &p);
        TGF(_add)(&s, &p, &u); /* doubling through add, different Z */
        CHECK(TC(TG, _is_o)(&s, &o3), "add(P, P) == 2P it=%d", it);
        memset(&s, 0xa5, sizeof(s)); /* s holds 2P from add */
        TGF(_add_aff)(&s, &u, &pa);
        CHECK(TC(TG, _is_o)(&s, &o3), "add_aff(P, P) == 2P it=%d", it);
        CHECK(TGF(_eq)(&u, &p) && !TGF(_eq)(&p, &q), "eq across representations it=%d", it);

        /* opposite points and infinity */
        TGF(_neg)(&s, &u);
        TGF(_add)(&s, &p, &s);
        CHECK(TGF(_is_inf)(&s), "P + (-P) == inf it=%d", it);
        TA na;
        TGF(_aff_neg)(&na, &pa);
        TGF(_add_aff)(&s, &u, &na);
        CHECK(TGF(_is_inf)(&s), "add_aff(P, -P) == inf it=%d", it);
        TJ inf;
        TGF(_set_inf)(&inf);
        TGF(_add)(&s, &inf, &u);
        CHECK(TGF(_eq)(&s, &p), "inf + P it=%d", it);
        memset(&s, 0xa5, sizeof(s)); /* s holds P from the line before, here and below */
        TGF(_add)(&s, &u, &inf);
        CHECK(TGF(_eq)(&s, &p), "P + inf it=%d", it);
        memset(&s, 0xa5, sizeof(s));
        TGF(_add_aff)(&s, &inf, &pa);
        CHECK(TGF(_eq)(&s, &p), "add_aff(inf, P) it=%d", it);
        memset(&s, 0xa5, sizeof(s));
        TGF(_add_aff)(&s, &u, &inf_a);
        CHECK(TGF(_eq)(&s, &p), "add_aff(P, inf) it=%d", it);
        TGF(_dbl)(&s, &inf);
        CHECK(TGF(_is_inf)(&s), "dbl(inf) it=%d", it);
        CHECK(!TGF(_eq)(&inf, &p) && TGF(_eq)(&inf, &s), "eq with infinity it=%d", it);
        CHECK(TGF(_aff_in_subgroup)(&pa), "k*G in subgroup it=%d", it);
    }

    /* batch_to_aff == to_aff, with infinities mixed in */
    {
        enum { NB = 37 };
        TJ in[NB];
        TA out[NB], one;
        TF scratch[NB];
        TGF(_set_inf)(&in[0]);
        for (int i = 1; i < NB; i++) {
            if (i % 9 == 4)
                TGF(_set_inf)(&in[i]);
            else
                TGF(_add)(&in[i], &in[i - 1], &g), TC(TG, _rescale)(&in[i], &in[i]);
        }
        TGF(_batch_to_aff)(out, in, NB, scratch);
        for (int i = 0; i < NB; i++) {
            TGF(_to_aff)(&one, &in[i]);
            CHECK(memcmp(&one, &out[i], sizeof(one)) == 0, "batch_to_aff[%d] == to_aff", i);
        }
    }

    /* off the curve, not canonical, on the curve but outside the subgroup */
    {
        TA bad = ga;
        czk_fp_add((czk_fp *)&bad.y, (const czk_fp *)&bad.y, &CZK_FP_ONE);
        CHECK(!TGF(_aff_on_curve)(&bad) && !TGF(_aff_in_subgroup)(&bad), "point off the curve rejected");
        bad = ga;
        /* x + q as raw limbs: same residue, not canonical */
        uint64_t c = 0;
        czk_fp *bx = (czk_fp *)&bad.x;
        for (int i = 0; i < 6; i++) {
            unsigned __int128 t = (unsigned __int128)bx->l[i] + CZK_FP_MOD.l[i] + c;
            bx->l[i] = (uint64_t)t;
            c = (uint64_t)(t >> 64);
        }
        CHECK(!TGF(_aff_on_curve)(&bad), "non-canonical x rejected");

        /* several curve points outside the subgroup, from successive x values */
        int found = 0;
        for (int idx = 0; idx < 6; idx++) {
            TA nsg, qa2;
            if (!T_FIND_NON_SUBGROUP(&nsg, idx))
                break;
            found++;
            T_TO_O(&o1, &nsg);
            CHECK(o_pt_on_curve(&o1, &TB), "oracle: point %d is on the curve", idx);
            o_pt_mul(&o2, &o1, o_r);
            CHECK(!o2.inf, "oracle: r * P != inf for point %d", idx);
            CHECK(TGF(_aff_on_curve)(&nsg), "non-subgroup point %d is on the curve", idx);
            CHECK(!TGF(_aff_in_subgroup)(&nsg), "non-subgroup point %d rejected", idx);
            /* r * P: a pure cofactor-torsion point, never in the subgroup */
            czk_fr r_std = CZK_FR_MOD;
            TGF(_mul_aff)(&p, &nsg, &r_std);
            TGF(_to_aff)(&qa2, &p);
            CHECK(TC(TG, _is_o)(&p, &o2), "r * P (outside the subgroup) vs oracle, point %d", idx);
            CHECK(!TGF(_aff_in_subgroup)(&qa2), "torsion point r * P rejected, point %d", idx);
            /* P + G: still outside */
            TGF(_add_aff)(&p, &g, &nsg);
            TGF(_to_aff)(&qa2, &p);
            CHECK(!TGF(_aff_in_subgroup)(&qa2), "P + G rejected, point %d", idx);
            /* cofactor * P (computed by the oracle) is in the subgroup */
            mpz_set_str(k, T_COFACTOR_HEX, 16);
            o_pt_mul(&o3, &o1, k);
            o_pt_mul(&o2, &o3, o_r);
            CHECK(o2.inf && !o3.inf, "oracle: h * P in the subgroup, point %d", idx);
            T_FROM_O(&qa2, &o3);
            CHECK(TGF(_aff_in_subgroup)(&qa2), "h * P accepted, point %d", idx);
            if (idx == 0) {
                /* arithmetic agrees with the oracle outside the subgroup */
                mpz_set_ui(k, 0x1234567);
                czk_fr ks = {{0x1234567, 0, 0, 0}};
                TGF(_mul_aff)(&p, &nsg, &ks);
                o_pt_mul(&o2, &o1, k);
                CHECK(TC(TG, _is_o)(&p, &o2), "k * P (outside the subgroup) vs oracle");
            }
        }
        CHECK(found == 6, "found %d of 6 curve points by trying x values", found);
    }

    /* fixed-base tables */
    {
        TC(TG, _fb) *tb;
        CHECK(TGF(_fb_new)(&tb, &ga, 1) == -EINVAL, "fb window 1 rejected");
        CHECK(TGF(_fb_new)(&tb, &ga, 40) == -EINVAL, "fb window 40 rejected");
        const unsigned ws[] = {2, 3, 5, 8, 11};
        for (size_t wi = 0; wi < sizeof(ws) / sizeof(ws[0]); wi++) {
            /* a random base, not only the generator */
            czk_fr kb = {{t_rand64(), t_rand64(), t_rand64(), t_rand64() >> 2}};
            TA base;
            TGF(_mul)(&p, &g, &kb);
            TGF(_to_aff)(&base, &p);
            if (wi == 0)
                base = ga;
            int rc = TGF(_fb_new)(&tb, &base, ws[wi]);
            CHECK(rc == 0, "fb_new w=%u", ws[wi]);
            if (rc)
                continue;
            TGF(_from_aff)(&q, &base);
            for (int it = 0; it < nfb; it++) {
                czk_fr ks;
                for (int i = 0; i < 4; i++)
                    ks.l[i] = t_rand64();
                if (it == 0) memset(&ks, 0, sizeof(ks));
                if (it == 1) memset(&ks, 0xff, sizeof(ks));
                if (it == 2) ks = CZK_FR_MOD;
                if (it == 3) { memset(&ks, 0, sizeof(ks)); ks.l[0] = 1; }
                if (it == 4) { for (int i = 0; i < 4; i++) ks.l[i] = 0xaaaaaaaaaaaaaaaaULL; }
                if (it == 5) { for (int i = 0; i < 4; i++) ks.l[i] = 0x8080808080808080ULL; }
                TGF(_fb_mul)(&s, tb, &ks);
                TGF(_mul)(&u, &q, &ks);
                CHECK(TGF(_eq)(&s, &u), "fb_mul == mul w=%u it=%d", ws[wi], it);
            }
            TGF(_fb_free)(tb);
        }
        /* table of infinity */
        CHECK(TGF(_fb_new)(&tb, &inf_a, 4) == 0, "fb_new(inf)");
        czk_fr ks = {{t_rand64(), 5, 6, 7}};
        TGF(_fb_mul)(&s, tb, &ks);
        CHECK(TGF(_is_inf)(&s), "fb_mul on the infinity table");
        TGF(_fb_free)(tb);
        /* fb against the oracle once */
        CHECK(TGF(_fb_new)(&tb, &ga, 6) == 0, "fb_new(G, 6)");
        ks = (czk_fr){{t_rand64(), t_rand64(), t_rand64(), t_rand64()}};
        mpz_import(k, 4, -1, sizeof(uint64_t), 0, 0, ks.l);
        o_pt_mul(&o1, &og, k);
        TGF(_fb_mul)(&s, tb, &ks);
        CHECK(TC(TG, _is_o)(&s, &o1), "fb_mul vs oracle");
        TGF(_fb_free)(tb);
    }

    o_pt_clear(&og); o_pt_clear(&o1); o_pt_clear(&o2); o_pt_clear(&o3);
    mpz_clears(k, k2, NULL);
}
#undef TGF
