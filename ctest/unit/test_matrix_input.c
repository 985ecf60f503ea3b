/* Unit tests of support/matrix_input: Matrix Market files through CHOLMOD and the
 * poisson, poisson3d and powerlaw generators, row by row. No MPI.
 * Usage: test_matrix_input <directory holding 1138_bus.mtx and bcsstk13.mtx> */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "matrix_input.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unittest.h"

typedef struct {
    int64_t rows, cols;
    int64_t *rp;
    int32_t *ci;
    double *v;
} csr_t;

static void csr_free(csr_t *m)
{
    free(m->rp);
    free(m->ci);
    free(m->v);
    memset(m, 0, sizeof *m);
}

/* The whole matrix through mi_block. */
static bool load_all(const mi_source_t *s, csr_t *m)
{
    char err[512] = "";
    memset(m, 0, sizeof *m);
    m->rows = mi_rows(s);
    m->cols = mi_cols(s);
    int rc = mi_block(s, 0, m->rows, &m->rp, &m->ci, &m->v, err, sizeof err);
    CHECK(rc == 0, "mi_block of all rows of %s: %s", mi_describe(s), err);
    return rc == 0;
}

/* Row lengths agree with mi_row_nnz, mi_nnz and mi_max_row_nnz; columns in range and
 * strictly increasing. */
static void check_structure(const mi_source_t *s, const csr_t *m)
{
    const char *what = mi_describe(s);
    CHECK(m->rp[0] == 0, "%s: rowptr[0] = %" PRId64, what, m->rp[0]);
    CHECK(m->rp[m->rows] == mi_nnz(s), "%s: %" PRId64 " entries, mi_nnz %" PRId64, what,
          m->rp[m->rows], mi_nnz(s));
    int64_t maxlen = 0, bad_len = 0, bad_col = 0, bad_order = 0;
    for (int64_t r = 0; r < m->rows; r++) {
        int64_t len = m->rp[r + 1] - m->rp[r];
        if (len > maxlen)
            maxlen = len;
        bad_len += len != mi_row_nnz(s, r);
        for (int64_t k = m->rp[r]; k < m->rp[r + 1]; k++) {
            bad_col += m->ci[k] < 0 || m->ci[k] >= m->cols;
            bad_order += k > m->rp[r] && m->ci[k] <= m->ci[k - 1];
        }
    }
    CHECK(maxlen == mi_max_row_nnz(s), "%s: longest row %" PRId64 ", mi_max_row_nnz %" PRId64,
          what, maxlen, mi_max_row_nnz(s));
    CHECK(bad_len == 0, "%s: %" PRId64 " rows differ from mi_row_nnz", what, bad_len);
    CHECK(bad_col == 0, "%s: %" PRId64 " columns out of range", what, bad_col);
    CHECK(bad_order == 0, "%s: %" PRId64 " columns not strictly increasing", what, bad_order);
}

/* Transpose by counting sort: rows visited in order give increasing columns. False (and
 * nothing allocated) if a column is out of range. */
static bool transpose(const csr_t *a, csr_t *t)
{
    memset(t, 0, sizeof *t);
    for (int64_t k = 0; k < a->rp[a->rows]; k++)
        if (a->ci[k] < 0 || a->ci[k] >= a->cols)
            return false;
    t->rows = a->cols;
    t->cols = a->rows;
    int64_t nnz = a->rp[a->rows];
    t->rp = calloc((size_t)t->rows + 1, sizeof *t->rp);
    t->ci = malloc((size_t)(nnz ? nnz : 1) * sizeof *t->ci);
    t->v = malloc((size_t)(nnz ? nnz : 1) * sizeof *t->v);
    int64_t *next = malloc((size_t)(t->rows ? t->rows : 1) * sizeof *next);
    if (!t->rp || !t->ci || !t->v || !next) {
        fprintf(stderr, "test_matrix_input: out of memory\n");
        exit(1);
    }
    for (int64_t k = 0; k < nnz; k++)
        t->rp[a->ci[k] + 1]++;
    for (int64_t r = 0; r < t->rows; r++)
        t->rp[r + 1] += t->rp[r];
    memcpy(next, t->rp, (size_t)t->rows * sizeof *next);
    for (int64_t r = 0; r < a->rows; r++)
        for (int64_t k = a->rp[r]; k < a->rp[r + 1]; k++) {
            int64_t pos = next[a->ci[k]]++;
            t->ci[pos] = (int32_t)r;
            t->v[pos] = a->v[k];
        }
    free(next);
    return true;
}

/* A == A^T, pattern and values bit for bit. */
static void check_symmetric(const char *what, const csr_t *a)
{
    csr_t t;
    if (!transpose(a, &t)) {
        CHECK(false, "%s: columns out of range, no transpose", what);
        return;
    }
    int64_t nnz = a->rp[a->rows];
    CHECK(a->rows == a->cols, "%s: not square", what);
    bool same_rp = memcmp(a->rp, t.rp, (size_t)(a->rows + 1) * sizeof *a->rp) == 0;
    CHECK(same_rp, "%s: row lengths differ from column lengths", what);
    if (same_rp) {
        CHECK(memcmp(a->ci, t.ci, (size_t)nnz * sizeof *a->ci) == 0,
              "%s: pattern not symmetric", what);
        CHECK(memcmp(a->v, t.v, (size_t)nnz * sizeof *a->v) == 0,
              "%s: values not symmetric bit for bit", what);
    }
    csr_free(&t);
}

/* Value of entry (i, j), or NAN if not stored. */
static double entry(const csr_t *m, int64_t i, int32_t j)
{
    int64_t lo = m->rp[i], hi = m->rp[i + 1];
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (m->ci[mid] < j)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (lo < m->rp[i + 1] && m->ci[lo] == j) ? m->v[lo] : NAN;
}

/* mi_block of [first, first+count) equals the concatenation of mi_row calls. */
static void check_block_vs_rows(const mi_source_t *s, int64_t first, int64_t count)
{
    char err[512] = "";
    int64_t *rp;
    int32_t *ci;
    double *v;
    int rc = mi_block(s, first, count, &rp, &ci, &v, err, sizeof err);
    CHECK(rc == 0, "%s: mi_block(%" PRId64 ", %" PRId64 "): %s", mi_describe(s), first, count,
          err);
    if (rc != 0)
        return;
    CHECK(rp[0] == 0, "%s: block rowptr not rebased", mi_describe(s));
    int64_t maxlen = mi_max_row_nnz(s);
    int32_t *rc_ = malloc((size_t)(maxlen ? maxlen : 1) * sizeof *rc_);
    double *rv = malloc((size_t)(maxlen ? maxlen : 1) * sizeof *rv);
    int64_t pos = 0, bad = 0;
    for (int64_t r = 0; r < count; r++) {
        int64_t len = mi_row(s, first + r, rc_, rv);
        bad += rp[r + 1] - rp[r] != len || rp[r] != pos;
        if (rp[r + 1] - rp[r] == len && rp[r] == pos)
            bad += memcmp(ci + pos, rc_, (size_t)len * sizeof *rc_) != 0 ||
                   memcmp(v + pos, rv, (size_t)len * sizeof *rv) != 0;
        pos += len;
    }
    CHECK(bad == 0 && rp[count] == pos, "%s: block [%" PRId64 ", +%" PRId64 ") differs from "
          "mi_row in %" PRId64 " rows", mi_describe(s), first, count, bad);
    free(rc_);
    free(rv);
    free(rp);
    free(ci);
    free(v);
}

#ifdef MAL_HAVE_CHOLMOD /* files are read only with CHOLMOD */
/* Counts the stored entries and the diagonal ones of a coordinate Matrix Market file by
 * reading its lines (test only: the library reads through CHOLMOD). */
static bool count_file_entries(const char *path, int64_t *stored, int64_t *diag)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return false;
    char line[256];
    bool header = false;
    *stored = *diag = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '%')
            continue;
        long long i, j;
        if (sscanf(line, "%lld %lld", &i, &j) != 2)
            continue;
        if (!header) {
            header = true; /* the size line */
            continue;
        }
        (*stored)++;
        *diag += i == j;
    }
    fclose(f);
    return header;
}

static void test_real_file(const char *dir, const char *file, int64_t n, int64_t stored_awk,
                           int64_t diag_awk)
{
    char path[4096], err[512] = "";
    snprintf(path, sizeof path, "%s/%s", dir, file);
    int64_t stored = -1, diag = -1;
    CHECK(count_file_entries(path, &stored, &diag), "cannot read %s", path);
    CHECK(stored == stored_awk && diag == diag_awk, "%s: %" PRId64 " stored, %" PRId64
          " diagonal; awk said %" PRId64 ", %" PRId64, file, stored, diag, stored_awk,
          diag_awk);
    int64_t full = 2 * stored - diag;

    mi_source_t *s = NULL;
    int rc = mi_open(path, &s, err, sizeof err);
    CHECK(rc == 0 && s != NULL, "mi_open(%s): %s", path, err);
    if (rc != 0)
        return;
    printf("  %s\n", mi_describe(s));
    CHECK(mi_rows(s) == n && mi_cols(s) == n, "%s: %" PRId64 " x %" PRId64, file, mi_rows(s),
          mi_cols(s));
    CHECK(mi_nnz(s) == full, "%s: nnz %" PRId64 ", expected 2*%" PRId64 " - %" PRId64 " = %"
          PRId64, file, mi_nnz(s), stored, diag, full);
    char want[256];
    snprintf(want, sizeof want, "%s (%" PRId64 " x %" PRId64 ", %" PRId64 " nnz)", file, n, n,
             full);
    CHECK(strcmp(mi_describe(s), want) == 0, "describe '%s', want '%s'", mi_describe(s), want);
    csr_t m;
    if (load_all(s, &m)) {
        check_structure(s, &m);
        check_symmetric(file, &m);
        if (strcmp(file, "1138_bus.mtx") == 0) {
            /* lines "1 1 1474.779", "5 1 -9.017133", "563 1 -5.730659" */
            CHECK(entry(&m, 0, 0) == 1474.779, "(0,0) = %.17g", entry(&m, 0, 0));
            CHECK(entry(&m, 4, 0) == -9.017133 && entry(&m, 0, 4) == -9.017133,
                  "(4,0) = %.17g, (0,4) = %.17g", entry(&m, 4, 0), entry(&m, 0, 4));
            CHECK(entry(&m, 562, 0) == -5.730659 && entry(&m, 0, 562) == -5.730659,
                  "(562,0) = %.17g", entry(&m, 562, 0));
            CHECK(mi_row_nnz(s, 0) == 3, "row 0 of 1138_bus has %" PRId64 " entries",
                  mi_row_nnz(s, 0));
            CHECK(entry(&m, 0, 1) != entry(&m, 0, 1), "(0,1) should not be stored");
        } else {
            /* lines "1 1 277281165.183", "2 1 3101923.80092" */
            CHECK(entry(&m, 0, 0) == 277281165.183, "(0,0) = %.17g", entry(&m, 0, 0));
            CHECK(entry(&m, 1, 0) == 3101923.80092 && entry(&m, 0, 1) == 3101923.80092,
                  "(1,0) = %.17g, (0,1) = %.17g", entry(&m, 1, 0), entry(&m, 0, 1));
        }
        check_block_vs_rows(s, 0, n);
        check_block_vs_rows(s, n / 3, n / 3);
        check_block_vs_rows(s, n - 1, 1);
        check_block_vs_rows(s, n, 0);
        csr_free(&m);
    }
    mi_close(s);
}

#endif

static bool write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return false;
    fputs(text, f);
    return fclose(f) == 0;
}

#ifdef MAL_HAVE_CHOLMOD /* files are read only with CHOLMOD */
/* Small files made here: pattern (values 1.0, not CHOLMOD's), general rectangular with a
 * duplicate (summed) and an explicit zero (kept), skew-symmetric, dense array. */
static void test_small_files(const char *tmp)
{
    char path[4096], err[512] = "";
    mi_source_t *s = NULL;
    csr_t m;

    snprintf(path, sizeof path, "%s/pattern.mtx", tmp);
    write_file(path, "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 3\n1 1\n2 1\n"
               "3 2\n");
    CHECK(mi_open(path, &s, err, sizeof err) == 0, "pattern: %s", err);
    if (s && load_all(s, &m)) {
        check_structure(s, &m);
        check_symmetric("pattern", &m);
        int64_t ones = 0;
        for (int64_t k = 0; k < m.rp[m.rows]; k++)
            ones += m.v[k] == 1.0;
        CHECK(mi_nnz(s) == 5 && ones == 5, "pattern: %" PRId64 " nnz, %" PRId64 " ones",
              mi_nnz(s), ones);
        csr_free(&m);
    }
    mi_close(s);
    s = NULL;

    snprintf(path, sizeof path, "%s/rect.mtx", tmp);
    write_file(path, "%%MatrixMarket matrix coordinate integer general\n% comment\n2 3 4\n"
               "1 1 0\n1 3 2\n2 2 -7\n1 3 4\n");
    CHECK(mi_open(path, &s, err, sizeof err) == 0, "rect: %s", err);
    if (s && load_all(s, &m)) {
        check_structure(s, &m);
        CHECK(m.rows == 2 && m.cols == 3 && mi_nnz(s) == 3, "rect: %" PRId64 " x %" PRId64
              ", %" PRId64 " nnz", m.rows, m.cols, mi_nnz(s));
        CHECK(entry(&m, 0, 0) == 0.0 && entry(&m, 0, 2) == 6.0 && entry(&m, 1, 1) == -7.0,
              "rect: entries %g %g %g", entry(&m, 0, 0), entry(&m, 0, 2), entry(&m, 1, 1));
        csr_free(&m);
    }
    mi_close(s);
    s = NULL;

    snprintf(path, sizeof path, "%s/skew.mtx", tmp);
    write_file(path, "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 1.5\n"
               "3 2 2.5\n");
    CHECK(mi_open(path, &s, err, sizeof err) == 0, "skew: %s", err);
    if (s && load_all(s, &m)) {
        check_structure(s, &m);
        CHECK(mi_nnz(s) == 4 && entry(&m, 1, 0) == 1.5 && entry(&m, 0, 1) == -1.5 &&
              entry(&m, 2, 1) == 2.5 && entry(&m, 1, 2) == -2.5, "skew: wrong entries");
        csr_free(&m);
    }
    mi_close(s);
    s = NULL;

    snprintf(path, sizeof path, "%s/dense.mtx", tmp);
    write_file(path, "%%MatrixMarket matrix array real general\n2 2\n1\n0\n3\n4\n");
    CHECK(mi_open(path, &s, err, sizeof err) == 0, "dense: %s", err);
    if (s && load_all(s, &m)) {
        check_structure(s, &m);
        CHECK(mi_nnz(s) == 3 && entry(&m, 0, 0) == 1.0 && entry(&m, 0, 1) == 3.0 &&
              entry(&m, 1, 1) == 4.0, "dense: wrong entries");
        csr_free(&m);
    }
    mi_close(s);
}

/* A real symmetric file: the stored lower triangle is mirrored with the same values, the
 * diagonal kept once, each row's columns in increasing order. */
static void test_small_symmetric(const char *tmp)
{
    char path[4096], err[512] = "";
    mi_source_t *s = NULL;
    csr_t m;

    snprintf(path, sizeof path, "%s/sym.mtx", tmp);
    write_file(path, "%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n1 1 4.5\n"
               "3 1 -0.25\n2 2 2e3\n3 3 1.0e-2\n");
    CHECK(mi_open(path, &s, err, sizeof err) == 0, "sym: %s", err);
    if (s && load_all(s, &m)) {
        check_structure(s, &m);
        check_symmetric("sym", &m);
        CHECK(mi_nnz(s) == 5 && mi_row_nnz(s, 0) == 2 && mi_row_nnz(s, 1) == 1 &&
              mi_row_nnz(s, 2) == 2, "sym: %" PRId64 " nnz", mi_nnz(s));
        CHECK(entry(&m, 0, 0) == 4.5 && entry(&m, 1, 1) == 2000.0 && entry(&m, 2, 2) == 0.01,
              "sym: diagonal %g %g %g", entry(&m, 0, 0), entry(&m, 1, 1), entry(&m, 2, 2));
        CHECK(entry(&m, 2, 0) == -0.25 && entry(&m, 0, 2) == -0.25,
              "sym: (2,0) = %g, (0,2) = %g", entry(&m, 2, 0), entry(&m, 0, 2));
        CHECK(entry(&m, 0, 1) != entry(&m, 0, 1), "sym: (0,1) should not be stored");
        int32_t cols[2] = {-1, -1};
        double vals[2] = {0, 0};
        CHECK(mi_row(s, 2, cols, vals) == 2 && cols[0] == 0 && cols[1] == 2 &&
              vals[0] == -0.25 && vals[1] == 0.01, "sym: mi_row(2) wrong");
        csr_free(&m);
    }
    mi_close(s);
}

#endif

static void test_poisson(void)
{
    char err[512] = "";
    mi_source_t *s = NULL;
    csr_t m;

    /* poisson:4 against the stencil, entry by entry, and symmetric. */
    CHECK(mi_open("poisson:4", &s, err, sizeof err) == 0, "poisson:4: %s", err);
    if (s && load_all(s, &m)) {
        check_structure(s, &m);
        check_symmetric("poisson:4", &m);
        int64_t bad = 0;
        for (int64_t i = 0; i < 16; i++)
            for (int32_t j = 0; j < 16; j++) {
                int64_t xi = i % 4, yi = i / 4, xj = j % 4, yj = j / 4;
                int64_t d = llabs(xi - xj) + llabs(yi - yj);
                double want = d == 0 ? 4.0 : d == 1 ? -1.0 : NAN, got = entry(&m, i, j);
                bad += !(want == got || (want != want && got != got));
            }
        CHECK(bad == 0, "poisson:4: %" PRId64 " entries differ from the stencil", bad);
        CHECK(mi_nnz(s) == 5 * 16 - 16, "poisson:4 nnz %" PRId64, mi_nnz(s));
        csr_free(&m);
    }
    mi_close(s);
    s = NULL;

    /* poisson:1000: corners 3, edges 4, interior 5 summing to 4 - 4*1 = 0. */
    CHECK(mi_open("poisson:1000", &s, err, sizeof err) == 0, "poisson:1000: %s", err);
    if (s) {
        const int64_t n = 1000;
        printf("  %s\n", mi_describe(s));
        CHECK(strcmp(mi_describe(s), "poisson:1000 (1000000 x 1000000, 4996000 nnz)") == 0,
              "describe '%s'", mi_describe(s));
        CHECK(mi_rows(s) == n * n && mi_cols(s) == n * n && mi_nnz(s) == 5 * n * n - 4 * n &&
              mi_max_row_nnz(s) == 5, "poisson:1000 sizes");
        const struct {
            int64_t row, len;
        } cases[] = {{0, 3},         {n - 1, 3},     {n * n - n, 3}, {n * n - 1, 3},
                     {1, 4},         {n, 4},         {2 * n - 1, 4}, {n * n - 2, 4},
                     {n + 1, 5},     {n * n / 2 + 7, 5}};
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            int32_t cols[5];
            double vals[5], sum = 0;
            int64_t row = cases[c].row, len = mi_row(s, row, cols, vals);
            CHECK(len == cases[c].len && mi_row_nnz(s, row) == len, "poisson:1000 row %" PRId64
                  ": %" PRId64 " entries, want %" PRId64, row, len, cases[c].len);
            for (int64_t k = 0; k < len; k++) {
                sum += vals[k];
                CHECK(vals[k] == (cols[k] == row ? 4.0 : -1.0), "row %" PRId64 " col %d: %g",
                      row, cols[k], vals[k]);
                CHECK(k == 0 || cols[k] > cols[k - 1], "row %" PRId64 " not increasing", row);
            }
            CHECK(sum == 4.0 - (double)(len - 1), "row %" PRId64 " sums to %g", row, sum);
            if (len == 5)
                CHECK(sum == 0.0 && cols[0] == row - n && cols[4] == row + n,
                      "interior row %" PRId64, row);
        }
        check_block_vs_rows(s, n - 2, 5);
        check_block_vs_rows(s, n * n - 3 * n, 3 * n);
        int32_t c1;
        CHECK(mi_row(s, n * n, &c1, NULL) == -1 && mi_row(s, -1, &c1, NULL) == -1 &&
              mi_row_nnz(s, n * n) == -1, "rows out of range must give -1");
        int64_t *rp = (int64_t *)&c1;
        int32_t *ci = &c1;
        double *v = (double *)&c1;
        err[0] = '\0';
        CHECK(mi_block(s, n * n - 1, 2, &rp, &ci, &v, err, sizeof err) == -1 && err[0] &&
              !rp && !ci && !v, "block past the end must fail and clear the pointers");
        printf("  error for mi_block(%" PRId64 ", 2): %s\n", n * n - 1, err);
        err[0] = '\0';
        CHECK(mi_block(s, -1, 1, &rp, &ci, &v, err, sizeof err) == -1 && err[0],
              "block from -1 must fail");
    }
    mi_close(s);
    s = NULL;

    /* Tiny and largest grids. */
    CHECK(mi_open("poisson:1", &s, err, sizeof err) == 0 && mi_rows(s) == 1 &&
          mi_nnz(s) == 1 && mi_max_row_nnz(s) == 1, "poisson:1: %s", err);
    mi_close(s);
    s = NULL;
    CHECK(mi_open("poisson:2", &s, err, sizeof err) == 0 && mi_nnz(s) == 12 &&
          mi_max_row_nnz(s) == 3, "poisson:2: %s", err);
    if (s && load_all(s, &m)) {
        check_structure(s, &m);
        csr_free(&m);
    }
    mi_close(s);
    s = NULL;
    CHECK(mi_open("poisson:46340", &s, err, sizeof err) == 0, "poisson:46340: %s", err);
    if (s) {
        int32_t cols[5];
        int64_t last = mi_rows(s) - 1;
        CHECK(mi_rows(s) == INT64_C(46340) * 46340 && mi_row(s, last, cols, NULL) == 3 &&
              cols[2] == (int32_t)last && cols[0] == (int32_t)(last - 46340),
              "poisson:46340 last row");
    }
    mi_close(s);
    s = NULL;

    /* poisson3d:5: corner 4, edge 5, face 6, interior 7 (sum 6 - 6*1 = 0). */
    CHECK(mi_open("poisson3d:5", &s, err, sizeof err) == 0, "poisson3d:5: %s", err);
    if (s && load_all(s, &m)) {
        printf("  %s\n", mi_describe(s));
        check_structure(s, &m);
        check_symmetric("poisson3d:5", &m);
        CHECK(mi_rows(s) == 125 && mi_nnz(s) == 7 * 125 - 6 * 25 && mi_max_row_nnz(s) == 7,
              "poisson3d:5 sizes");
        const int64_t rows[] = {0, 1, 6, 31}, lens[] = {4, 5, 6, 7}; /* (x,y,z) = 0,0,0 */
        for (int c = 0; c < 4; c++) { /* 1,0,0  1,1,0  1,1,1 */
            int64_t r = rows[c], len = m.rp[r + 1] - m.rp[r];
            double sum = 0;
            for (int64_t k = m.rp[r]; k < m.rp[r + 1]; k++)
                sum += m.v[k];
            CHECK(len == lens[c] && sum == 6.0 - (double)(len - 1) && entry(&m, r, (int32_t)r)
                  == 6.0, "poisson3d:5 row %" PRId64 ": %" PRId64 " entries, sum %g", r, len,
                  sum);
        }
        CHECK(entry(&m, 31, 6) == -1.0 && entry(&m, 31, 56) == -1.0 &&
              entry(&m, 31, 30) == -1.0 && entry(&m, 31, 36) == -1.0, "poisson3d:5 row 31");
        check_block_vs_rows(s, 20, 60);
        csr_free(&m);
    }
    mi_close(s);
    s = NULL;
    CHECK(mi_open("poisson3d:1290", &s, err, sizeof err) == 0 &&
              mi_rows(s) == INT64_C(1290) * 1290 * 1290 && mi_row_nnz(s, mi_rows(s) - 1) == 4,
          "poisson3d:1290: %s", err);
    mi_close(s);
}

static uint64_t fnv1a(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t k = 0; k < len; k++)
        h = (h ^ p[k]) * UINT64_C(0x100000001b3);
    return h;
}

/* The off-diagonal columns of a powerlaw row, as positions among the N-1 others
 * (column c > row stands at c-1), are evenly spread: every cyclic gap is floor(M/m) or
 * ceil(M/m), M = N-1, m of them. Returns the number of rows that are not. */
static int64_t uneven_powerlaw_rows(const csr_t *a)
{
    int64_t big_m = a->cols - 1, bad = 0;
    for (int64_t r = 0; r < a->rows; r++) {
        int64_t m = a->rp[r + 1] - a->rp[r] - 1, first = -1, prev = -1, lo, hi;
        if (m < 2)
            continue;
        lo = big_m / m;
        hi = lo + (big_m % m != 0);
        bool ok = true;
        for (int64_t k = a->rp[r]; k < a->rp[r + 1]; k++) {
            if (a->ci[k] == r)
                continue;
            int64_t pos = a->ci[k] - (a->ci[k] > r);
            if (prev >= 0)
                ok = ok && pos - prev >= lo && pos - prev <= hi;
            else
                first = pos;
            prev = pos;
        }
        int64_t wrap = first + big_m - prev;
        bad += !(ok && wrap >= lo && wrap <= hi);
    }
    return bad;
}

static void test_powerlaw(void)
{
    char err[512] = "";
    const int64_t n = 200000;
    mi_source_t *a = NULL, *b = NULL;
    csr_t ma, mb;
    CHECK(mi_open("powerlaw:200000", &a, err, sizeof err) == 0, "powerlaw: %s", err);
    CHECK(mi_open("powerlaw:200000", &b, err, sizeof err) == 0, "powerlaw again: %s", err);
    if (a && b && load_all(a, &ma)) {
        if (load_all(b, &mb)) {
            int64_t nnz = ma.rp[n];
            CHECK(mi_nnz(a) == mi_nnz(b) && mb.rp[n] == nnz &&
                  memcmp(ma.rp, mb.rp, (size_t)(n + 1) * sizeof *ma.rp) == 0 &&
                  memcmp(ma.ci, mb.ci, (size_t)nnz * sizeof *ma.ci) == 0 &&
                  memcmp(ma.v, mb.v, (size_t)nnz * sizeof *ma.v) == 0,
                  "two opens of powerlaw:200000 differ");
            csr_free(&mb);
        }
        check_structure(a, &ma);
        CHECK(uneven_powerlaw_rows(&ma) == 0, "powerlaw:200000: %" PRId64 " uneven rows",
              uneven_powerlaw_rows(&ma));
        /* Golden values: every rank, build and machine must generate this very matrix
         * (integer lengths and columns, values from exact IEEE operations). A change of
         * the generator changes them, and every benchmark input with them. */
        uint64_t h = fnv1a(UINT64_C(0xcbf29ce484222325), ma.rp,
                           (size_t)(n + 1) * sizeof *ma.rp);
        h = fnv1a(h, ma.ci, (size_t)ma.rp[n] * sizeof *ma.ci);
        h = fnv1a(h, ma.v, (size_t)ma.rp[n] * sizeof *ma.v);
        CHECK(mi_nnz(a) == 1097178 && mi_max_row_nnz(a) == 6847 &&
              h == UINT64_C(0x6c0ca019e2550660), "powerlaw:200000 changed: nnz %" PRId64
              ", max %" PRId64 ", FNV-1a 0x%016" PRIx64, mi_nnz(a), mi_max_row_nnz(a), h);
        CHECK(ma.rp[12346] - ma.rp[12345] == 2 && entry(&ma, 12345, 12345) == 2.0 &&
              entry(&ma, 12345, 40259) == -0.62595392101632008, "powerlaw row 12345 changed");
        double mean = (double)mi_nnz(a) / (double)n;
        int64_t tail20 = 0, not_dominant = 0, asym = 0, both = 0;
        for (int64_t r = 0; r < n; r++) {
            int64_t len = ma.rp[r + 1] - ma.rp[r];
            tail20 += len >= 20;
            double diag = entry(&ma, r, (int32_t)r), off = 0;
            for (int64_t k = ma.rp[r]; k < ma.rp[r + 1]; k++)
                if (ma.ci[k] != r && ma.ci[k] >= 0 && ma.ci[k] < n) {
                    off += -ma.v[k];
                    double mirror = entry(&ma, ma.ci[k], (int32_t)r);
                    if (mirror == mirror) { /* stored both ways: same value */
                        both++;
                        asym += mirror != ma.v[k];
                    }
                    not_dominant += !(ma.v[k] < -0.49 && ma.v[k] > -1.0);
                }
            not_dominant += !(diag == (double)len && diag > off);
        }
        double p20 = (double)tail20 / (double)n; /* Pareto: (2/20)^1.5 = 0.0316 */
        printf("  %s: mean row %.2f, max row %" PRId64 ", P(len >= 20) = %.4f, %" PRId64
               " entries mirrored\n", mi_describe(a), mean, mi_max_row_nnz(a), p20, both);
        CHECK(mean > 4.5 && mean < 7.0, "powerlaw mean row length %.2f", mean);
        CHECK((double)mi_max_row_nnz(a) > 50.0 * mean, "powerlaw max %" PRId64 " vs mean %.2f",
              mi_max_row_nnz(a), mean);
        CHECK(p20 > 0.027 && p20 < 0.037, "powerlaw tail P(len >= 20) = %.4f", p20);
        CHECK(not_dominant == 0, "%" PRId64 " powerlaw rows/values not as documented",
              not_dominant);
        CHECK(asym == 0, "%" PRId64 " mirrored powerlaw entries with different values", asym);
        check_block_vs_rows(a, 0, n);
        check_block_vs_rows(a, n / 2, 1000);
        csr_free(&ma);
    }
    mi_close(a);
    mi_close(b);

    /* Small N (lengths capped at N) and N - 1 = 100000 = 2^5 5^5, where the spacing
     * M / m is often exact, unlike at the prime 199999. */
    for (int64_t small = 1; small <= 10; small++) {
        char spec[32];
        snprintf(spec, sizeof spec, "powerlaw:%" PRId64, small <= 9 ? small : 100001);
        mi_source_t *s = NULL;
        csr_t m;
        CHECK(mi_open(spec, &s, err, sizeof err) == 0, "%s: %s", spec, err);
        if (s && load_all(s, &m)) {
            check_structure(s, &m);
            CHECK(mi_max_row_nnz(s) <= mi_rows(s), "%s: row of %" PRId64, spec,
                  mi_max_row_nnz(s));
            CHECK(uneven_powerlaw_rows(&m) == 0, "%s: %" PRId64 " uneven rows", spec,
                  uneven_powerlaw_rows(&m));
            if (small == 10) { /* golden, as for powerlaw:200000 */
                uint64_t h = fnv1a(UINT64_C(0xcbf29ce484222325), m.rp,
                                   (size_t)(m.rows + 1) * sizeof *m.rp);
                h = fnv1a(h, m.ci, (size_t)m.rp[m.rows] * sizeof *m.ci);
                h = fnv1a(h, m.v, (size_t)m.rp[m.rows] * sizeof *m.v);
                CHECK(mi_nnz(s) == 541373 && mi_max_row_nnz(s) == 2643 &&
                      h == UINT64_C(0x9318ccb2eb107e2e), "powerlaw:100001 changed: nnz %"
                      PRId64 ", max %" PRId64 ", FNV-1a 0x%016" PRIx64, mi_nnz(s),
                      mi_max_row_nnz(s), h);
            }
            csr_free(&m);
        }
        mi_close(s);
    }
}

/* Every failure returns -1, leaves *src NULL and says why; the messages are printed. */
static void expect_error(const char *label, const char *spec, const char *needle)
{
    char err[512];
    memset(err, 0, sizeof err);
    mi_source_t *s = (mi_source_t *)&err; /* must be reset to NULL */
    int rc = mi_open(spec, &s, err, sizeof err);
    printf("  error for %-22s %s\n", label, err);
    CHECK(rc == -1 && s == NULL, "%s: mi_open returned %d", label, rc);
    CHECK(err[0] != '\0', "%s: empty message", label);
    CHECK(needle == NULL || strstr(err, needle) != NULL, "%s: message '%s' lacks '%s'", label,
          err, needle);
    if (rc == 0)
        mi_close(s);
}

static void test_errors(const char *dir, const char *tmp)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/no_such_matrix.mtx", dir);
    expect_error("missing file:", path, strerror(ENOENT));
    expect_error("directory:", dir, strerror(EISDIR));
    snprintf(path, sizeof path, "%s/garbage.mtx", tmp);
    write_file(path, "this is not a matrix\n\x01\x02\x03 1 2 3\n");
    expect_error("garbage file:", path, "not a Matrix Market file");
    snprintf(path, sizeof path, "%s/empty.mtx", tmp);
    write_file(path, "");
    expect_error("empty file:", path, "empty file");
    snprintf(path, sizeof path, "%s/headerless.mtx", tmp);
    write_file(path, "3 3 1\n1 1 5\n"); /* CHOLMOD alone would accept this */
    expect_error("headerless triplets:", path, "not a Matrix Market file");
    snprintf(path, sizeof path, "%s/complex.mtx", tmp);
    write_file(path, "%%MatrixMarket matrix coordinate complex general\n2 2 1\n1 1 1.0 2.0\n");
    expect_error("complex file:", path, "complex");
    /* Not tested: a file with fewer entry lines than declared. It fails cleanly ("...:
     * reading the Matrix Market file failed: CHOLMOD: premature EOF (status -4,
     * CHOLMOD_INVALID)"), but CHOLMOD 5.12 leaks its triplet matrix on that path (see
     * matrix_input.c), which would fail this test under valgrind and MAL_SANITIZE=address.
     * A line cut short takes CHOLMOD's other, leak-free error path: */
#ifdef MAL_HAVE_CHOLMOD
    snprintf(path, sizeof path, "%s/cutline.mtx", tmp); /* last line cut after the indices */
    write_file(path, "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1\n2 2\n");
    expect_error("line cut short:", path, "CHOLMOD");
    snprintf(path, sizeof path, "%s/badindex.mtx", tmp);
    write_file(path, "%%MatrixMarket matrix coordinate real general\n3 3 1\n4 1 1\n");
    expect_error("index out of range:", path, "CHOLMOD");
#endif
    snprintf(path, sizeof path, "%s/vector.mtx", tmp);
    write_file(path, "%%MatrixMarket vector coordinate real general\n3 1\n1 1\n");
    expect_error("vector object:", path, "vector");
    expect_error("poisson:0", "poisson:0", "out of range");
    expect_error("poisson:abc", "poisson:abc", "positive decimal integer");
    expect_error("poisson:", "poisson:", "positive decimal integer");
    expect_error("poisson:46341", "poisson:46341", "out of range");
    expect_error("poisson3d:1291", "poisson3d:1291", "out of range");
    expect_error("powerlaw:-3", "powerlaw:-3", "positive decimal integer");
    expect_error("powerlaw:2147483648", "powerlaw:2147483648", "out of range");
    expect_error("powerlaw:huge", "powerlaw:99999999999999999999999", "out of range");
    expect_error("nosuch:5", "nosuch:5", "unknown matrix spec");
    expect_error("empty spec", "", "empty matrix spec");
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s <directory with 1138_bus.mtx and bcsstk13.mtx>\n", argv[0]);
        printf("test_matrix_input: FAIL (no matrix directory given)\n");
        return 1;
    }
    const char *dir = argv[1];
    char tmp[] = "/tmp/test_matrix_input_XXXXXX";
    if (mkdtemp(tmp) == NULL) {
        printf("test_matrix_input: FAIL (mkdtemp: %s)\n", strerror(errno));
        return 1;
    }

#ifdef MAL_HAVE_CHOLMOD
    printf("real matrices:\n");
    /* Independently: awk '!/^%/ {if (h) {n++; if ($1==$2) d++} else h=1}
     *                     END {print n, d, 2*n-d}' FILE
     * prints "2596 1138 4054" for 1138_bus.mtx and "42943 2003 83883" for bcsstk13.mtx. */
    test_real_file(dir, "1138_bus.mtx", 1138, 2596, 1138);
    test_real_file(dir, "bcsstk13.mtx", 2003, 42943, 2003);
    printf("small files:\n");
    test_small_files(tmp);
    test_small_symmetric(tmp);
#else
    /* Built without CHOLMOD: a well-formed file is refused, saying why. */
    char path[4096];
    snprintf(path, sizeof path, "%s/1138_bus.mtx", dir);
    expect_error("without CHOLMOD:", path, "read with CHOLMOD, and this build has none");
#endif
    printf("poisson:\n");
    test_poisson();
    printf("powerlaw:\n");
    test_powerlaw();
    printf("errors:\n");
    test_errors(dir, tmp);

    const char *made[] = {"pattern.mtx",   "rect.mtx",       "skew.mtx",    "dense.mtx",
                          "garbage.mtx",   "empty.mtx",      "headerless.mtx",
                          "complex.mtx",   "cutline.mtx",    "badindex.mtx",
                          "vector.mtx",    "sym.mtx"};
    for (size_t k = 0; k < sizeof made / sizeof made[0]; k++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", tmp, made[k]);
        unlink(path);
    }
    rmdir(tmp);

    if (failures) {
        printf("test_matrix_input: FAIL (%d checks failed)\n", failures);
        return 1;
    }
    printf("test_matrix_input: PASS\n");
    return 0;
}
