/* xsum: the correctly rounded sum of many doubles, whatever their order or grouping.
 *
 * Why: a dot product summed in floating point depends on how its terms are split
 * across ranks, so a Conjugate Gradient that is repartitioned drifts away from a static
 * run. Here every term is added exactly into a wide fixed-point integer (a Kulisch
 * accumulator), so summing is integer addition: associative and commutative. Any order,
 * any split, and an MPI_SUM of the integer words give the same exact value, which
 * xsum_round rounds once (to nearest, ties to even).
 *
 * Representation. word[i], i < XSUM_DIGITS, is a base-2^32 digit of weight
 * 2^(32 i - 1074): bit 0 of word 0 is the smallest subnormal, and the top bit of the
 * largest finite double (2^1023) lands in word 65. The digits are int64_t so that
 * XSUM_PENDING_MAX additions can pile up in a word before a carry pass (xsum_normalize)
 * is needed. The top digit, word[XSUM_DIGITS - 1] (weight 2^1102), only receives carries
 * and holds the sign: 78 bits of headroom above 2^1024, so sums of fewer than 2^78 terms
 * of any finite size are exact. The last three words count the NaN, +inf and -inf terms,
 * so the same integer MPI_SUM that adds the digits also carries them.
 *
 * Normalized form (after xsum_normalize): word[0 .. XSUM_DIGITS-2] in [0, 2^32), the top
 * digit is floor(sum / 2^1102), i.e. -1 or 0, and pending is 0.
 *
 * Distributed use: one call, no separate reduction of a non-finite flag.
 *     xsum_t acc;
 *     xsum_init(&acc);
 *     xsum_add_products(&acc, x_local, y_local, n_local);
 *     xsum_normalize(&acc);   // required before the reduction
 *     MPI_Allreduce(MPI_IN_PLACE, acc.word, XSUM_WORDS, MPI_INT64_T, MPI_SUM, comm);
 *     double dot = xsum_round(&acc);  // bit-identical on every rank and every layout
 * Why it cannot overflow, with up to 2^30 ranks: each lower digit is < 2^32, so its sum is
 * < 2^62; each top digit is -1 or 0; the counters count terms. The reduced accumulator is
 * valid for xsum_round, xsum_merge and further xsum_add calls (its words are < 2^62 and
 * pending is 0), but it must be normalized again before it is the input of another
 * reduction. `pending` is per-process bookkeeping and is not reduced.
 *
 * Special values: the result is NaN if any term is NaN or there are both +inf and -inf
 * terms, else +-inf if there are infinite terms (as IEEE addition in any order would
 * give). A finite exact sum that rounds beyond DBL_MAX gives +-inf (IEEE 754 overflow under
 * round-to-nearest). An exact zero gives +0.0, even if all terms were -0.0.
 *
 * Products: xsum_add_products adds fl(x[i] * y[i]), each product rounded to double as the
 * C expression x[i] * y[i] is (never fused with anything into an fma), so a serial loop
 * computing `x[i] * y[i]` and adding the results with xsum_add gives the same words. */
#ifndef MAL_XSUM_H
#define MAL_XSUM_H

#include <stdint.h>

#define XSUM_DIGITS 69                   /* digits of weight 2^-1074 .. 2^1102 */
#define XSUM_NAN_WORD XSUM_DIGITS        /* number of NaN terms */
#define XSUM_POSINF_WORD (XSUM_DIGITS + 1)  /* number of +inf terms */
#define XSUM_NEGINF_WORD (XSUM_DIGITS + 2)  /* number of -inf terms */
#define XSUM_WORDS (XSUM_DIGITS + 3)     /* what MPI_Allreduce reduces */
#define XSUM_PENDING_MAX (INT64_C(1) << 20) /* additions between carry passes */

typedef struct {
    int64_t word[XSUM_WORDS];
    int64_t pending; /* additions since the last carry pass, < XSUM_PENDING_MAX */
} xsum_t;

/* An accumulator holding the exact value 0. */
void xsum_init(xsum_t *acc);

/* Adds v exactly. */
void xsum_add(xsum_t *acc, double v);

/* Adds fl(x[i] * y[i]) for i = 0 .. n-1 (nothing if n <= 0). */
void xsum_add_products(xsum_t *acc, const double *x, const double *y, int64_t n);

/* Adds fl(x[i] * x[i]) for i = 0 .. n-1 (nothing if n <= 0). */
void xsum_add_squares(xsum_t *acc, const double *x, int64_t n);

/* Propagates the carries (value unchanged) into the normalized form described above. */
void xsum_normalize(xsum_t *acc);

/* dst += src, exactly: the serial equivalent of the MPI_SUM reduction. Works on
 * accumulators in any state; leaves dst normalized. */
void xsum_merge(xsum_t *dst, const xsum_t *src);

/* The exact sum rounded to the nearest double, ties to even (see special values above).
 * Does not modify acc. */
double xsum_round(const xsum_t *acc);

#endif /* MAL_XSUM_H */
