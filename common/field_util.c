/*
 * field_util.c — limb-count-generic helpers shared by the Fp and Fr code:
 * decimal conversion (snarkjs JSON) and comparison of plain n-limb integers
 * (least significant limb first).  Not on any hot path.
 */
#include <errno.h>
#include <string.h>

#include "common/field_impl.h"

#define CZK_FIELD_MAX_LIMBS 8

int czk_field_lt_(const uint64_t *a, const uint64_t *m, int n)
{
    for (int i = n - 1; i >= 0; i--) {
        if (a[i] != m[i])
            return a[i] < m[i];
    }
    return 0;
}

void czk_field_to_dec_(char *out, const uint64_t *a, int n)
{
    uint64_t t[CZK_FIELD_MAX_LIMBS];
    char rev[20 * CZK_FIELD_MAX_LIMBS + 1];
    size_t len = 0;
    int top = n;

    memcpy(t, a, (size_t)n * sizeof(uint64_t));
    while (top > 0 && t[top - 1] == 0)
        top--;
    if (top == 0) {
        out[0] = '0';
        out[1] = '\0';
        return;
    }
    /* divide by 10^19 repeatedly; each remainder gives 19 digits */
    const uint64_t chunk = 10000000000000000000ULL;
    while (top > 0) {
        czk_u128 rem = 0;
        for (int i = top - 1; i >= 0; i--) {
            czk_u128 cur = (rem << 64) | t[i];
            t[i] = (uint64_t)(cur / chunk);
            rem = cur % chunk;
        }
        while (top > 0 && t[top - 1] == 0)
            top--;
        uint64_t r = (uint64_t)rem;
        for (int d = 0; d < 19; d++) {
            rev[len++] = (char)('0' + r % 10);
            r /= 10;
            if (top == 0 && r == 0)
                break;
        }
    }
    while (len > 1 && rev[len - 1] == '0')
        len--;
    for (size_t i = 0; i < len; i++)
        out[i] = rev[len - 1 - i];
    out[len] = '\0';
}

int czk_field_from_dec_(uint64_t *out, const char *s, const uint64_t *m, int n, size_t max_digits)
{
    /* one spare limb: max_digits decimal digits always fit in n + 1 limbs
     * (callers pass max_digits < 19.2 * (n + 1)) */
    uint64_t t[CZK_FIELD_MAX_LIMBS + 1] = {0};
    size_t len = 0;

    if (s == NULL || s[0] == '\0')
        return -EINVAL;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return -EINVAL;
        if (++len > max_digits)
            return -EINVAL;
        uint64_t carry = (uint64_t)(*p - '0');
        for (int i = 0; i <= n; i++) {
            czk_u128 v = (czk_u128)t[i] * 10 + carry;
            t[i] = (uint64_t)v;
            carry = (uint64_t)(v >> 64);
        }
    }
    if (t[n] != 0 || !czk_field_lt_(t, m, n))
        return -ERANGE;
    memcpy(out, t, (size_t)n * sizeof(uint64_t));
    return 0;
}
