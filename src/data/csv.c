/*
 * csv.c - tables of numbers with one integer label column, or with float
 * regression target columns (target=). Strict: every row has the same
 * number of fields, every feature and target is a finite number that
 * strtod consumes whole, every label an integer >= 0 that strtol consumes
 * whole; the first failure is reported as FILE:LINE:COLUMN (both from 1,
 * the column counting characters, as editors do). Fields may be padded with
 * blanks and wrapped in double quotes (without embedded commas); blank lines
 * are skipped. The first row is a header when any of its fields is not a
 * number (or when told so).
 *
 * Options (ct_csv_options): shape= gives each row's features the shape
 * (C, H, W) in row-major order (Kaggle's mnist_train.csv: label then 784
 * pixels, 1x28x28); split= keeps one part of a stratified, seeded split of
 * the rows (ct_text_split, as textdir splits); normalize=standard marks
 * the dataset for the training split's mean and std per feature (per
 * channel with shape=), computed here for the training part.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "data/dataset.h"

#define MAX_FILE_BYTES ((size_t)1 << 36)

typedef struct field {
    const char *s; /* trimmed text, not NUL-terminated */
    size_t len;
    size_t col;    /* 1-based column of the field's first character */
} field;

typedef struct fields {
    field *f;
    size_t n, cap;
} fields;

/* Splits the line [p, end) into trimmed fields. */
static int split_line(const char *p, const char *end, const char *line_start, fields *out)
{
    out->n = 0;
    for (;;) {
        const char *q = p;
        while (q < end && *q != ',')
            q++;
        const char *a = p, *b = q;
        while (a < b && (*a == ' ' || *a == '\t'))
            a++;
        while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
            b--;
        if (b - a >= 2 && *a == '"' && b[-1] == '"') {
            a++;
            b--;
        }
        if (out->n == out->cap) {
            size_t ncap = out->cap ? out->cap * 2 : 64;
            field *nf = realloc(out->f, ncap * sizeof *nf);
            if (!nf)
                return ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory");
            out->f = nf;
            out->cap = ncap;
        }
        out->f[out->n++] = (field){ a, (size_t)(b - a), (size_t)(p - line_start) + 1 };
        if (q == end)
            return CT_OK;
        p = q + 1;
    }
}

/* A finite number that strtod reads whole. The text is copied so strtod
 * cannot run past the field (into the next line, say). */
static int parse_number(const field *f, double *out)
{
    char tmp[128];
    if (f->len == 0 || f->len >= sizeof tmp)
        return 0;
    memcpy(tmp, f->s, f->len);
    tmp[f->len] = 0;
    char *e = NULL;
    errno = 0;
    double v = strtod(tmp, &e);
    if (e != tmp + f->len || !isfinite(v) || (errno == ERANGE && fabs(v) > 1))
        return 0;
    *out = v;
    return 1;
}

static int parse_label(const field *f, long *out)
{
    char tmp[32];
    if (f->len == 0 || f->len >= sizeof tmp)
        return 0;
    memcpy(tmp, f->s, f->len);
    tmp[f->len] = 0;
    char *e = NULL;
    errno = 0;
    long v = strtol(tmp, &e, 10);
    if (e != tmp + f->len || errno || v < 0 || v > INT32_MAX)
        return 0;
    *out = v;
    return 1;
}

/* A column named by `want` (len bytes): a header name, else a 0-based
 * index; `key` (label or target) names the option in messages. */
static int find_column(const char *path, const char *key, const char *want, size_t len,
                       const fields *hdr, int has_header, size_t nfields, size_t *col)
{
    char name[256];
    if (len == 0 || len >= sizeof name)
        return ct_fail(NULL, CT_ERR_INVALID_ARG, "%s: %s column name of %zu bytes; HINT: %s= takes "
                       "header names or 0-based column indices", path, key, len, key);
    memcpy(name, want, len);
    name[len] = 0;
    if (has_header)
        for (size_t i = 0; i < hdr->n; i++)
            if (len == hdr->f[i].len && !strncmp(name, hdr->f[i].s, len)) {
                *col = i;
                return CT_OK;
            }
    char *e = NULL;
    errno = 0;
    unsigned long v = (*name >= '0' && *name <= '9') ? strtoul(name, &e, 10) : 0;
    if (e && !*e && !errno && v < nfields) {
        *col = v;
        return CT_OK;
    }
    return ct_fail(NULL, CT_ERR_INVALID_ARG,
                   "%s: no %s column '%s'%s; HINT: %s= takes a header name or a 0-based "
                   "column index below %zu",
                   path, key, name, has_header ? "" : " (the file has no header row)", key, nfields);
}

/* The label column (default 0). */
static int label_column(const char *path, const char *want, const fields *hdr, int has_header,
                        size_t nfields, size_t *col)
{
    *col = 0;
    return want ? find_column(path, "label", want, strlen(want), hdr, has_header, nfields, col)
                : CT_OK;
}

/* The target columns of the comma-separated list `want`: is_target
 * (nfields) marks them, cols (nfields) lists them in the order given, *k
 * counts them. A column named twice, or no feature column left, is an
 * error. */
static int target_columns(const char *path, const char *want, const fields *hdr, int has_header,
                          size_t nfields, unsigned char *is_target, size_t *cols, size_t *k)
{
    *k = 0;
    memset(is_target, 0, nfields);
    for (const char *p = want;;) {
        size_t len = strcspn(p, ","), col = 0;
        int st = find_column(path, "target", p, len, hdr, has_header, nfields, &col);
        if (st)
            return st;
        if (is_target[col])
            return ct_fail(NULL, CT_ERR_INVALID_ARG, "%s: target= names column %zu twice; HINT: "
                           "list each target column once", path, col);
        is_target[col] = 1;
        cols[(*k)++] = col;
        if (!p[len])
            break;
        p += len + 1;
    }
    if (*k >= nfields)
        return ct_fail(NULL, CT_ERR_INVALID_ARG, "%s: target= takes all %zu columns, leaving no "
                       "feature; HINT: name only the columns to predict", path, nfields);
    return CT_OK;
}

/* "name" or "column N", malloc'd. */
static char *column_name(const fields *hdr, int has_header, size_t col)
{
    char buf[64];
    const char *s = buf;
    size_t len;
    if (has_header && hdr->f[col].len) {
        s = hdr->f[col].s;
        len = hdr->f[col].len;
    } else {
        len = (size_t)snprintf(buf, sizeof buf, "column %zu", col);
    }
    char *out = malloc(len + 1);
    if (out) {
        memcpy(out, s, len);
        out[len] = 0;
    }
    return out;
}

/* split=: keeps the rows of opt->part, in file order. */
/* Keeps the rows of opt->part of a seeded split: stratified by class for
 * labelled rows, a plain shuffle for regression rows (y NULL, K targets
 * each in tg). */
static int keep_part(const char *path, const ct_csv_options *opt, int classes, size_t nf, float *x,
                     int32_t *y, float *tg, size_t K, size_t *nrows)
{
    uint8_t *is_test = malloc(*nrows);
    int32_t *one = y ? NULL : calloc(*nrows, sizeof *one); /* regression: one class */
    if (!is_test || (!y && !one)) {
        free(is_test);
        free(one);
        return ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory splitting %s", path);
    }
    int st = ct_text_split(y ? y : one, *nrows, y ? classes : 1, opt->split, opt->seed, is_test);
    size_t m = 0;
    for (size_t i = 0; !st && i < *nrows; i++)
        if (is_test[i] == (opt->part == CT_SPLIT_TEST)) {
            memmove(x + m * nf, x + i * nf, nf * sizeof *x);
            if (y)
                y[m] = y[i];
            if (tg)
                memmove(tg + m * K, tg + i * K, K * sizeof *tg);
            m++;
        }
    free(is_test);
    free(one);
    if (st)
        return st;
    if (m == 0)
        return ct_fail(NULL, CT_ERR_INVALID_ARG, "%s: split=%g leaves the %s part without rows (%zu "
                       "rows in all); HINT: use a split fraction that leaves rows on both sides",
                       path, opt->split, opt->part == CT_SPLIT_TEST ? "test" : "training", *nrows);
    *nrows = m;
    return CT_OK;
}

int ct_csv_load(const char *path, const ct_csv_options *opt, ct_dataset **out)
{
    ct_gzin in;
    uint8_t *text = NULL;
    size_t size = 0, nfields = 0, lcol = 0, nrows = 0, cap = 0;
    size_t nfeat = 0, K = 0; /* K: target columns (0: a label column) */
    uint64_t extra = 0;
    fields row = { 0 }, hdr = { 0 };
    float *x = NULL, *tg = NULL;
    int32_t *y = NULL;
    unsigned char *is_target = NULL;
    size_t *tcols = NULL;
    char **tnames = NULL;
    long top = -1;
    int header = opt->header, first = 1;
    ct_dataset *ds = NULL;
    char name[4200];
    *out = NULL;
    int st = ct_gzin_open(&in, path);
    if (st)
        return st;
    st = ct_gzin_read_alloc(&in, MAX_FILE_BYTES, &text, &size);
    if (!st)
        st = ct_gzin_count_rest(&in, &extra);
    ct_gzin_close(&in);
    if (st)
        goto done;
    if (extra) {
        st = ct_fail(NULL, CT_ERR_UNSUPPORTED, "%s: larger than %zu bytes", path, MAX_FILE_BYTES);
        goto done;
    }
    const char *p = (const char *)text, *end = p + size;
    for (size_t line = 1; p < end; line++) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        const char *next = eol ? eol + 1 : end;
        const char *le = eol ? eol : end;
        if (le > p && le[-1] == '\r')
            le--;
        const char *b = p;
        while (b < le && (*b == ' ' || *b == '\t'))
            b++;
        if (b == le) { /* blank */
            p = next;
            continue;
        }
        if (memchr(p, 0, (size_t)(le - p))) {
            st = ct_fail(NULL, CT_ERR_CORRUPT, "%s:%zu:%zu: a NUL byte: not a text file", path, line,
                         (size_t)((const char *)memchr(p, 0, (size_t)(le - p)) - p) + 1);
            goto done;
        }
        if ((st = split_line(p, le, p, &row)))
            goto done;
        if (first) {
            first = 0;
            nfields = row.n;
            if (nfields - 1 > (1u << 24)) {
                st = ct_fail(NULL, CT_ERR_UNSUPPORTED, "%s:%zu:1: %zu fields, more than cltrain "
                             "takes (%u features)", path, line, nfields, 1u << 24);
                goto done;
            }
            if (nfields < 2) {
                st = ct_fail(NULL, CT_ERR_CORRUPT,
                             "%s:%zu:1: %zu field, want a %s and at least one feature; "
                             "HINT: fields are separated by commas",
                             path, line, nfields, opt->target ? "target" : "label");
                goto done;
            }
            if (header < 0) {
                double v;
                header = 0;
                for (size_t i = 0; i < row.n; i++)
                    if (!parse_number(&row.f[i], &v))
                        header = 1;
            }
            if (header) {
                fields t = hdr;
                hdr = row;
                row = t;
            }
            if (opt->target) {
                is_target = malloc(nfields);
                tcols = malloc(nfields * sizeof *tcols);
                if (!is_target || !tcols) {
                    st = ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory reading %s", path);
                    goto done;
                }
                if ((st = target_columns(path, opt->target, &hdr, header, nfields, is_target,
                                         tcols, &K)))
                    goto done;
                tnames = calloc(K, sizeof *tnames);
                for (size_t k = 0; tnames && k < K; k++)
                    if (!(tnames[k] = column_name(&hdr, header, tcols[k]))) {
                        ct_free_strings(tnames, K);
                        tnames = NULL;
                    }
                if (!tnames) {
                    st = ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory reading %s", path);
                    goto done;
                }
                lcol = SIZE_MAX;
            } else if ((st = label_column(path, opt->label, &hdr, header, nfields, &lcol))) {
                goto done;
            }
            nfeat = nfields - (K ? K : 1);
            size_t want = opt->shape[0] ? (size_t)opt->shape[0] * (size_t)opt->shape[1] * (size_t)opt->shape[2] : 0;
            if (want && nfeat != want) {
                st = ct_fail(NULL, CT_ERR_SHAPE, "%s:%zu:1: %zu features (and %s), but shape=%dx%dx%d "
                             "takes %zu; HINT: give the shape whose product is the feature count",
                             path, line, nfeat, K ? "the targets" : "a label", opt->shape[0],
                             opt->shape[1], opt->shape[2], want);
                goto done;
            }
            if (header) {
                p = next;
                continue;
            }
        }
        if (row.n != nfields) {
            size_t col = row.n > nfields ? row.f[nfields].col : (size_t)(le - p) + 1;
            st = ct_fail(NULL, CT_ERR_CORRUPT, "%s:%zu:%zu: %zu fields, want %zu as in the first row",
                         path, line, col, row.n, nfields);
            goto done;
        }
        if (nrows == cap) {
            size_t ncap = cap ? cap * 2 : 1024;
            float *nx = realloc(x, ncap * nfeat * sizeof *nx);
            if (nx)
                x = nx;
            int32_t *ny = nx && !K ? realloc(y, ncap * sizeof *ny) : NULL;
            if (ny)
                y = ny;
            float *nt = nx && K ? realloc(tg, ncap * K * sizeof *nt) : NULL;
            if (nt)
                tg = nt;
            if (!nx || (!ny && !nt)) {
                st = ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory reading %s at line %zu", path,
                             line);
                goto done;
            }
            cap = ncap;
        }
        float *xr = x + nrows * nfeat;
        for (size_t i = 0; i < K; i++) {
            /* the targets in the order target= names them */
            const field *f = &row.f[tcols[i]];
            double v;
            if (!parse_number(f, &v) || fabs(v) > 3.4e38) {
                st = ct_fail(NULL, CT_ERR_CORRUPT, "%s:%zu:%zu: target '%s' %s%.*s%s; HINT: every "
                             "target cell must hold a finite number that fits a float", path, line,
                             f->col, tnames[i], f->len ? "'" : "is missing (an empty cell)",
                             (int)(f->len > 40 ? 40 : f->len), f->s,
                             f->len ? "' is not a finite float" : "");
                goto done;
            }
            tg[nrows * K + i] = (float)v;
        }
        for (size_t i = 0; i < nfields; i++) {
            const field *f = &row.f[i];
            if (K && is_target[i])
                continue;
            if (i == lcol) {
                long v;
                if (!parse_label(f, &v)) {
                    st = ct_fail(NULL, CT_ERR_CORRUPT,
                                 "%s:%zu:%zu: label '%.*s' is not a non-negative integer", path,
                                 line, f->col, (int)(f->len > 40 ? 40 : f->len), f->s);
                    goto done;
                }
                if (opt->classes > 0 && v >= opt->classes) {
                    st = ct_fail(NULL, CT_ERR_CORRUPT,
                                 "%s:%zu:%zu: label %ld out of range for classes=%d", path, line,
                                 f->col, v, opt->classes);
                    goto done;
                }
                if (v > top)
                    top = v;
                y[nrows] = (int32_t)v;
            } else {
                double v;
                if (!parse_number(f, &v)) {
                    st = ct_fail(NULL, CT_ERR_CORRUPT, "%s:%zu:%zu: field %zu '%.*s' is not a %s",
                                 path, line, f->col, i + 1, (int)(f->len > 40 ? 40 : f->len), f->s,
                                 f->len ? "finite number" : "number (it is empty)");
                    goto done;
                }
                if (fabs(v) > 3.4e38) {
                    st = ct_fail(NULL, CT_ERR_CORRUPT, "%s:%zu:%zu: %g does not fit a float", path,
                                 line, f->col, v);
                    goto done;
                }
                *xr++ = (float)v;
            }
        }
        nrows++;
        p = next;
    }
    if (nrows == 0) {
        st = ct_fail(NULL, CT_ERR_CORRUPT, "%s: no data rows", path);
        goto done;
    }
    if (top >= INT_MAX) {
        st = ct_fail(NULL, CT_ERR_CORRUPT, "%s: label %ld is too large", path, top);
        goto done;
    }
    int classes = K ? 0 : opt->classes > 0 ? opt->classes : (int)top + 1;
    if (opt->split > 0 && (st = keep_part(path, opt, classes, nfeat, x, y, tg, K, &nrows)))
        goto done;
    snprintf(name, sizeof name, "csv %s%s", path, opt->split == 0 ? ""
             : opt->part == CT_SPLIT_TEST ? " (split: test rows)" : " (split: training rows)");
    if (opt->shape[0])
        st = ct_dataset_new(name, opt->shape[0], opt->shape[1], opt->shape[2], CT_STORE_F32, &ds);
    else
        st = ct_dataset_new(name, (int)nfeat, 1, 1, CT_STORE_F32, &ds);
    if (st)
        goto done;
    ds->n = nrows;
    ds->classes = classes;
    ds->f32 = x;
    ds->labels = y;
    ds->ntargets = (int)K;
    ds->targets = tg;
    ds->target_names = tnames;
    x = tg = NULL;
    y = NULL;
    tnames = NULL;
    ds->norm_from_train = opt->standardize;
    if (opt->standardize && opt->part == CT_SPLIT_TRAIN) {
        float *mean = malloc((size_t)ds->c * sizeof *mean), *sd = malloc((size_t)ds->c * sizeof *sd);
        st = !mean || !sd ? ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory")
                          : ct_dataset_compute_norm(ds, mean, sd, ds->c);
        if (!st)
            st = ct_dataset_set_norm(ds, mean, sd, ds->c);
        free(mean);
        free(sd);
        if (st) {
            ct_dataset_free(&ds);
            goto done;
        }
    }
    *out = ds;
done:
    free(text);
    free(row.f);
    free(hdr.f);
    free(x);
    free(y);
    free(tg);
    free(is_target);
    free(tcols);
    ct_free_strings(tnames, K);
    return st;
}
