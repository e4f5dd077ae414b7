/*
 * dataset.c - the dataset object: normalization, decoding a sample to
 * float, the synthetic source, and the zlib input helpers the readers
 * share. Dataset specs are parsed in spec.c.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/util.h"
#include "data/dataset.h"
#include "data/image.h"
#include "data/rng.h"
#include "data/tokenize.h"

/* ---- zlib input ---- */

int ct_gzin_open(ct_gzin *in, const char *path)
{
    in->path = path;
    in->pos = 0;
    errno = 0;
    in->f = gzopen(path, "rb");
    if (!in->f)
        return ct_fail(NULL, CT_ERR_IO, "cannot open %s: %s", path,
                       errno ? strerror(errno) : "out of memory");
    gzbuffer(in->f, 1u << 17);
    return CT_OK;
}

/* After gzread failed or stopped short: tells a damaged or cut-off gzip
 * stream (CT_ERR_CORRUPT) from a failing read (CT_ERR_IO). */
static int stream_error(ct_gzin *in, int *status)
{
    int err = Z_OK;
    const char *msg = gzerror(in->f, &err);
    if (err == Z_OK)
        return 0;
    if (err == Z_ERRNO)
        *status = ct_fail(NULL, CT_ERR_IO, "cannot read %s at byte offset %llu: %s", in->path,
                          (unsigned long long)in->pos, strerror(errno));
    else if (err == Z_BUF_ERROR)
        *status = ct_fail(NULL, CT_ERR_CORRUPT,
                          "%s: the gzip stream is cut off after %llu decompressed bytes; "
                          "HINT: the .gz file is truncated: download it again",
                          in->path, (unsigned long long)in->pos);
    else
        *status = ct_fail(NULL, err == Z_MEM_ERROR ? CT_ERR_NO_MEMORY : CT_ERR_CORRUPT,
                          "%s: the gzip data is corrupt after %llu decompressed bytes (%s); "
                          "HINT: the file is damaged: download it again",
                          in->path, (unsigned long long)in->pos, msg);
    return 1;
}

int ct_gzin_read(ct_gzin *in, void *buf, size_t n, size_t *got)
{
    size_t total = 0;
    int status = CT_OK;
    *got = 0;
    while (total < n) {
        size_t chunk = n - total;
        if (chunk > (1u << 30))
            chunk = 1u << 30;
        int r = gzread(in->f, (unsigned char *)buf + total, (unsigned)chunk);
        if (r <= 0)
            break;
        total += (size_t)r;
    }
    in->pos += total;
    if (total < n && stream_error(in, &status))
        return status;
    *got = total;
    return CT_OK;
}

int ct_gzin_read_alloc(ct_gzin *in, size_t limit, uint8_t **out, size_t *got)
{
    size_t cap = limit < (1u << 20) ? limit : (1u << 20), n = 0;
    uint8_t *buf = malloc(cap + 1);
    *out = NULL;
    *got = 0;
    if (!buf)
        return ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory reading %s", in->path);
    for (;;) {
        if (n == cap) {
            if (cap == limit)
                break;
            size_t ncap = cap > limit / 2 ? limit : cap * 2;
            uint8_t *nb = realloc(buf, ncap + 1);
            if (!nb) {
                free(buf);
                return ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory reading %s (%zu bytes so far)",
                               in->path, n);
            }
            buf = nb;
            cap = ncap;
        }
        size_t want = cap - n, r = 0;
        int st = ct_gzin_read(in, buf + n, want, &r);
        if (st) {
            free(buf);
            return st;
        }
        n += r;
        if (r < want)
            break;
    }
    buf[n] = 0;
    *out = buf;
    *got = n;
    return CT_OK;
}

int ct_gzin_count_rest(ct_gzin *in, uint64_t *count)
{
    unsigned char scratch[16384];
    *count = 0;
    for (;;) {
        size_t r = 0;
        int st = ct_gzin_read(in, scratch, sizeof scratch, &r);
        if (st)
            return st;
        *count += r;
        if (r < sizeof scratch)
            return CT_OK;
    }
}

void ct_gzin_close(ct_gzin *in)
{
    if (in->f)
        gzclose_r(in->f);
    in->f = NULL;
}

/* ---- the dataset object ---- */

int ct_dataset_new(const char *name, int c, int h, int w, ct_storage storage, ct_dataset **out)
{
    *out = NULL;
    ct_dataset *ds = calloc(1, sizeof *ds);
    if (!ds)
        return ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory");
    ds->name = ct_strdup(name);
    ds->mean = calloc((size_t)c, sizeof *ds->mean);
    ds->std = malloc((size_t)c * sizeof *ds->std);
    if (!ds->name || !ds->mean || !ds->std) {
        ct_dataset_free(&ds);
        return ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory");
    }
    ds->c = c;
    ds->h = h;
    ds->w = w;
    ds->storage = storage;
    for (int i = 0; i < c; i++)
        ds->std[i] = 1.0f;
    *out = ds;
    return CT_OK;
}

void ct_dataset_free(ct_dataset **pds)
{
    if (!pds || !*pds)
        return;
    ct_dataset *ds = *pds;
    free(ds->name);
    free(ds->u8);
    free(ds->f32);
    free(ds->labels);
    free(ds->mean);
    free(ds->std);
    free(ds->tokens);
    ct_tokenizer_free(&ds->tok);
    ct_free_strings(ds->class_names, ds->class_names ? (size_t)ds->classes : 0);
    free(ds->targets);
    ct_free_strings(ds->target_names, (size_t)ds->ntargets);
    ct_free_strings(ds->files, ds->files ? ds->nfiles : 0);
    free(ds);
    *pds = NULL;
}

const char *ct_dataset_name(const ct_dataset *ds)
{
    return ds ? ds->name : "";
}

size_t ct_dataset_count(const ct_dataset *ds)
{
    return ds ? ds->n : 0;
}

void ct_dataset_shape(const ct_dataset *ds, int *c, int *h, int *w)
{
    if (c)
        *c = ds ? ds->c : 0;
    if (h)
        *h = ds ? ds->h : 0;
    if (w)
        *w = ds ? ds->w : 0;
}

int ct_dataset_classes(const ct_dataset *ds)
{
    return ds ? ds->classes : 0;
}

int ct_dataset_seq(const ct_dataset *ds)
{
    return ds ? ds->seq : 0;
}

int ct_dataset_labels_per_sample(const ct_dataset *ds)
{
    return !ds ? 0 : ds->lm ? ds->seq : ds->pixel_labels ? ds->h * ds->w : 1;
}

const ct_tokenizer *ct_dataset_tokenizer(const ct_dataset *ds)
{
    return ds ? ds->tok : NULL;
}

const char *ct_dataset_class_name(const ct_dataset *ds, int k)
{
    return ds && ds->class_names && k >= 0 && k < ds->classes ? ds->class_names[k] : NULL;
}

int ct_dataset_targets(const ct_dataset *ds)
{
    return ds ? ds->ntargets : 0;
}

const char *ct_dataset_target_name(const ct_dataset *ds, int k)
{
    return ds && ds->target_names && k >= 0 && k < ds->ntargets ? ds->target_names[k] : NULL;
}

int ct_dataset_sample_targets(const ct_dataset *ds, size_t index, float *t)
{
    CT_VALIDATE(NULL, ds && t);
    if (!ds->ntargets)
        return ct_fail(NULL, CT_ERR_UNSUPPORTED, "%s: has class labels, not regression targets; "
                       "HINT: name the target columns with csv:FILE:target=COL", ds->name);
    if (index >= ds->n)
        return ct_fail(NULL, CT_ERR_INVALID_ARG, "%s: sample %zu out of range (%zu samples)",
                       ds->name, index, ds->n);
    memcpy(t, ds->targets + index * (size_t)ds->ntargets, (size_t)ds->ntargets * sizeof *t);
    return CT_OK;
}

int ct_dataset_sample_tokens(const ct_dataset *ds, size_t index, int32_t *ids, int32_t *labels)
{
    CT_VALIDATE(NULL, ds && ids);
    if (ds->storage != CT_STORE_TOKENS)
        return ct_fail(NULL, CT_ERR_UNSUPPORTED, "%s: not a text dataset; HINT: read its samples "
                       "with ct_dataset_sample", ds->name);
    if (index >= ds->n)
        return ct_fail(NULL, CT_ERR_INVALID_ARG, "%s: sample %zu out of range (%zu samples)",
                       ds->name, index, ds->n);
    size_t T = (size_t)ds->seq;
    const int32_t *at = ds->tokens + index * T;
    memcpy(ids, at, T * sizeof *ids);
    if (labels && ds->lm)
        memcpy(labels, at + 1, T * sizeof *labels);
    else if (labels)
        *labels = ds->labels[index];
    return CT_OK;
}

static int not_for_text(const ct_dataset *ds)
{
    return ct_fail(NULL, CT_ERR_UNSUPPORTED, "%s: a text dataset holds token ids, which are not "
                   "normalized or decoded to floats; HINT: use ct_dataset_sample_tokens", ds->name);
}

size_t ct_dataset_sample_size(const ct_dataset *ds)
{
    return (size_t)ds->c * (size_t)ds->h * (size_t)ds->w;
}

int ct_dataset_set_norm(ct_dataset *ds, const float *mean, const float *std, int channels)
{
    CT_VALIDATE(NULL, ds && mean && std);
    if (ds->storage == CT_STORE_TOKENS)
        return not_for_text(ds);
    if (channels != ds->c && channels != 1)
        return ct_fail(NULL, CT_ERR_INVALID_ARG,
                       "%s: %d normalization channels for samples of %d channels; "
                       "HINT: give one mean/std pair per channel, or a single pair for all",
                       ds->name, channels, ds->c);
    for (int i = 0; i < channels; i++)
        if (!isfinite(mean[i]) || !isfinite(std[i]) || !(std[i] > 0))
            return ct_fail(NULL, CT_ERR_INVALID_ARG,
                           "%s: channel %d normalization mean %g std %g; HINT: the mean must be "
                           "finite and the std finite and positive",
                           ds->name, i, (double)mean[i], (double)std[i]);
    for (int i = 0; i < ds->c; i++) {
        ds->mean[i] = mean[channels == 1 ? 0 : i];
        ds->std[i] = std[channels == 1 ? 0 : i];
    }
    return CT_OK;
}

int ct_dataset_get_norm(const ct_dataset *ds, float *mean, float *std, int channels)
{
    CT_VALIDATE(NULL, ds && mean && std);
    if (ds->storage == CT_STORE_TOKENS)
        return not_for_text(ds);
    if (channels != ds->c)
        return ct_fail(NULL, CT_ERR_INVALID_ARG, "%s: asked for %d normalization channels, have %d",
                       ds->name, channels, ds->c);
    memcpy(mean, ds->mean, (size_t)ds->c * sizeof *mean);
    memcpy(std, ds->std, (size_t)ds->c * sizeof *std);
    return CT_OK;
}

static double stored(const ct_dataset *ds, size_t i)
{
    return ds->storage == CT_STORE_U8 ? ds->u8[i] / 255.0 : (double)ds->f32[i];
}

int ct_dataset_compute_norm(const ct_dataset *ds, float *mean, float *std, int channels)
{
    CT_VALIDATE(NULL, ds && mean && std);
    if (ds->storage == CT_STORE_TOKENS)
        return not_for_text(ds);
    if (channels != ds->c)
        return ct_fail(NULL, CT_ERR_INVALID_ARG, "%s: asked for %d normalization channels, have %d",
                       ds->name, channels, ds->c);
    size_t hw = (size_t)ds->h * ds->w, per = ct_dataset_sample_size(ds);
    double count = (double)ds->n * (double)hw;
    if (ds->storage == CT_STORE_FILES) /* a sample of the files, decoded now */
        return ct_imagefolder_stats(ds, ds->threads, mean, std, NULL, NULL);
    for (int c = 0; c < ds->c; c++) {
        /* two passes: the variance of values near their mean, not a
         * difference of two large sums */
        double sum = 0, var = 0;
        for (size_t s = 0; s < ds->n; s++)
            for (size_t i = 0; i < hw; i++)
                sum += stored(ds, s * per + (size_t)c * hw + i);
        double m = count > 0 ? sum / count : 0;
        for (size_t s = 0; s < ds->n; s++)
            for (size_t i = 0; i < hw; i++) {
                double d = stored(ds, s * per + (size_t)c * hw + i) - m;
                var += d * d;
            }
        double sd = count > 0 ? sqrt(var / count) : 0;
        mean[c] = (float)m;
        std[c] = sd > 0 && (float)sd > 0 ? (float)sd : 1.0f;
    }
    return CT_OK;
}

int ct_dataset_decode(const ct_dataset *ds, size_t index, int pad, int dy, int dx, int flip,
                      float *x /* (C, H, W) */)
{
    int h = ds->h, w = ds->w;
    size_t hw = (size_t)h * (size_t)w;
    size_t base = index * ct_dataset_sample_size(ds);
    const uint8_t *u8 = ds->u8;
    uint8_t *decoded = NULL;
    if (ds->storage == CT_STORE_FILES) {
        decoded = malloc(ct_dataset_sample_size(ds));
        if (!decoded)
            return ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory decoding %s", ds->files[index]);
        int st = ct_image_load(ds->files[index], ds->c, h, w, decoded);
        if (st) {
            free(decoded);
            return st;
        }
        u8 = decoded;
        base = 0;
    }
    int bytes = ds->storage != CT_STORE_F32;
    float scale = bytes ? 1.0f / 255.0f : 1.0f;
    for (int c = 0; c < ds->c; c++) {
        float m = ds->mean[c], s = ds->std[c];
        size_t cb = base + (size_t)c * hw;
        float *xc = x + (size_t)c * hw;
        if (!pad && !flip) {
            if (bytes)
                for (size_t i = 0; i < hw; i++)
                    xc[i] = ((float)u8[cb + i] * scale - m) / s;
            else
                for (size_t i = 0; i < hw; i++)
                    xc[i] = (ds->f32[cb + i] * scale - m) / s;
            continue;
        }
        float padv = (0.0f * scale - m) / s;
        for (int y = 0; y < h; y++) {
            int sy = y + dy - pad;
            for (int xx = 0; xx < w; xx++) {
                int sx = (flip ? w - 1 - xx : xx) + dx - pad;
                float v = padv;
                if (sy >= 0 && sy < h && sx >= 0 && sx < w) {
                    size_t at = cb + (size_t)sy * (size_t)w + (size_t)sx;
                    float raw = bytes ? (float)u8[at] : ds->f32[at];
                    v = (raw * scale - m) / s;
                }
                xc[(size_t)y * (size_t)w + (size_t)xx] = v;
            }
        }
    }
    free(decoded);
    return CT_OK;
}

int ct_dataset_sample(const ct_dataset *ds, size_t index, float *x, int32_t *label)
{
    CT_VALIDATE(NULL, ds && x);
    if (ds->storage == CT_STORE_TOKENS)
        return not_for_text(ds);
    if (index >= ds->n)
        return ct_fail(NULL, CT_ERR_INVALID_ARG, "%s: sample %zu out of range (%zu samples)",
                       ds->name, index, ds->n);
    int st = ct_dataset_decode(ds, index, 0, 0, 0, 0, x);
    if (!st && label)
        *label = ds->labels && !ds->pixel_labels ? ds->labels[index] : -1;
    return st;
}

/* ---- the synthetic source ---- */

int ct_synthetic_create(int c, int h, int w, int classes, size_t n, uint64_t seed, int split,
                        ct_dataset **out)
{
    char name[160];
    ct_dataset *ds = NULL;
    *out = NULL;
    if (c < 1 || h < 1 || w < 1 || classes < 1 || n < 1)
        return ct_fail(NULL, CT_ERR_INVALID_ARG,
                       "synthetic data of shape (%d, %d, %d), %d classes, %zu samples; "
                       "HINT: every dimension, the class count and the sample count must be >= 1",
                       c, h, w, classes, n);
    size_t per = (size_t)c * (size_t)h * (size_t)w;
    if (per > ((size_t)1 << 40) / n)
        return ct_fail(NULL, CT_ERR_INVALID_ARG,
                       "synthetic data of %zu samples of %zu bytes is too large", n, per);
    snprintf(name, sizeof name, "synthetic %s (%d, %d, %d), %d classes, seed %llu",
             split == CT_SPLIT_TEST ? "test" : "train", c, h, w, classes, (unsigned long long)seed);
    int st = ct_dataset_new(name, c, h, w, CT_STORE_U8, &ds);
    if (st)
        return st;
    ds->n = n;
    ds->classes = classes;
    ds->u8 = malloc(n * per);
    ds->labels = malloc(n * sizeof *ds->labels);
    if (!ds->u8 || !ds->labels) {
        ct_dataset_free(&ds);
        return ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory for %zu synthetic samples", n);
    }
    ct_rng r;
    ct_rng_seed(&r, seed, CT_RNG_SYNTHETIC, (uint64_t)split, 0);
    uint64_t word = 0;
    for (size_t i = 0; i < n * per; i++) {
        if (i % 8 == 0)
            word = ct_rng_next(&r);
        ds->u8[i] = (uint8_t)(word >> (8 * (i % 8)));
    }
    ct_rng_seed(&r, seed, CT_RNG_SYNTHETIC, (uint64_t)split, 1);
    for (size_t i = 0; i < n; i++)
        ds->labels[i] = (int32_t)ct_rng_below(&r, (uint64_t)classes);
    /* uniform bytes: mean 1/2, std 1/sqrt(12) of x/255, near enough */
    float m = 0.5f, s = 0.2887f;
    ct_dataset_set_norm(ds, &m, &s, 1);
    *out = ds;
    return CT_OK;
}
