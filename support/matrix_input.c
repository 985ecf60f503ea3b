/* Sparse matrices row by row: Matrix Market files through CHOLMOD (when the build has it:
 * MAL_HAVE_CHOLMOD), and generators.
 * See matrix_input.h for the specs and conventions. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "matrix_input.h"

#ifdef MAL_HAVE_CHOLMOD
#include <cholmod.h>
#endif
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef enum { MI_FILE, MI_POISSON2D, MI_POISSON3D, MI_POWERLAW } mi_kind_t;

struct mi_source {
    mi_kind_t kind;
    int64_t n; /* generator parameter N */
    int64_t rows, cols, nnz, max_row_nnz;
    int64_t *rowptr; /* file sources: the whole matrix as CSR */
    int32_t *colind;
    double *values;
    char *desc;
};

/* Largest N whose matrix has at most INT32_MAX columns. */
#define POISSON2D_MAX_N INT64_C(46340)
#define POISSON3D_MAX_N INT64_C(1290)
#define POWERLAW_MAX_N ((int64_t)INT32_MAX)

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (err == NULL || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* ---------------------------------------------------------------------------------- */
/* Hashes and the power-law row lengths                                              */
/* ---------------------------------------------------------------------------------- */

static uint64_t mix64(uint64_t x) /* splitmix64 finalizer: a bijection of 64 bits */
{
    x += UINT64_C(0x9e3779b97f4a7c15);
    x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
    return x ^ (x >> 31);
}

#define SEED_LENGTH UINT64_C(0x6c656e677468) /* distinct streams per use */
#define SEED_OFFSET UINT64_C(0x6f6666736574)
#define SEED_VALUE UINT64_C(0x76616c7565)

__extension__ typedef unsigned __int128 mi_u128;

/* With u = v / 2^32, v = 1 + (top 32 bits of a hash) in [1, 2^32]: the Pareto sample
 * floor(x_m u^(-1/alpha)) with x_m = 2, alpha = 3/2 is the largest l with
 * l^3 v^2 <= 2^67. cbrt gives the estimate; the exact integer test settles it, so the
 * length does not depend on the libm. Result in [2, 5284492], then capped at N. */
static bool pareto_fits(uint64_t l, uint64_t v)
{
    return (mi_u128)l * l * l * ((mi_u128)v * v) <= ((mi_u128)1 << 67);
}

static int64_t powerlaw_len(int64_t n, int64_t row)
{
    uint64_t v = (mix64((uint64_t)row ^ SEED_LENGTH) >> 32) + 1;
    double x = 0x1p67 / ((double)v * (double)v);
    uint64_t l = (uint64_t)cbrt(x);
    if (l < 1)
        l = 1;
    while (l > 1 && !pareto_fits(l, v))
        l--;
    while (pareto_fits(l + 1, v))
        l++;
    return (int64_t)l < n ? (int64_t)l : n;
}

static double powerlaw_offdiag(int64_t i, int64_t j)
{
    uint64_t a = (uint64_t)(i < j ? i : j), b = (uint64_t)(i < j ? j : i);
    uint64_t h = mix64(((a << 32) | b) ^ SEED_VALUE); /* i, j < 2^31: the key is unique */
    return -(0.5 + 0.5 * (double)(h >> 11) * 0x1p-53); /* in (-1, -0.5], symmetric */
}

/* Row i: the diagonal and m = L-1 of the other M = N-1 columns, at positions
 * p_k = (s + floor(k M / m)) mod M for k < m (distinct since M / m >= 1), position p
 * standing for column p + (p >= i). The sequence wraps once, at k0 = ceil((M - s) m / M):
 * emitting k0..m-1 (wrapped) then 0..k0-1 gives increasing columns. */
static int64_t powerlaw_row(int64_t n, int64_t row, int64_t len, int32_t *cols,
                            double *vals)
{
    int64_t m = len - 1, big_m = n - 1, out = 0;
    bool diag_done = false;
#define EMIT(col, val)                     \
    do {                                   \
        cols[out] = (int32_t)(col);        \
        if (vals)                          \
            vals[out] = (val);             \
        out++;                             \
    } while (0)
#define EMIT_POS(p)                                           \
    do {                                                      \
        int64_t c_ = (p) + ((p) >= row);                      \
        if (!diag_done && c_ > row) {                         \
            EMIT(row, (double)len);                           \
            diag_done = true;                                 \
        }                                                     \
        EMIT(c_, vals ? powerlaw_offdiag(row, c_) : 0.0);     \
    } while (0)
    /* s in [0, M): the top 32 bits of a hash scaled by M < 2^31 */
    int64_t s = m > 0 ? (int64_t)(((mix64((uint64_t)row ^ SEED_OFFSET) >> 32) *
                                   (uint64_t)big_m) >> 32)
                      : 0;
    if (m == 1) { /* the most frequent row (about 46%): no divisions */
        EMIT_POS(s);
    } else if (m > 1) {
        int64_t k0 = ((big_m - s) * m + big_m - 1) / big_m;
        /* floor(k M / m) stepped without a division per entry: += q, and one more when
         * the remainder passes m. */
        int64_t q = big_m / m, r = big_m % m;
        int64_t step = k0 * big_m / m, rem = k0 * big_m % m;
        for (int64_t k = k0; k < m; k++) {
            EMIT_POS(s + step - big_m);
            step += q;
            rem += r;
            if (rem >= m) {
                rem -= m;
                step++;
            }
        }
        step = 0;
        rem = 0;
        for (int64_t k = 0; k < k0; k++) {
            EMIT_POS(s + step);
            step += q;
            rem += r;
            if (rem >= m) {
                rem -= m;
                step++;
            }
        }
    }
    if (!diag_done)
        EMIT(row, (double)len);
#undef EMIT_POS
#undef EMIT
    return out;
}

/* ---------------------------------------------------------------------------------- */
/* Poisson stencils                                                                   */
/* ---------------------------------------------------------------------------------- */

static int64_t poisson2d_len(int64_t n, int64_t row)
{
    int64_t x = row % n, y = row / n;
    return 1 + (x > 0) + (x < n - 1) + (y > 0) + (y < n - 1);
}

static int64_t poisson3d_len(int64_t n, int64_t row)
{
    int64_t x = row % n, y = (row / n) % n, z = row / (n * n);
    return 1 + (x > 0) + (x < n - 1) + (y > 0) + (y < n - 1) + (z > 0) + (z < n - 1);
}

#define PUT(col, val)                \
    do {                             \
        cols[k] = (int32_t)(col);    \
        if (vals)                    \
            vals[k] = (val);         \
        k++;                         \
    } while (0)

static int64_t poisson2d_row(int64_t n, int64_t row, int32_t *cols, double *vals)
{
    int64_t x = row % n, y = row / n, k = 0;
    if (y > 0)
        PUT(row - n, -1.0);
    if (x > 0)
        PUT(row - 1, -1.0);
    PUT(row, 4.0);
    if (x < n - 1)
        PUT(row + 1, -1.0);
    if (y < n - 1)
        PUT(row + n, -1.0);
    return k;
}

static int64_t poisson3d_row(int64_t n, int64_t row, int32_t *cols, double *vals)
{
    int64_t x = row % n, y = (row / n) % n, z = row / (n * n), k = 0;
    if (z > 0)
        PUT(row - n * n, -1.0);
    if (y > 0)
        PUT(row - n, -1.0);
    if (x > 0)
        PUT(row - 1, -1.0);
    PUT(row, 6.0);
    if (x < n - 1)
        PUT(row + 1, -1.0);
    if (y < n - 1)
        PUT(row + n, -1.0);
    if (z < n - 1)
        PUT(row + n * n, -1.0);
    return k;
}
#undef PUT

/* ---------------------------------------------------------------------------------- */
/* Matrix Market files through CHOLMOD                                                */
/* ---------------------------------------------------------------------------------- */

#ifdef MAL_HAVE_CHOLMOD
/* CHOLMOD's error handler has no user pointer: the first fatal message of the current
 * read is kept per thread. Later messages are consequences of the first. */
static _Thread_local char cholmod_msg[192];

static void cholmod_handler(int status, const char *file, int line, const char *message)
{
    (void)file;
    (void)line;
    if (status < 0 && cholmod_msg[0] == '\0')
        snprintf(cholmod_msg, sizeof cholmod_msg, "%s", message ? message : "?");
}

static const char *cholmod_status_name(int status)
{
    switch (status) {
    case CHOLMOD_OK: return "CHOLMOD_OK";
    case CHOLMOD_NOT_INSTALLED: return "CHOLMOD_NOT_INSTALLED";
    case CHOLMOD_OUT_OF_MEMORY: return "CHOLMOD_OUT_OF_MEMORY";
    case CHOLMOD_TOO_LARGE: return "CHOLMOD_TOO_LARGE";
    case CHOLMOD_INVALID: return "CHOLMOD_INVALID";
    default: return "CHOLMOD error";
    }
}

#endif

static bool same_word(const char *a, const char *b) /* ASCII case-insensitive */
{
    for (; *a && *b; a++, b++) {
        char ca = (*a >= 'A' && *a <= 'Z') ? (char)(*a - 'A' + 'a') : *a;
        char cb = (*b >= 'A' && *b <= 'Z') ? (char)(*b - 'A' + 'a') : *b;
        if (ca != cb)
            return false;
    }
    return *a == *b;
}

/* Checks the banner line "%%MatrixMarket matrix <format> <field> <symmetry>" before
 * CHOLMOD reads the file: CHOLMOD also accepts headerless triplet files (guessing the
 * symmetry from the data) and infers real/pattern/complex from the number of tokens per
 * line, ignoring the banner's field, so the banner decides what is accepted and whether
 * values are 1.0 (pattern). Only the banner is examined; the data are CHOLMOD's. */
static int check_banner(FILE *f, const char *name, bool *pattern, char *err, size_t errlen)
{
    char line[512];
    errno = 0;
    if (fgets(line, sizeof line, f) == NULL) {
        if (ferror(f))
            set_err(err, errlen, "%s: cannot read: %s", name, strerror(errno ? errno : EIO));
        else
            set_err(err, errlen, "%s: empty file, not a Matrix Market file", name);
        return -1;
    }
    char *tok[6] = {0};
    int ntok = 0;
    for (char *p = line; ntok < 6;) {
        while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
            p++;
        if (*p == '\0')
            break;
        tok[ntok++] = p;
        while (*p && *p != ' ' && *p != '\t' && *p != '\r' && *p != '\n')
            p++;
        if (*p)
            *p++ = '\0';
    }
    if (ntok == 0 || !same_word(tok[0], "%%MatrixMarket")) {
        set_err(err, errlen, "%s: not a Matrix Market file (the first line does not start "
                "with %%%%MatrixMarket)", name);
        return -1;
    }
    if (ntok < 5) {
        set_err(err, errlen, "%s: incomplete Matrix Market banner (want %%%%MatrixMarket "
                "matrix <format> <field> <symmetry>)", name);
        return -1;
    }
    if (!same_word(tok[1], "matrix")) {
        set_err(err, errlen, "%s: Matrix Market object '%s' is not supported (only 'matrix')",
                name, tok[1]);
        return -1;
    }
    if (!same_word(tok[2], "coordinate") && !same_word(tok[2], "array")) {
        set_err(err, errlen, "%s: unknown Matrix Market format '%s' (coordinate or array)",
                name, tok[2]);
        return -1;
    }
    if (same_word(tok[3], "complex")) {
        set_err(err, errlen, "%s: complex matrices are not supported (real, integer or "
                "pattern only)", name);
        return -1;
    }
    if (!same_word(tok[3], "real") && !same_word(tok[3], "integer") &&
        !same_word(tok[3], "pattern")) {
        set_err(err, errlen, "%s: unknown Matrix Market field '%s' (real, integer or "
                "pattern)", name, tok[3]);
        return -1;
    }
    if (!same_word(tok[4], "general") && !same_word(tok[4], "symmetric") &&
        !same_word(tok[4], "skew-symmetric")) {
        set_err(err, errlen, "%s: Matrix Market symmetry '%s' is not supported (general, "
                "symmetric or skew-symmetric)", name, tok[4]);
        return -1;
    }
    *pattern = same_word(tok[3], "pattern");
    return 0;
}

#ifdef MAL_HAVE_CHOLMOD
static void cholmod_failure(const cholmod_common *c, const char *name, const char *what,
                            char *err, size_t errlen)
{
    if (c->status == CHOLMOD_OUT_OF_MEMORY)
        set_err(err, errlen, "%s: out of memory while %s (CHOLMOD_OUT_OF_MEMORY)", name, what);
    else
        set_err(err, errlen, "%s: %s failed: CHOLMOD: %s (status %d, %s)", name, what,
                cholmod_msg[0] ? cholmod_msg : "no message", c->status,
                cholmod_status_name(c->status));
}

/* Reads the file, its banner checked, into src->rowptr/colind/values. */
static int read_with_cholmod(FILE *f, const char *name, bool pattern, mi_source_t *src,
                             char *err, size_t errlen)
{

    cholmod_common c;
    cholmod_l_start(&c);
    c.print = 0; /* no messages of CHOLMOD's own on stderr */
    c.error_handler = cholmod_handler;
    c.prefer_binary = 1; /* symmetric pattern files: 1.0, not CHOLMOD's SPD-making values */
    cholmod_msg[0] = '\0';

    int rc = -1, mtype = -1;
    cholmod_sparse *a = NULL, *t = NULL;
    /* prefer 2: a sparse matrix with stype 0, or 1 (upper triangle stored).
     * Known CHOLMOD 5.12 leak: a file with fewer entry lines than its size line declares
     * fails with "premature EOF" without freeing the triplet (or dense) matrix it has
     * allocated (Check/cholmod_read.c, read_triplet and read_dense return NULL on that
     * path); nothing here can reach it. It costs ~24 bytes per declared entry, once per
     * failed open, and shows in valgrind and ASan. */
    void *m = cholmod_l_read_matrix(f, 2, &mtype, &c);
    if (m == NULL) {
        cholmod_failure(&c, name, "reading the Matrix Market file", err, errlen);
        goto done;
    }
    if (mtype == CHOLMOD_DENSE) {
        cholmod_dense *x = m;
        a = cholmod_l_dense_to_sparse(x, 1, &c);
        cholmod_l_free_dense(&x, &c);
    } else if (mtype == CHOLMOD_TRIPLET) {
        cholmod_triplet *tr = m;
        a = cholmod_l_triplet_to_sparse(tr, 0, &c);
        cholmod_l_free_triplet(&tr, &c);
    } else {
        a = m;
    }
    if (a == NULL) {
        cholmod_failure(&c, name, "converting to a sparse matrix", err, errlen);
        goto done;
    }
    if (a->xtype == CHOLMOD_COMPLEX || a->xtype == CHOLMOD_ZOMPLEX) {
        set_err(err, errlen, "%s: complex matrices are not supported", name);
        goto done;
    }
    if (a->ncol > (size_t)INT32_MAX) {
        set_err(err, errlen, "%s: %zu columns: more than INT32_MAX (column indices are "
                "int32_t)", name, a->ncol);
        goto done;
    }
    if (a->stype != 0) { /* one triangle stored: expand to both, values kept (mode 1) */
        cholmod_sparse *full = cholmod_l_copy(a, 0, 1, &c);
        if (full == NULL) {
            cholmod_failure(&c, name, "expanding the symmetric matrix", err, errlen);
            goto done;
        }
        cholmod_l_free_sparse(&a, &c);
        a = full;
    }
    /* CSC of the transpose = CSR of a; cholmod_transpose returns it packed and sorted. */
    t = cholmod_l_transpose(a, 1, &c);
    if (t == NULL) {
        cholmod_failure(&c, name, "transposing", err, errlen);
        goto done;
    }
    if ((!t->sorted || !t->packed) && !cholmod_l_sort(t, &c)) {
        cholmod_failure(&c, name, "sorting", err, errlen);
        goto done;
    }

    const SuiteSparse_long *tp = t->p, *ti = t->i, *tnz = t->nz;
    const double *tx = (t->xtype == CHOLMOD_REAL && !pattern) ? t->x : NULL;
    int64_t rows = (int64_t)t->ncol, nnz = 0, maxlen = 0;
    for (int64_t r = 0; r < rows; r++) {
        int64_t len = t->packed ? tp[r + 1] - tp[r] : tnz[r];
        nnz += len;
        if (len > maxlen)
            maxlen = len;
    }
    src->rowptr = malloc((size_t)(rows + 1) * sizeof *src->rowptr);
    src->colind = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *src->colind);
    src->values = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *src->values);
    if (!src->rowptr || !src->colind || !src->values) {
        set_err(err, errlen, "%s: out of memory for %lld nonzeros", name, (long long)nnz);
        goto done;
    }
    int64_t pos = 0;
    src->rowptr[0] = 0;
    for (int64_t r = 0; r < rows; r++) {
        int64_t start = tp[r], len = t->packed ? tp[r + 1] - tp[r] : tnz[r];
        for (int64_t k = 0; k < len; k++) {
            src->colind[pos + k] = (int32_t)ti[start + k];
            src->values[pos + k] = tx ? tx[start + k] : 1.0;
        }
        pos += len;
        src->rowptr[r + 1] = pos;
    }
    src->rows = rows;
    src->cols = (int64_t)t->nrow;
    src->nnz = nnz;
    src->max_row_nnz = maxlen;
    rc = 0;
done:
    cholmod_l_free_sparse(&t, &c);
    cholmod_l_free_sparse(&a, &c);
    cholmod_l_finish(&c);
    return rc;
}
#else
/* A build without CHOLMOD (MAL_WITH_CHOLMOD, see docs/guide/install.md) reads no file. */
static int read_with_cholmod(FILE *f, const char *name, bool pattern, mi_source_t *src,
                             char *err, size_t errlen)
{
    (void)f;
    (void)pattern;
    (void)src;
    set_err(err, errlen, "%s: Matrix Market files are read with CHOLMOD, and this build has "
            "none (install libsuitesparse-dev and configure again); the generated matrices "
            "poisson:N, poisson3d:N and powerlaw:N need nothing", name);
    return -1;
}
#endif

/* Reads the file into src->rowptr/colind/values. The FILE is the caller's. */
static int read_matrix_market(FILE *f, const char *name, mi_source_t *src, char *err,
                              size_t errlen)
{
    bool pattern = false;
    if (check_banner(f, name, &pattern, err, errlen) != 0)
        return -1;
    if (fseek(f, 0, SEEK_SET) != 0) {
        set_err(err, errlen, "%s: cannot rewind after the banner: %s", name, strerror(errno));
        return -1;
    }
    return read_with_cholmod(f, name, pattern, src, err, errlen);
}

/* ---------------------------------------------------------------------------------- */
/* Opening                                                                            */
/* ---------------------------------------------------------------------------------- */

typedef struct {
    const char *name;
    mi_kind_t kind;
    int64_t max_n;
    const char *why;
} generator_t;

static const generator_t generators[] = {
    {"poisson", MI_POISSON2D, POISSON2D_MAX_N, "N^2 rows must fit int32 column indices"},
    {"poisson3d", MI_POISSON3D, POISSON3D_MAX_N, "N^3 rows must fit int32 column indices"},
    {"powerlaw", MI_POWERLAW, POWERLAW_MAX_N, "N columns must fit int32 column indices"},
};
#define NGENERATORS (sizeof generators / sizeof generators[0])

static int open_generator(const generator_t *g, const char *spec, const char *arg,
                          mi_source_t *src, char *err, size_t errlen)
{
    int64_t n = 0;
    bool digits = *arg != '\0', overflow = false;
    for (const char *p = arg; *p; p++) {
        if (*p < '0' || *p > '9') {
            digits = false;
            break;
        }
        if (n > (INT64_MAX - 9) / 10)
            overflow = true;
        else
            n = n * 10 + (*p - '0');
    }
    if (!digits) {
        set_err(err, errlen, "%s: N must be a positive decimal integer, got '%s'", spec, arg);
        return -1;
    }
    if (overflow || n < 1 || n > g->max_n) {
        set_err(err, errlen, "%s: N = %s out of range (1 <= N <= %lld: %s)", spec, arg,
                (long long)g->max_n, g->why);
        return -1;
    }
    src->kind = g->kind;
    src->n = n;
    switch (g->kind) {
    case MI_POISSON2D:
        src->rows = n * n;
        src->nnz = 5 * n * n - 4 * n;
        src->max_row_nnz = 1 + 2 * (n - 1 < 2 ? n - 1 : 2);
        break;
    case MI_POISSON3D:
        src->rows = n * n * n;
        src->nnz = 7 * n * n * n - 6 * n * n;
        src->max_row_nnz = 1 + 3 * (n - 1 < 2 ? n - 1 : 2);
        break;
    case MI_POWERLAW:
        src->rows = n;
        src->nnz = 0;
        src->max_row_nnz = 0;
        for (int64_t r = 0; r < n; r++) {
            int64_t len = powerlaw_len(n, r);
            src->nnz += len;
            if (len > src->max_row_nnz)
                src->max_row_nnz = len;
        }
        break;
    case MI_FILE:
        break;
    }
    src->cols = src->rows;
    return 0;
}

/* "word:..." with a word of letters, digits and '_' and no '/': meant as a generator. */
static bool looks_like_generator(const char *spec)
{
    const char *colon = strchr(spec, ':');
    if (colon == NULL || colon == spec || strchr(spec, '/') != NULL)
        return false;
    for (const char *p = spec; p < colon; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
              (*p >= '0' && *p <= '9') || *p == '_'))
            return false;
    return true;
}

static int open_file(const char *spec, mi_source_t *src, char *err, size_t errlen)
{
    FILE *f = fopen(spec, "r");
    if (f == NULL) {
        int e = errno;
        if (e == ENOENT && looks_like_generator(spec)) {
            int len = (int)(strchr(spec, ':') - spec);
            set_err(err, errlen, "unknown matrix spec '%s': no generator '%.*s' (known: "
                    "poisson:N, poisson3d:N, powerlaw:N) and no file of that name", spec,
                    len, spec);
        } else {
            set_err(err, errlen, "%s: cannot open: %s", spec, strerror(e));
        }
        return -1;
    }
    struct stat st;
    int rc = -1;
    if (fstat(fileno(f), &st) != 0)
        set_err(err, errlen, "%s: cannot stat: %s", spec, strerror(errno));
    else if (S_ISDIR(st.st_mode))
        set_err(err, errlen, "%s: %s, not a Matrix Market file", spec, strerror(EISDIR));
    else
        rc = read_matrix_market(f, spec, src, err, errlen);
    fclose(f);
    if (rc == 0)
        src->kind = MI_FILE;
    return rc;
}

int mi_open(const char *spec, mi_source_t **srcp, char *err, size_t errlen)
{
    if (srcp == NULL) {
        set_err(err, errlen, "mi_open: NULL source pointer");
        return -1;
    }
    *srcp = NULL;
    if (err && errlen)
        err[0] = '\0';
    if (spec == NULL || spec[0] == '\0') {
        set_err(err, errlen, "empty matrix spec (a Matrix Market file, poisson:N, "
                "poisson3d:N or powerlaw:N)");
        return -1;
    }
    mi_source_t *src = calloc(1, sizeof *src);
    if (src == NULL) {
        set_err(err, errlen, "%s: out of memory", spec);
        return -1;
    }
    const generator_t *g = NULL;
    const char *colon = strchr(spec, ':');
    for (size_t k = 0; colon && k < NGENERATORS; k++)
        if (strlen(generators[k].name) == (size_t)(colon - spec) &&
            strncmp(spec, generators[k].name, (size_t)(colon - spec)) == 0)
            g = &generators[k];
    int rc = g ? open_generator(g, spec, colon + 1, src, err, errlen)
               : open_file(spec, src, err, errlen);
    if (rc != 0) {
        mi_close(src);
        return -1;
    }

    const char *name = spec;
    if (src->kind == MI_FILE && strrchr(spec, '/') != NULL)
        name = strrchr(spec, '/') + 1;
    const char *fmt = "%s (%lld x %lld, %lld nnz)";
    int len = snprintf(NULL, 0, fmt, name, (long long)src->rows, (long long)src->cols,
                       (long long)src->nnz);
    src->desc = malloc((size_t)len + 1);
    if (src->desc == NULL) {
        set_err(err, errlen, "%s: out of memory", spec);
        mi_close(src);
        return -1;
    }
    snprintf(src->desc, (size_t)len + 1, fmt, name, (long long)src->rows,
             (long long)src->cols, (long long)src->nnz);
    *srcp = src;
    return 0;
}

void mi_close(mi_source_t *src)
{
    if (src == NULL)
        return;
    free(src->rowptr);
    free(src->colind);
    free(src->values);
    free(src->desc);
    free(src);
}

/* ---------------------------------------------------------------------------------- */
/* Access                                                                             */
/* ---------------------------------------------------------------------------------- */

int64_t mi_rows(const mi_source_t *src) { return src->rows; }
int64_t mi_cols(const mi_source_t *src) { return src->cols; }
int64_t mi_nnz(const mi_source_t *src) { return src->nnz; }
int64_t mi_max_row_nnz(const mi_source_t *src) { return src->max_row_nnz; }
const char *mi_describe(const mi_source_t *src) { return src->desc; }

int64_t mi_row_nnz(const mi_source_t *src, int64_t row)
{
    if (row < 0 || row >= src->rows)
        return -1;
    switch (src->kind) {
    case MI_FILE: return src->rowptr[row + 1] - src->rowptr[row];
    case MI_POISSON2D: return poisson2d_len(src->n, row);
    case MI_POISSON3D: return poisson3d_len(src->n, row);
    case MI_POWERLAW: return powerlaw_len(src->n, row);
    }
    return -1;
}

int64_t mi_row(const mi_source_t *src, int64_t row, int32_t *cols, double *vals)
{
    if (row < 0 || row >= src->rows)
        return -1;
    switch (src->kind) {
    case MI_FILE: {
        int64_t start = src->rowptr[row], len = src->rowptr[row + 1] - start;
        memcpy(cols, src->colind + start, (size_t)len * sizeof *cols);
        if (vals)
            memcpy(vals, src->values + start, (size_t)len * sizeof *vals);
        return len;
    }
    case MI_POISSON2D: return poisson2d_row(src->n, row, cols, vals);
    case MI_POISSON3D: return poisson3d_row(src->n, row, cols, vals);
    case MI_POWERLAW: return powerlaw_row(src->n, row, powerlaw_len(src->n, row), cols, vals);
    }
    return -1;
}

int mi_block(const mi_source_t *src, int64_t first, int64_t count, int64_t **rowptr,
             int32_t **colind, double **values, char *err, size_t errlen)
{
    *rowptr = NULL;
    *colind = NULL;
    *values = NULL;
    if (first < 0 || count < 0 || first > src->rows || count > src->rows - first) {
        set_err(err, errlen, "%s: block of %lld rows from row %lld is outside rows "
                "[0, %lld)", src->desc, (long long)count, (long long)first,
                (long long)src->rows);
        return -1;
    }
    int64_t *rp = malloc((size_t)(count + 1) * sizeof *rp);
    if (rp == NULL) {
        set_err(err, errlen, "%s: out of memory for %lld row pointers", src->desc,
                (long long)count + 1);
        return -1;
    }
    rp[0] = 0;
    if (src->kind == MI_FILE) {
        for (int64_t r = 0; r < count; r++)
            rp[r + 1] = src->rowptr[first + r + 1] - src->rowptr[first];
    } else {
        for (int64_t r = 0; r < count; r++)
            rp[r + 1] = rp[r] + mi_row_nnz(src, first + r);
    }
    int64_t nnz = rp[count];
    int32_t *ci = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *ci);
    double *v = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *v);
    if (ci == NULL || v == NULL) {
        set_err(err, errlen, "%s: out of memory for %lld nonzeros of rows [%lld, %lld)",
                src->desc, (long long)nnz, (long long)first, (long long)(first + count));
        free(rp);
        free(ci);
        free(v);
        return -1;
    }
    if (src->kind == MI_FILE) {
        int64_t base = src->rowptr[first];
        memcpy(ci, src->colind + base, (size_t)nnz * sizeof *ci);
        memcpy(v, src->values + base, (size_t)nnz * sizeof *v);
    } else if (src->kind == MI_POWERLAW) { /* row lengths known: not recomputed */
        for (int64_t r = 0; r < count; r++)
            powerlaw_row(src->n, first + r, rp[r + 1] - rp[r], ci + rp[r], v + rp[r]);
    } else {
        for (int64_t r = 0; r < count; r++)
            mi_row(src, first + r, ci + rp[r], v + rp[r]);
    }
    *rowptr = rp;
    *colind = ci;
    *values = v;
    return 0;
}
