/*
 * test_field_tmpl.h — the Fp / Fr test body, included by test_field.c once per
 * field with TF (czk_fp / czk_fr), TP (function prefix), TN (limbs), TNAME.
 * Every result is compared with GMP on the plain integers: a Montgomery
 * value with raw limbs A stands for A * R^-1 mod m.
 */
#define TCAT_(a, b) a##b
#define TCAT(a, b) TCAT_(a, b)
#define TFN(op) TCAT(TP, op)

static void TCAT(tf_to_raw_, TP)(TF *x, const mpz_t z) { t_mpz_to_limbs(x->l, z, TN); }
static void TCAT(tf_from_raw_, TP)(mpz_t z, const TF *x) { t_limbs_to_mpz(z, x->l, TN); }

static void TCAT(test_, TP)(const char *modhex, int iters)
{
    mpz_t m, R, Rinv, a, b, e, got, want, t;
    mpz_inits(m, R, Rinv, a, b, e, got, want, t, NULL);
    mpz_set_str(m, modhex, 16);
    mpz_setbit(R, 64 * TN);
    mpz_mod(R, R, m);
    mpz_invert(Rinv, R, m);
#define TO_RAW TCAT(tf_to_raw_, TP)
#define FROM_RAW TCAT(tf_from_raw_, TP)
/* want := value of Montgomery limbs; got := raw limbs of x */
#define MONT_VALUE(z, x) do { FROM_RAW(z, x); mpz_mul(z, z, Rinv); mpz_mod(z, z, m); } while (0)
#define SET_MONT(x, v) do { mpz_mul(t, v, R); mpz_mod(t, t, m); TO_RAW(x, t); } while (0)

    /* constants */
    {
        TF mod, one;
        TO_RAW(&mod, m);
        CHECK(memcmp(&mod, &TCAT(TCAT(CZK_, TNAME), _MOD), sizeof(TF)) == 0, "modulus constant");
        TO_RAW(&one, R);
        CHECK(memcmp(&one, &TCAT(TCAT(CZK_, TNAME), _ONE), sizeof(TF)) == 0, "one constant (R mod m)");
        CHECK(TFN(_is_zero)(&TCAT(TCAT(CZK_, TNAME), _ZERO)), "zero constant");
    }

    for (int it = 0; it < iters; it++) {
        TF x, y, z, w;
        t_rand_mod(a, m, TN);
        t_rand_mod(b, m, TN);
        SET_MONT(&x, a);
        SET_MONT(&y, b);

        TFN(_add)(&z, &x, &y);
        MONT_VALUE(got, &z); mpz_add(want, a, b); mpz_mod(want, want, m);
        CHECK(mpz_cmp(got, want) == 0, "add it=%d", it);
        TFN(_sub)(&z, &x, &y);
        MONT_VALUE(got, &z); mpz_sub(want, a, b); mpz_mod(want, want, m);
        CHECK(mpz_cmp(got, want) == 0, "sub it=%d", it);
        TFN(_mul)(&z, &x, &y);
        MONT_VALUE(got, &z); mpz_mul(want, a, b); mpz_mod(want, want, m);
        CHECK(mpz_cmp(got, want) == 0, "mul it=%d", it);
        TFN(_sqr)(&z, &x);
        MONT_VALUE(got, &z); mpz_mul(want, a, a); mpz_mod(want, want, m);
        CHECK(mpz_cmp(got, want) == 0, "sqr it=%d", it);
        TFN(_dbl)(&z, &x);
        MONT_VALUE(got, &z); mpz_add(want, a, a); mpz_mod(want, want, m);
        CHECK(mpz_cmp(got, want) == 0, "dbl it=%d", it);
        TFN(_neg)(&z, &x);
        MONT_VALUE(got, &z); mpz_neg(want, a); mpz_mod(want, want, m);
        CHECK(mpz_cmp(got, want) == 0, "neg it=%d", it);
        /* fully reduced outputs */
        FROM_RAW(got, &z);
        CHECK(mpz_cmp(got, m) < 0, "neg output not reduced");

        /* aliasing: r == a and r == b */
        w = x; TFN(_mul)(&w, &w, &y);
        TFN(_mul)(&z, &x, &y);
        CHECK(TFN(_eq)(&w, &z), "mul aliasing r==a");
        w = y; TFN(_sub)(&w, &x, &w);
        TFN(_sub)(&z, &x, &y);
        CHECK(TFN(_eq)(&w, &z), "sub aliasing r==b");
        CHECK(TFN(_eq)(&x, &y) == (mpz_cmp(a, b) == 0), "eq");
        CHECK(TFN(_is_zero)(&x) == (mpz_sgn(a) == 0), "is_zero");

        /* inverse */
        int rc = TFN(_inv)(&z, &x);
        if (mpz_sgn(a) == 0) {
            CHECK(rc == -EDOM && TFN(_is_zero)(&z), "inv(0) must fail with -EDOM and give 0");
        } else {
            MONT_VALUE(got, &z);
            mpz_invert(want, a, m);
            CHECK(rc == 0 && mpz_cmp(got, want) == 0, "inv it=%d", it);
        }

        /* pow with a random exponent of 1..5 limbs */
        if (it % 4 == 0) {
            uint64_t el[5];
            int nl = 1 + (int)(t_rand64() % 5);
            for (int i = 0; i < nl; i++)
                el[i] = t_rand64();
            if (it % 8 == 0)
                el[0] = it % 16 == 0 ? 0 : 1, nl = 1;
            TFN(_pow)(&z, &x, el, (size_t)nl);
            t_limbs_to_mpz(e, el, nl);
            mpz_powm(want, a, e, m);
            MONT_VALUE(got, &z);
            CHECK(mpz_cmp(got, want) == 0, "pow it=%d", it);
        }

        /* to_mont / from_mont on raw integers */
        TO_RAW(&w, a);
        TFN(_to_mont)(&z, &w);
        FROM_RAW(got, &z); mpz_mul(want, a, R); mpz_mod(want, want, m);
        CHECK(mpz_cmp(got, want) == 0, "to_mont it=%d", it);
        TFN(_from_mont)(&z, &x); /* x holds a in Montgomery form */
        FROM_RAW(got, &z);
        CHECK(mpz_cmp(got, a) == 0, "from_mont it=%d", it);
        CHECK(TFN(_is_canonical)(&w), "is_canonical(a)");

        /* bytes, little endian of the standard integer */
        {
            uint8_t buf[8 * TN], ref[8 * TN];
            size_t cnt = 0;
            memset(ref, 0, sizeof(ref));
            mpz_export(ref, &cnt, -1, 1, 0, 0, a);
            TFN(_to_bytes_le)(buf, &x);
            CHECK(memcmp(buf, ref, sizeof(buf)) == 0, "to_bytes_le it=%d", it);
            rc = TFN(_from_bytes_le)(&z, ref);
            CHECK(rc == 0 && TFN(_eq)(&z, &x), "from_bytes_le it=%d", it);
        }
        /* decimal */
        {
            char dec[TCAT(TCAT(CZK_, TNAME), _DEC_MAX)];
            char *ref = mpz_get_str(NULL, 10, a);
            TFN(_to_dec)(dec, &x);
            CHECK(strcmp(dec, ref) == 0, "to_dec it=%d: %s vs %s", it, dec, ref);
            memset(&z, 0xa5, sizeof(z)); /* z already holds x, from from_bytes_le */
            rc = TFN(_from_dec)(&z, ref);
            CHECK(rc == 0 && TFN(_eq)(&z, &x), "from_dec it=%d (%s)", it, ref);
            free(ref);
        }
        /* from_u64 */
        {
            uint64_t v = t_rand64() >> (t_rand64() % 64);
            TFN(_from_u64)(&z, v);
            MONT_VALUE(got, &z);
            CHECK(mpz_cmp_ui(got, v) == 0, "from_u64(%llu)", (unsigned long long)v);
        }
    }

    /* out-of-range bytes and raw integers: m, m + 1, 2^(64n) - 1, 2^(bits) */
    {
        const char *bad_dec[] = {"", "-1", "+1", " 1", "1 ", "12a", "0x10", "1.0", "\xc2\xb2", NULL};
        mpz_t bad[4];
        for (int i = 0; i < 4; i++)
            mpz_init(bad[i]);
        mpz_set(bad[0], m);
        mpz_add_ui(bad[1], m, 1);
        mpz_setbit(bad[2], 64 * TN); mpz_sub_ui(bad[2], bad[2], 1);
        mpz_setbit(bad[3], mpz_sizeinbase(m, 2));
        for (int i = 0; i < 4; i++) {
            uint8_t buf[8 * TN];
            size_t cnt = 0;
            TF z, raw;
            memset(buf, 0, sizeof(buf));
            mpz_export(buf, &cnt, -1, 1, 0, 0, bad[i]);
            CHECK(TFN(_from_bytes_le)(&z, buf) == -ERANGE, "from_bytes_le must reject value %d", i);
            TO_RAW(&raw, bad[i]);
            CHECK(!TFN(_is_canonical)(&raw), "is_canonical must reject value %d", i);
            char *s = mpz_get_str(NULL, 10, bad[i]);
            CHECK(TFN(_from_dec)(&z, s) == -ERANGE, "from_dec must reject %s with -ERANGE", s);
            free(s);
            mpz_clear(bad[i]);
        }
        for (int i = 0; bad_dec[i]; i++) {
            TF z;
            CHECK(TFN(_from_dec)(&z, bad_dec[i]) == -EINVAL, "from_dec must reject \"%s\"", bad_dec[i]);
        }
        /* too long: more digits than the buffer size, even when the value is small */
        char longs[400];
        TF z;
        memset(longs, '0', sizeof(longs));
        longs[sizeof(longs) - 2] = '7';
        longs[sizeof(longs) - 1] = '\0';
        CHECK(TFN(_from_dec)(&z, longs) == -EINVAL, "from_dec must reject a 399-digit string");
        /* the largest accepted length with leading zeros is fine */
        size_t maxd = TCAT(TCAT(CZK_, TNAME), _DEC_MAX) - 1;
        char *p = longs + sizeof(longs) - 1 - maxd;
        CHECK(TFN(_from_dec)(&z, p) == 0, "from_dec of %zu digits with leading zeros", maxd);
        MONT_VALUE(got, &z);
        CHECK(mpz_cmp_ui(got, 7) == 0, "from_dec of zero-padded 7");
        CHECK(TFN(_from_dec)(&z, p - 1) == -EINVAL, "from_dec of %zu digits must fail", maxd + 1);
        /* all nines of maximum length: out of range */
        memset(longs, '9', maxd);
        longs[maxd] = '\0';
        CHECK(TFN(_from_dec)(&z, longs) == -ERANGE, "from_dec of %zu nines must be -ERANGE", maxd);
        /* m - 1 round trip */
        mpz_sub_ui(a, m, 1);
        char *s = mpz_get_str(NULL, 10, a);
        char dec[TCAT(TCAT(CZK_, TNAME), _DEC_MAX)];
        CHECK(TFN(_from_dec)(&z, s) == 0, "from_dec(m-1)");
        TFN(_to_dec)(dec, &z);
        CHECK(strcmp(dec, s) == 0, "to_dec(m-1)");
        free(s);
        TFN(_to_dec)(dec, &TCAT(TCAT(CZK_, TNAME), _ZERO));
        CHECK(strcmp(dec, "0") == 0, "to_dec(0) = %s", dec);
    }
#undef TO_RAW
#undef FROM_RAW
#undef MONT_VALUE
#undef SET_MONT
    mpz_clears(m, R, Rinv, a, b, e, got, want, t, NULL);
}
#undef TFN
