/*
 * npydata.c - datasets from NumPy arrays (npy: and npz: specs, src/data/
 * spec.c): samples X (N, ...) and labels or targets Y (N, ...).
 *
 * X (N) or (N, F) are feature vectors (F, 1, 1), (N, H, W) one-channel
 * images, (N, C, H, W) images. uint8 X is kept as bytes (pixels scaled by
 * 1/255) and normalized with the training split's mean and std per
 * channel; other dtypes are converted to float and kept as they are unless
 * normalize=standard. Y (N) of integers or bools is class labels (0 to
 * K - 1); integer Y (N, H, W) of X's height and width a label per pixel
 * (segmentation); float Y, or Y (N, K) of any dtype, is K float targets per sample
 * (regression, multi-label). A test split comes from test=X,Y files (npz:
 * another archive, or the archive's x_test/y_test members) or from a
 * seeded, stratified split=F of the training arrays.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/util.h"
#include "data/dataset.h"
#include "data/npy.h"

/* A whole file, plain or gzipped, read into memory */
static int read_file(const char *path, uint8_t **buf, size_t *n)
{
    ct_gzin in;
    int st = ct_gzin_open(&in, path);
    if (st)
        return st;
    st = ct_gzin_read_alloc(&in, (size_t)1 << 37, buf, n);
    ct_gzin_close(&in);
    return st;
}

/* A .npy file parsed; *raw holds the bytes a points into */
static int load_npy(const char *path, ct_npy *a, uint8_t **raw, char *where, size_t where_cap)
{
    size_t n = 0;
    int st = read_file(path, raw, &n);
    if (st)
        return st;
    snprintf(where, where_cap, "%s", path);
    return ct_npy_parse(*raw, n, where, a);
}

/* Member `member` of the archive zip (n bytes, read from path) parsed;
 * *raw holds the bytes a points into. A missing member is
 * CT_ERR_INVALID_ARG (ct_npz_member), with nothing decompressed. */
static int load_member(const uint8_t *zip, size_t n, const char *path, const char *member, ct_npy *a,
                       uint8_t **raw, char *where, size_t where_cap)
{
    size_t mn = 0;
    int st = ct_npz_member(zip, n, path, member, raw, &mn);
    if (st)
        return st;
    snprintf(where, where_cap, "%s (%s.npy)", path, member);
    return ct_npy_parse(*raw, mn, where, a);
}

/* X and Y of an archive: the members named, or (x_member NULL) Keras'
 * layout, x_train and y_train (x_test and y_test for the test split of
 * the archive itself, test_members), else x and y. The archive is read
 * once; a member is decompressed only when it is the one taken. */
static int load_npz(const ct_npy_spec *o, const char *path, int test_members, ct_npy *x, uint8_t **xr, char *xw,
                    ct_npy *y, uint8_t **yr, char *yw, size_t cap)
{
    uint8_t *zip = NULL;
    size_t n = 0;
    int st = read_file(path, &zip, &n);
    if (st)
        return st;
    const char *xm = o->x_member, *ym = o->y_member;
    if (xm) {
        st = load_member(zip, n, path, xm, x, xr, xw, cap);
    } else {
        xm = test_members ? "x_test" : "x_train";
        ym = test_members ? "y_test" : "y_train";
        st = load_member(zip, n, path, xm, x, xr, xw, cap);
        if (st == CT_ERR_INVALID_ARG && test_members) {
            st = ct_fail(NULL, CT_ERR_INVALID_ARG, "dataset '%s' has no test split (%s holds no x_test); HINT: "
                         "name another archive with :test=FILE, or hold out a fraction F of the samples with "
                         ":split=F", o->spec, path);
        } else if (st == CT_ERR_INVALID_ARG) { /* not Keras' layout: x and y */
            ym = "y";
            st = load_member(zip, n, path, "x", x, xr, xw, cap);
        }
    }
    if (!st)
        st = load_member(zip, n, path, ym, y, yr, yw, cap);
    free(zip);
    return st;
}

/* X and Y of one split into a new dataset */
static int build(const ct_npy_spec *o, const ct_npy *x, const char *xw, const ct_npy *y, const char *yw,
                 int part, ct_dataset **out)
{
    *out = NULL;
    if (x->ndim < 1 || x->ndim > 4 || x->shape[0] == 0)
        return ct_fail(NULL, CT_ERR_SHAPE, "%s: samples of %d dimensions%s; HINT: X is (N), (N, F), (N, H, W) or "
                       "(N, C, H, W)", xw, x->ndim, x->ndim >= 1 && !x->shape[0] ? " and none of them" : "");
    uint64_t d[3] = { 1, 1, 1 };
    for (int i = 1; i < x->ndim; i++)
        d[x->ndim == 3 ? i : i - 1] = x->shape[i];
    if (x->ndim == 2)
        d[0] = x->shape[1];
    /* a label per pixel: integer Y (N, H, W) of the images' H and W */
    int pixels = y->ndim == 3 && y->kind != 'f' && x->ndim >= 3 && y->shape[1] == d[1] && y->shape[2] == d[2];
    if (y->ndim < 1 || (y->ndim > 2 && !pixels) || y->shape[0] != x->shape[0])
        return ct_fail(NULL, CT_ERR_SHAPE, "%s: %d-dimensional with %llu rows for %llu samples in %s; HINT: Y is "
                       "(N) labels, (N, K) targets or (N, H, W) integer labels of the images' height and width",
                       yw, y->ndim, (unsigned long long)(y->ndim ? y->shape[0] : 0), (unsigned long long)x->shape[0],
                       xw);
    if (d[0] > 1u << 20 || d[1] > 1u << 16 || d[2] > 1u << 16 || d[0] * d[1] * d[2] > 1u << 26)
        return ct_fail(NULL, CT_ERR_SHAPE, "%s: samples of %llux%llux%llu are too large", xw,
                       (unsigned long long)d[0], (unsigned long long)d[1], (unsigned long long)d[2]);
    size_t n = (size_t)x->shape[0], per = (size_t)(d[0] * d[1] * d[2]);
    int labels = (y->ndim == 1 && y->kind != 'f') || pixels;
    size_t lper = pixels ? (size_t)(d[1] * d[2]) : 1; /* labels per sample */
    size_t K = labels ? 0 : y->ndim == 2 ? (size_t)y->shape[1] : 1;
    if (!labels && (K == 0 || K > 4096))
        return ct_fail(NULL, CT_ERR_SHAPE, "%s: %zu targets per sample", yw, K);
    /* labels first: a bad one fails before the samples are copied */
    int32_t *lab = NULL;
    float *tg = NULL;
    int classes = o->classes;
    if (labels) {
        lab = malloc(n * lper * sizeof *lab);
        if (!lab)
            return ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory for %zu labels", n * lper);
        int top = -1;
        for (size_t i = 0; i < n * lper; i++) {
            double v = ct_npy_get(y, i);
            if (!(v >= 0) || v >= (classes ? classes : INT_MAX)) {
                free(lab);
                return ct_fail(NULL, CT_ERR_CORRUPT, "%s: label %zu%s is %g, outside [0, %d); HINT: labels are 0 to "
                               "K - 1%s", yw, i, pixels ? " (in sample, row, column order)" : "", v,
                               classes ? classes : INT_MAX, classes ? " (classes=K)" : "");
            }
            lab[i] = (int32_t)v;
            top = lab[i] > top ? lab[i] : top;
        }
        if (!classes)
            classes = top + 1;
    } else {
        tg = malloc(n * K * sizeof *tg);
        if (!tg)
            return ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory for %zu x %zu targets", n, K);
        for (size_t i = 0; i < n * K; i++) {
            double v = ct_npy_get(y, i);
            tg[i] = (float)v;
            if (!isfinite(tg[i])) {
                free(tg);
                return ct_fail(NULL, CT_ERR_CORRUPT, "%s: target %zu of sample %zu is %g; HINT: targets must be "
                               "finite floats", yw, i % K, i / K, v);
            }
        }
    }
    int bytes = x->kind == 'u' && x->itemsize == 1;
    ct_dataset *ds = NULL;
    char name[600];
    snprintf(name, sizeof name, "%s%s", xw, o->split == 0 ? "" : part == CT_SPLIT_TEST ? " (split: test rows)"
                                                                   : " (split: training rows)");
    int st = ct_dataset_new(name, (int)d[0], (int)d[1], (int)d[2], bytes ? CT_STORE_U8 : CT_STORE_F32, &ds);
    if (st) {
        free(lab);
        free(tg);
        return st;
    }
    ds->n = n;
    ds->classes = labels ? classes : 0;
    ds->labels = lab;
    ds->pixel_labels = pixels;
    ds->ntargets = (int)K;
    ds->targets = tg;
    if (bytes) {
        ds->u8 = malloc(n * per);
        if (ds->u8)
            memcpy(ds->u8, x->data, n * per);
    } else {
        ds->f32 = malloc(n * per * sizeof *ds->f32);
        for (size_t i = 0; ds->f32 && i < n * per; i++)
            ds->f32[i] = (float)ct_npy_get(x, i);
    }
    if (!ds->u8 && !ds->f32) {
        ct_dataset_free(&ds);
        return ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory for %zu samples of %zu values", n, per);
    }
    for (size_t i = 0; !bytes && i < n * per; i++)
        if (!isfinite(ds->f32[i])) {
            st = ct_fail(NULL, CT_ERR_CORRUPT, "%s: value %zu of sample %zu is %g; HINT: samples must be finite",
                         xw, i % per, i / per, (double)ds->f32[i]);
            ct_dataset_free(&ds);
            return st;
        }
    if (K) {
        ds->target_names = calloc(K, sizeof *ds->target_names);
        for (size_t k = 0; ds->target_names && k < K; k++) {
            char t[32];
            snprintf(t, sizeof t, "target %zu", k);
            ds->target_names[k] = ct_strdup(t);
        }
    }
    /* images of bytes always, other data with normalize=standard: the
     * training split's statistics (the session applies them to both) */
    ds->norm_from_train = bytes || o->standardize;
    *out = ds;
    return CT_OK;
}

/* Keeps the samples of `part` of a seeded split (stratified by label) */
static int keep_part(const ct_npy_spec *o, int part, ct_dataset *ds)
{
    size_t n = ds->n, per = ct_dataset_sample_size(ds), K = (size_t)ds->ntargets, m = 0;
    uint8_t *is_test = malloc(n);
    /* stratified by the label of a sample; per-pixel and target data are not */
    int strat = ds->labels && !ds->pixel_labels;
    size_t lper = ds->pixel_labels ? (size_t)ds->h * (size_t)ds->w : 1;
    int32_t *one = strat ? NULL : calloc(n, sizeof *one);
    if (!is_test || (!strat && !one)) {
        free(is_test);
        free(one);
        return ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory splitting %s", ds->name);
    }
    int st = ct_text_split(strat ? ds->labels : one, n, strat ? ds->classes : 1, o->split, o->seed, is_test);
    for (size_t i = 0; !st && i < n; i++)
        if (is_test[i] == (part == CT_SPLIT_TEST)) {
            if (ds->u8)
                memmove(ds->u8 + m * per, ds->u8 + i * per, per);
            else
                memmove(ds->f32 + m * per, ds->f32 + i * per, per * sizeof *ds->f32);
            if (ds->labels)
                memmove(ds->labels + m * lper, ds->labels + i * lper, lper * sizeof *ds->labels);
            if (K)
                memmove(ds->targets + m * K, ds->targets + i * K, K * sizeof *ds->targets);
            m++;
        }
    free(is_test);
    free(one);
    if (!st && m == 0)
        st = ct_fail(NULL, CT_ERR_INVALID_ARG, "%s: split=%g leaves the %s part without samples (%zu in all); HINT: "
                     "use a split fraction that leaves samples on both sides", ds->name, o->split,
                     part == CT_SPLIT_TEST ? "test" : "training", n);
    if (!st)
        ds->n = m;
    return st;
}

int ct_npy_load(const ct_npy_spec *o, int split, ct_dataset **out)
{
    *out = NULL;
    /* which files or members hold this split's X and Y */
    int test = split == CT_SPLIT_TEST && !o->split;
    if (test && !o->test_x && !(o->npz && !o->x_member))
        return ct_fail(NULL, CT_ERR_INVALID_ARG, "dataset '%s' has no test split; HINT: name its arrays with "
                       ":test=%s, or hold out a fraction F of the samples with :split=F", o->spec,
                       o->npz ? "FILE" : "X.npy,Y.npy");
    ct_npy x, y;
    uint8_t *xr = NULL, *yr = NULL;
    char xw[300], yw[300];
    int st;
    if (o->npz)
        st = load_npz(o, test && o->test_x ? o->test_x : o->x_path, test && !o->test_x, &x, &xr, xw, &y, &yr, yw,
                      sizeof xw);
    else if (!(st = load_npy(test ? o->test_x : o->x_path, &x, &xr, xw, sizeof xw)))
        st = load_npy(test ? o->test_y : o->y_path, &y, &yr, yw, sizeof yw);
    if (!st)
        st = build(o, &x, xw, &y, yw, split, out);
    free(xr);
    free(yr);
    if (!st && o->split > 0 && (st = keep_part(o, split, *out)))
        ct_dataset_free(out);
    return st;
}
