/* Unit tests of support/xsum: exact, order-independent, correctly rounded sums.
 *
 * The expected values come from references whose correctness does not depend on xsum:
 *  - IEEE arithmetic itself where one operation is the whole sum: a + b, and n * x
 *    (n copies of x; n is an exact double) are correctly rounded by the hardware,
 *    overflow and subnormals included; fma(n, x, m * y) with m a power of two likewise.
 *  - Shewchuk's exact summation with CPython's final half-even fix (math.fsum): an
 *    independent algorithm built from error-free transformations; exact as long as no
 *    intermediate overflows, so its inputs stay below 2^1000 in magnitude.
 *  - binary128 where every partial sum is provably representable: integer multiples of
 *    2^-20 below 2^90 need at most 110 < 113 significand bits, so each __float128
 *    addition is exact and only the final conversion rounds (libgcc's conversion is
 *    correctly rounded, ties to even). */
#include "xsum.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unittest.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;
static uint64_t rng(void)
{
    return unit_rng(&rng_state);
}

static double from_bits(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

static uint64_t to_bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

static int same(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* A finite double with random sign and significand and a biased exponent below
 * max_biased (0 gives subnormals). */
static double random_double(unsigned max_biased)
{
    uint64_t u = rng();
    uint64_t biased = rng() % max_biased;
    return from_bits((u & 0x800fffffffffffffULL) | biased << 52);
}

static double sum_of(const double *v, int64_t n)
{
    xsum_t acc;
    xsum_init(&acc);
    for (int64_t i = 0; i < n; i++)
        xsum_add(&acc, v[i]);
    return xsum_round(&acc);
}

static double sum_list(int n, const double *v)
{
    return sum_of(v, n);
}

/* math.fsum (Shewchuk / CPython): the partials are a non-overlapping expansion equal to
 * the exact sum; the tail fixes half-way cases that the top partials alone misjudge. */
static double fsum_ref(const double *v, int64_t n)
{
    double p[256];
    int np = 0;
    for (int64_t k = 0; k < n; k++) {
        double x = v[k];
        int i = 0;
        for (int j = 0; j < np; j++) {
            double y = p[j];
            if (fabs(x) < fabs(y)) {
                double t = x;
                x = y;
                y = t;
            }
            double hi = x + y;
            double lo = y - (hi - x);
            if (lo != 0.0)
                p[i++] = lo;
            x = hi;
        }
        np = i;
        if (x != 0.0 && np < 256)
            p[np++] = x;
    }
    if (np == 0)
        return 0.0;
    double hi = p[--np], lo = 0.0;
    while (np > 0) {
        double x = hi, y = p[--np];
        hi = x + y;
        lo = y - (hi - x);
        if (lo != 0.0)
            break;
    }
    if (np > 0 && ((lo < 0.0 && p[np - 1] < 0.0) || (lo > 0.0 && p[np - 1] > 0.0))) {
        double y = lo * 2.0, x = hi + y;
        if (y == x - hi)
            hi = x;
    }
    return hi;
}

static void test_exact_cases(void)
{
    double t = DBL_TRUE_MIN, big = 0x1p53;
    CHECK(same(sum_list(3, (double[]){1e100, 1.0, -1e100}), 1.0), "1e100 + 1 - 1e100");
    CHECK(same(sum_list(3, (double[]){1.0, t, -1.0}), t), "1 + tiny - 1");
    CHECK(same(sum_list(2, (double[]){1.0, t}), 1.0), "1 + tiny");
    /* ties to even, and the sticky bit breaking the tie */
    CHECK(same(sum_list(2, (double[]){big, 1.0}), big), "2^53 + 1 ties to even");
    CHECK(same(sum_list(2, (double[]){big, 3.0}), big + 4.0), "2^53 + 3 ties up to even");
    CHECK(same(sum_list(3, (double[]){big, 1.0, 0x1p-1000}), big + 2.0), "sticky rounds up");
    CHECK(same(sum_list(3, (double[]){0x1p-1000, 1.0, big}), big + 2.0), "any order");
    CHECK(same(sum_list(3, (double[]){big, 1.0, t}), big + 2.0), "sticky at 2^-1074");
    CHECK(same(sum_list(3, (double[]){big, 1.0, -t}), big), "just below the tie");
    CHECK(same(sum_list(3, (double[]){-big, -1.0, -t}), -big - 2.0), "negative sticky");
    CHECK(same(sum_list(3, (double[]){1e16, 1.0, 1e-16}), 10000000000000002.0),
          "fsum's classic case");
    /* subnormal results are exact */
    CHECK(same(sum_list(3, (double[]){t, t, t}), 3 * t), "3 * 2^-1074");
    CHECK(to_bits(sum_list(2, (double[]){DBL_MIN, -t})) == 0x000fffffffffffffULL,
          "DBL_MIN - tiny is the largest subnormal");
    CHECK(same(sum_list(3, (double[]){1.0, DBL_MIN, -1.0}), DBL_MIN), "DBL_MIN survives");
    CHECK(same(sum_list(3, (double[]){0x1p-1070, -t, 1e300}), 1e300), "tiny vs huge");
    CHECK(same(sum_list(4, (double[]){1e300, 0x1p-1070, -1e300, -t}), 15 * t),
          "subnormal after cancellation");
    /* overflow: IEEE round-to-nearest gives inf once the exact sum reaches
     * DBL_MAX + ulp/2 = 2^1024 - 2^970 (a tie that goes to the even 2^1024) */
    CHECK(same(sum_list(2, (double[]){DBL_MAX, DBL_MAX * 0x1p-53}), INFINITY), "overflow");
    CHECK(same(sum_list(2, (double[]){DBL_MAX, 0x1p970}), INFINITY), "overflow tie");
    CHECK(same(sum_list(3, (double[]){DBL_MAX, 0x1p970, -t}), DBL_MAX), "below the tie");
    CHECK(same(sum_list(3, (double[]){DBL_MAX, DBL_MAX, -DBL_MAX}), DBL_MAX),
          "intermediate overflow is not an overflow");
    CHECK(same(sum_list(2, (double[]){-DBL_MAX, -DBL_MAX}), -INFINITY), "-inf");
    CHECK(same(DBL_MAX + 0x1p970, INFINITY) && same(DBL_MAX + DBL_MAX * 0x1p-53, INFINITY),
          "the hardware agrees");
    /* zeros */
    CHECK(same(sum_list(0, NULL), 0.0), "empty sum");
    CHECK(same(sum_list(2, (double[]){-0.0, -0.0}), 0.0), "exact zero is +0.0");
    CHECK(same(sum_list(2, (double[]){-3.5, 1.25}), -2.25), "negative");
}

/* Every term cancelled by its negation, in shuffled order: exactly +0.0, all words 0. */
static void test_cancellation(void)
{
    enum { N = 200000 };
    double *v = malloc(N * sizeof *v);
    for (int i = 0; i < N; i += 2) {
        v[i] = random_double(2047);
        v[i + 1] = -v[i];
    }
    for (int i = N - 1; i > 0; i--) {
        int j = (int)(rng() % (uint64_t)(i + 1));
        double t = v[i];
        v[i] = v[j];
        v[j] = t;
    }
    xsum_t acc;
    xsum_init(&acc);
    double plain = 0.0;
    for (int i = 0; i < N; i++) {
        xsum_add(&acc, v[i]);
        plain += v[i];
    }
    CHECK(same(xsum_round(&acc), 0.0), "got %a", xsum_round(&acc));
    CHECK(plain != 0.0, "plain summation should not find the zero (got %a)", plain);
    xsum_normalize(&acc);
    int zero = 1;
    for (int i = 0; i < XSUM_WORDS; i++)
        zero &= acc.word[i] == 0;
    CHECK(zero, "the words are not all zero");
    free(v);
}

/* Two terms: the hardware's a + b is the correctly rounded sum. */
static void test_pairs_against_hardware(void)
{
    int bad = 0;
    for (int t = 0; t < 1000000; t++) {
        unsigned range = t % 4 == 0 ? 2047 : t % 4 == 1 ? 60 : 1 + (unsigned)(rng() % 2046);
        double a = random_double(range), b;
        switch (t % 5) {
        case 0: b = random_double(range); break;
        case 1: b = -a * (1.0 + (double)(rng() % 8) * 0x1p-52); break;
        case 2: b = from_bits(to_bits(a) ^ (rng() & 0x800000000000003fULL)); break;
        default: b = random_double(2047);
        }
        double expect = a + b;
        if (expect == 0.0)
            expect = 0.0; /* -0.0 + -0.0 is -0.0 in IEEE; an exact zero sum is +0.0 here */
        double got = sum_list(2, (double[]){a, b});
        if (!same(got, expect) && bad++ < 5)
            CHECK(0, "%a + %a: got %a, want %a", a, b, got, expect);
    }
    CHECK(bad == 0, "%d pairs differ from the hardware", bad);
}

/* n copies of x: n * x is a single, correctly rounded, hardware operation. Over 2^21
 * additions, so the periodic carry pass runs; DBL_MAX copies also use the headroom. */
static void test_many_copies(void)
{
    double xs[] = {DBL_MAX, -DBL_MAX, 0x1.fffffffffffffp-1000, -0x1.23456789abcdep+517,
                   DBL_TRUE_MIN, 0.1, -1.0 / 3.0};
    int64_t n = (INT64_C(1) << 21) + 12345;
    for (size_t k = 0; k < sizeof xs / sizeof xs[0]; k++) {
        xsum_t acc;
        xsum_init(&acc);
        for (int64_t i = 0; i < n; i++)
            xsum_add(&acc, xs[k]);
        CHECK(acc.pending < XSUM_PENDING_MAX, "pending %lld", (long long)acc.pending);
        for (int i = 0; i < XSUM_DIGITS - 1; i++)
            CHECK(llabs(acc.word[i]) < (acc.pending + 1) * (INT64_C(1) << 32),
                  "word %d = %lld: no carry pass ran", i, (long long)acc.word[i]);
        double want = (double)n * xs[k], got = xsum_round(&acc);
        CHECK(same(got, want), "%lld * %a: got %a, want %a", (long long)n, xs[k], got, want);
    }
    /* 2^22 DBL_MAX (2^1046: overflows a double, not the accumulator), then take them
     * back but one, then step around the overflow threshold */
    xsum_t acc;
    xsum_init(&acc);
    for (int64_t i = 0; i < (INT64_C(1) << 22); i++)
        xsum_add(&acc, DBL_MAX);
    CHECK(same(xsum_round(&acc), INFINITY), "2^22 DBL_MAX overflows");
    for (int64_t i = 0; i < (INT64_C(1) << 22) - 1; i++)
        xsum_add(&acc, -DBL_MAX);
    xsum_add(&acc, 0x1p970); /* DBL_MAX + ulp/2: the tie that rounds to 2^1024 */
    xsum_add(&acc, -0x1p-1074);
    CHECK(same(xsum_round(&acc), DBL_MAX), "just below the overflow tie");
    xsum_add(&acc, 0x1p-1073);
    CHECK(same(xsum_round(&acc), INFINITY), "just above it");
    /* n copies of x and m = 2^k copies of y: fma(n, x, m * y) rounds n x + m y once */
    for (int t = 0; t < 6; t++) {
        double x = random_double(1500), y = random_double(1500);
        int64_t nx = (int64_t)(rng() % 3000000), my = INT64_C(1) << (rng() % 22);
        xsum_t a;
        xsum_init(&a);
        for (int64_t i = 0, j = 0; i < nx || j < my;) {
            if (i < nx)
                xsum_add(&a, x), i++;
            if (j < my)
                xsum_add(&a, y), j++;
        }
        double want = fma((double)nx, x, (double)my * y), got = xsum_round(&a);
        CHECK(same(got, want), "%lld x %a + %lld x %a: got %a, want %a", (long long)nx, x,
              (long long)my, y, got, want);
    }
}

/* Wide exponents and signs, with most terms (all, if `all_paired`) cancelled by their
 * negations so that the result is decided by the smaller ones; inputs below 2^1000 for
 * the fsum reference. */
static void fill_hard(double *v, int64_t n, int all_paired)
{
    int64_t i = 0;
    while (i < n) {
        double x = random_double(2024);
        v[i++] = x;
        if (i < n && (all_paired || rng() % 4 != 0))
            v[i++] = -x;
        if (i < n && rng() % 8 == 0) /* from subnormal up to 2^77 */
            v[i++] = random_double(1 + (unsigned)(rng() % 1100));
    }
    for (int64_t k = n - 1; k > 0; k--) {
        int64_t j = (int64_t)(rng() % (uint64_t)(k + 1));
        double t = v[k];
        v[k] = v[j];
        v[j] = t;
    }
}

/* Normalized form: digits in [0, 2^32), top digit -1 or 0, nothing pending. */
static int is_normalized(const xsum_t *acc)
{
    for (int i = 0; i < XSUM_DIGITS - 1; i++)
        if (acc->word[i] < 0 || acc->word[i] >= (INT64_C(1) << 32))
            return 0;
    int64_t top = acc->word[XSUM_DIGITS - 1];
    return (top == 0 || top == -1) && acc->pending == 0;
}

/* The same terms in any order and any split give the same double, and the split
 * reduced by plain int64 addition of the words (what MPI_SUM does) gives it too. */
static void test_order_independence(void)
{
    enum { N = 100000, CHUNKS = 7 };
    double *v = malloc(N * sizeof *v), *w = malloc(N * sizeof *w);
    fill_hard(v, N, 1);
    double results[5];
    results[0] = sum_of(v, N);
    double plain_forward = 0.0, plain_backward = 0.0;
    for (int i = 0; i < N; i++) {
        w[i] = v[N - 1 - i];
        plain_forward += v[i];
        plain_backward += w[i];
    }
    CHECK(!same(plain_forward, plain_backward), "the data should defeat plain summation");
    results[1] = sum_of(w, N);
    for (int i = N - 1; i > 0; i--) {
        int j = (int)(rng() % (uint64_t)(i + 1));
        double t = w[i];
        w[i] = w[j];
        w[j] = t;
    }
    results[2] = sum_of(w, N);

    int64_t cut[CHUNKS + 1] = {0};
    for (int c = 1; c < CHUNKS; c++)
        cut[c] = (int64_t)(rng() % N);
    cut[CHUNKS] = N;
    for (int c = 1; c < CHUNKS; c++) /* insertion sort of the cut points */
        for (int d = c; d > 1 && cut[d] < cut[d - 1]; d--) {
            int64_t t = cut[d];
            cut[d] = cut[d - 1];
            cut[d - 1] = t;
        }
    xsum_t part[CHUNKS], merged, reduced;
    xsum_init(&merged);
    xsum_init(&reduced);
    for (int c = 0; c < CHUNKS; c++) {
        xsum_init(&part[c]);
        for (int64_t i = cut[c]; i < cut[c + 1]; i++)
            xsum_add(&part[c], w[i]);
        xsum_normalize(&part[c]);
        CHECK(is_normalized(&part[c]), "chunk %d not normalized", c);
    }
    for (int c = CHUNKS - 1; c >= 0; c--)
        xsum_merge(&merged, &part[c]);
    for (int c = 0; c < CHUNKS; c++)
        for (int i = 0; i < XSUM_WORDS; i++)
            reduced.word[i] += part[c].word[i];
    results[3] = xsum_round(&merged);
    results[4] = xsum_round(&reduced);
    for (int k = 1; k < 5; k++)
        CHECK(memcmp(&results[k], &results[0], sizeof(double)) == 0,
              "result %d is %a, not %a", k, results[k], results[0]);
    double ref = fsum_ref(v, N);
    CHECK(same(results[0], ref), "got %a, fsum says %a", results[0], ref);
    /* the merged and the reduced accumulators hold the same number */
    xsum_normalize(&reduced);
    CHECK(memcmp(merged.word, reduced.word, sizeof merged.word) == 0, "words differ");
    free(v);
    free(w);
}

/* Many small hard sums against fsum, over the full finite exponent range. */
static void test_against_fsum(void)
{
    double v[64];
    int bad = 0;
    for (int t = 0; t < 20000; t++) {
        int n = 1 + (int)(rng() % 64);
        fill_hard(v, n, 0);
        double got = sum_of(v, n), want = fsum_ref(v, n);
        if (!same(got, want) && bad++ < 5)
            CHECK(0, "case %d (n=%d): got %a, fsum says %a", t, n, got, want);
    }
    CHECK(bad == 0, "%d sums differ from fsum", bad);
}

#if defined(__SIZEOF_FLOAT128__)
/* k * 2^e with |k| < 2^53 and -20 <= e <= 20: a multiple of 2^-20 below 2^73. */
static double moderate_double(void)
{
    int64_t k = (int64_t)(rng() >> 11) * ((rng() & 1) ? 1 : -1);
    return ldexp((double)k, (int)(rng() % 41) - 20);
}

/* Exact in binary128 (see the top of the file); each sum is also pushed onto a rounding
 * tie and to either side of it, where a sloppy sticky bit would show. */
static void test_against_binary128(void)
{
    enum { N = 100000 };
    double *v = malloc((N + 3) * sizeof *v);
    int bad = 0;
    for (int t = 0; t < 20; t++) {
        int64_t n = t < 4 ? N : 1 + (int64_t)(rng() % 1000);
        __float128 exact = 0;
        for (int64_t i = 0; i < n; i++) {
            v[i] = moderate_double();
            exact += v[i];
        }
        for (int nudge = -1; nudge <= 2; nudge++) {
            double d = (double)exact;
            __float128 target = exact;
            __float128 ulp = (__float128)nextafter(d, INFINITY) - d;
            /* the tie above d, 2^-20 below it, and above it; only where the tie is a
             * multiple of 2^-20 too, as the exactness argument needs */
            if (nudge != 2 && ulp >= 0x1p-19) {
                target = (__float128)d + ulp / 2 + nudge * (__float128)0x1p-20;
            }
            __float128 gap = target - exact; /* a multiple of 2^-20 below 2^39: hi + lo exactly */
            double hi = (double)gap, lo = (double)(gap - hi);
            v[n] = hi;
            v[n + 1] = lo;
            double want = (double)(exact + hi + lo), got = sum_of(v, n + 2);
            if (!same(got, want) && bad++ < 5)
                CHECK(0, "n=%lld nudge %d: got %a, want %a", (long long)n, nudge, got, want);
        }
    }
    CHECK(bad == 0, "%d sums differ from binary128", bad);
    free(v);
}
#endif

/* Products are rounded to double one by one, exactly as the C expression. */
static void test_products(void)
{
    double x[2] = {1.0 + 0x1p-30, -(1.0 + 0x1p-29)}, y[2] = {1.0 + 0x1p-30, 1.0};
    xsum_t acc;
    xsum_init(&acc);
    xsum_add_products(&acc, x, y, 2);
    /* the exact product is 1 + 2^-29 + 2^-60; a fused one would leave 2^-60 */
    CHECK(same(xsum_round(&acc), 0.0), "product not rounded: %a", xsum_round(&acc));

    enum { N = (1 << 21) + 777 };
    double *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b), *p = malloc(N * sizeof *p);
    for (int i = 0; i < N; i++) {
        a[i] = random_double(1500) * ((rng() & 1) ? 1.0 : 0x1p-500); /* products < 2^954 */
        b[i] = random_double(1500) * ((rng() & 1) ? 1.0 : 0x1p-500);
        volatile double prod = a[i] * b[i];
        p[i] = prod;
    }
    xsum_t by_products, by_terms, by_chunks;
    xsum_init(&by_products);
    xsum_init(&by_terms);
    xsum_init(&by_chunks);
    xsum_add_products(&by_products, a, b, N);
    for (int i = 0; i < N; i++)
        xsum_add(&by_terms, p[i]);
    int64_t at = 0;
    while (at < N) { /* uneven pieces straddling the carry pass */
        int64_t len = 1 + (int64_t)(rng() % 700000);
        if (len > N - at)
            len = N - at;
        xsum_t piece;
        xsum_init(&piece);
        xsum_add_products(&piece, a + at, b + at, len);
        xsum_merge(&by_chunks, &piece);
        at += len;
    }
    double r1 = xsum_round(&by_products), r2 = xsum_round(&by_terms),
           r3 = xsum_round(&by_chunks), ref = fsum_ref(p, N);
    CHECK(same(r1, ref) && same(r2, ref) && same(r3, ref), "products %a, terms %a, "
          "chunks %a, fsum %a", r1, r2, r3, ref);
    xsum_normalize(&by_products);
    xsum_normalize(&by_terms);
    CHECK(memcmp(by_products.word, by_terms.word, sizeof by_terms.word) == 0,
          "xsum_add_products differs from adding x*y");

    xsum_t squares, self;
    xsum_init(&squares);
    xsum_init(&self);
    xsum_add_squares(&squares, a, N);
    xsum_add_products(&self, a, a, N);
    CHECK(same(xsum_round(&squares), xsum_round(&self)), "squares");
    CHECK(xsum_round(&squares) > 0.0, "a sum of squares is positive");
    xsum_add_products(&squares, a, b, 0);
    xsum_add_squares(&squares, a, -5);
    CHECK(same(xsum_round(&squares), xsum_round(&self)), "n <= 0 adds nothing");
    free(a);
    free(b);
    free(p);
}

static void test_nonfinite(void)
{
    CHECK(isnan(sum_list(3, (double[]){1.0, NAN, 2.0})), "NaN");
    CHECK(same(sum_list(3, (double[]){1.0, INFINITY, -DBL_MAX}), INFINITY), "+inf");
    CHECK(same(sum_list(2, (double[]){-INFINITY, -INFINITY}), -INFINITY), "-inf");
    CHECK(isnan(sum_list(2, (double[]){INFINITY, -INFINITY})), "inf - inf");
    double x[2] = {0.0, INFINITY}, y[2] = {INFINITY, 1.0};
    xsum_t acc, other, reduced;
    xsum_init(&acc);
    xsum_add_products(&acc, x + 1, y + 1, 1);
    CHECK(same(xsum_round(&acc), INFINITY), "inf * 1");
    xsum_add_products(&acc, x, y, 1);
    CHECK(isnan(xsum_round(&acc)), "0 * inf is NaN");
    /* the counters travel with the words: merge and a plain word-wise sum */
    xsum_init(&acc);
    xsum_init(&other);
    xsum_init(&reduced);
    xsum_add(&acc, 1.0);
    xsum_add(&other, -INFINITY);
    xsum_normalize(&acc);
    xsum_normalize(&other);
    for (int i = 0; i < XSUM_WORDS; i++)
        reduced.word[i] = acc.word[i] + other.word[i];
    CHECK(same(xsum_round(&reduced), -INFINITY), "-inf through the reduction");
    xsum_merge(&acc, &other);
    CHECK(same(xsum_round(&acc), -INFINITY), "-inf through merge");
}

int main(void)
{
    test_exact_cases();
    test_cancellation();
    test_pairs_against_hardware();
    test_many_copies();
    test_order_independence();
    test_against_fsum();
#if defined(__SIZEOF_FLOAT128__)
    test_against_binary128();
#endif
    test_products();
    test_nonfinite();
    if (failures) {
        printf("test_xsum: FAIL (%d checks failed)\n", failures);
        return 1;
    }
    printf("test_xsum: PASS\n");
    return 0;
}
