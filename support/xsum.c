/* xsum: exact accumulation of doubles in a fixed-point integer, rounded once (see xsum.h).
 *
 * No FP contraction: the only floating-point operation in this file is the product
 * x[i] * y[i], whose result is used solely as a bit pattern (memcpy into a uint64_t).
 * There is no addition for a compiler to fuse it with, so no fma can be formed whatever
 * -ffp-contract says; objdump of the -O2 -march=native builds (gcc 12, clang) shows a
 * plain vmulsd/vmulpd and no vfmadd. Clang honours the standard pragma, so say it anyway;
 * gcc ignores it with a warning, hence the guard. */
#include "xsum.h"

#include <math.h>
#include <string.h>

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

#define TOP (XSUM_DIGITS - 1)
#define DIGIT_MASK UINT64_C(0xffffffff)
#define DIGIT_BASE (INT64_C(1) << 32)
#define FRAC_MASK ((UINT64_C(1) << 52) - 1)
#define EXP_ALL_ONES 0x7ff
#define INF_BITS UINT64_C(0x7ff0000000000000)
#define SIGN_BIT (UINT64_C(1) << 63)
/* A significand whose lowest bit sits at position 2046 or above is >= 2^1024. */
#define OVERFLOW_POS 2046

static uint64_t bits_of(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

static double double_of(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

void xsum_init(xsum_t *acc)
{
    memset(acc, 0, sizeof *acc);
}

static void add_nonfinite(xsum_t *acc, uint64_t bits)
{
    if (bits & FRAC_MASK)
        acc->word[XSUM_NAN_WORD]++;
    else
        acc->word[(bits & SIGN_BIT) ? XSUM_NEGINF_WORD : XSUM_POSINF_WORD]++;
}

/* Adds the double with these bits without carrying. A finite double is m * 2^(pos-1074)
 * with an integer m < 2^53 and pos >= 0 (normal: m has the hidden bit and pos is the
 * biased exponent minus 1; subnormal: pos 0), so m lands at bit `pos` of the fixed-point
 * number and spans at most three 32-bit digits. */
static inline void add_bits(xsum_t *acc, uint64_t bits)
{
    uint64_t biased = (bits >> 52) & EXP_ALL_ONES;
    if (biased == EXP_ALL_ONES) {
        add_nonfinite(acc, bits);
        return;
    }
    uint64_t normal = biased != 0;
    uint64_t m = (bits & FRAC_MASK) | (normal << 52);
    unsigned pos = (unsigned)(biased - normal);
    unsigned k = pos >> 5, s = pos & 31;
    uint64_t lo = m << s;                 /* low 64 bits of m * 2^s */
    uint64_t hi = (m >> 1) >> (63 - s);   /* the rest; two shifts avoid a shift by 64 */
    int64_t neg = -(int64_t)(bits >> 63); /* 0 or -1: (d ^ neg) - neg is d or -d */
    acc->word[k] += ((int64_t)(lo & DIGIT_MASK) ^ neg) - neg;
    acc->word[k + 1] += ((int64_t)(lo >> 32) ^ neg) - neg;
    acc->word[k + 2] += ((int64_t)hi ^ neg) - neg;
}

/* Each addition moves a word by less than 2^32, so XSUM_PENDING_MAX = 2^20 of them keep
 * a word that started below 2^62 (normalized, or an MPI_SUM of normalized words) below
 * 2^63. */
static int64_t room(const xsum_t *acc)
{
    return XSUM_PENDING_MAX - acc->pending;
}

static void settle(xsum_t *acc, int64_t added)
{
    acc->pending += added;
    if (acc->pending >= XSUM_PENDING_MAX)
        xsum_normalize(acc);
}

void xsum_add(xsum_t *acc, double v)
{
    add_bits(acc, bits_of(v));
    settle(acc, 1);
}

void xsum_add_products(xsum_t *acc, const double *x, const double *y, int64_t n)
{
    while (n > 0) {
        int64_t m = n < room(acc) ? n : room(acc);
        for (int64_t i = 0; i < m; i++)
            add_bits(acc, bits_of(x[i] * y[i]));
        settle(acc, m);
        x += m;
        y += m;
        n -= m;
    }
}

void xsum_add_squares(xsum_t *acc, const double *x, int64_t n)
{
    while (n > 0) {
        int64_t m = n < room(acc) ? n : room(acc);
        for (int64_t i = 0; i < m; i++)
            add_bits(acc, bits_of(x[i] * x[i]));
        settle(acc, m);
        x += m;
        n -= m;
    }
}

void xsum_normalize(xsum_t *acc)
{
    int64_t carry = 0;
    for (int i = 0; i < TOP; i++) {
        int64_t w = acc->word[i] + carry;
        int64_t low = (int64_t)((uint64_t)w & DIGIT_MASK);
        carry = (w - low) / DIGIT_BASE; /* exact: floor(w / 2^32), |carry| < 2^31 */
        acc->word[i] = low;
    }
    acc->word[TOP] += carry;
    acc->pending = 0;
}

void xsum_merge(xsum_t *dst, const xsum_t *src)
{
    /* Normalizing both first keeps every word small whatever state they were in. */
    xsum_t s = *src;
    xsum_normalize(&s);
    xsum_normalize(dst);
    for (int i = 0; i < XSUM_WORDS; i++)
        dst->word[i] += s.word[i];
    xsum_normalize(dst);
}

/* IEEE addition of the special terms, in whatever order: 1 if there are any. */
static int special_result(const xsum_t *acc, double *out)
{
    int nan = acc->word[XSUM_NAN_WORD] != 0, pinf = acc->word[XSUM_POSINF_WORD] != 0,
        ninf = acc->word[XSUM_NEGINF_WORD] != 0;
    if (nan || (pinf && ninf))
        *out = NAN;
    else if (pinf || ninf)
        *out = pinf ? INFINITY : -INFINITY;
    else
        return 0;
    return 1;
}

/* Digit i of a normalized magnitude, 0 outside the digits below the top one. */
static uint64_t digit(const int64_t *d, int i)
{
    return i >= 0 && i < TOP ? (uint64_t)d[i] : 0;
}

/* Bits [pos, pos + count) of the magnitude, count <= 63. */
static uint64_t bits_at(const int64_t *d, int pos, int count)
{
    int k = pos >> 5, s = pos & 31;
    uint64_t low = digit(d, k) | digit(d, k + 1) << 32;
    uint64_t window = (low >> s) | ((digit(d, k + 2) << 1) << (63 - s));
    return window & ((UINT64_C(1) << count) - 1);
}

/* Whether any bit below position pos is set. */
static int any_below(const int64_t *d, int pos)
{
    int k = pos >> 5;
    for (int i = 0; i < k; i++)
        if (d[i] != 0)
            return 1;
    return (digit(d, k) & ((UINT64_C(1) << (pos & 31)) - 1)) != 0;
}

static int highest_bit(uint64_t v)
{
    int b = 0;
    while (v >>= 1)
        b++;
    return b;
}

/* The bits of the nearest double (ties to even) to a normalized magnitude < 2^1102.
 * The significand is the 53 bits from the leading one down to position r, or all bits
 * down to 0 when the leading one is below 52: every sum is a multiple of 2^-1074, so a
 * subnormal result is exact and this is the single rounding, at the right position. */
static uint64_t round_magnitude(const int64_t *d)
{
    int h = TOP - 1;
    while (h >= 0 && d[h] == 0)
        h--;
    if (h < 0)
        return 0;
    int lead = 32 * h + highest_bit((uint64_t)d[h]);
    int r = lead > 52 ? lead - 52 : 0;
    if (r >= OVERFLOW_POS)
        return INF_BITS;
    uint64_t m = bits_at(d, r, lead - r + 1);
    if (r > 0 && bits_at(d, r - 1, 1) && ((m & 1) || any_below(d, r - 1)))
        m++;
    /* m has its leading one at bit 52 (biased exponent r + 1), or r is 0 and m is a
     * subnormal significand; either way (r << 52) + m is the encoding, and a carry to
     * m = 2^53 bumps the exponent by itself, reaching INF_BITS on overflow. */
    return ((uint64_t)r << 52) + m;
}

double xsum_round(const xsum_t *acc)
{
    double special;
    if (special_result(acc, &special))
        return special;
    xsum_t m = *acc;
    xsum_normalize(&m);
    int negative = m.word[TOP] < 0;
    if (negative) {
        /* Negating every word of the normalized form and carrying again gives the
         * normalized form of the magnitude. */
        for (int i = 0; i <= TOP; i++)
            m.word[i] = -m.word[i];
        xsum_normalize(&m);
    }
    uint64_t bits = m.word[TOP] != 0 ? INF_BITS : round_magnitude(m.word);
    return double_of(bits | (negative ? SIGN_BIT : 0));
}
