/*
 * dataset.c - the dataset object: dataset specs to readers, normalization,
 * decoding a sample to float, the synthetic source, and the zlib input
 * helpers the readers share.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/error.h"
#include "core/util.h"
#include "data/dataset.h"
#include "data/rng.h"
#include "data/tokenize.h"

#define FASHION_MNIST_DIR "/usr/share/datasets/fashion-mnist"
#define SPEC_HINT                                                                               \
    "HINT: use fashion-mnist[:DIR], mnist:DIR, idx:DIR, cifar10:DIR, csv:FILE[:label=COL], "   \
    "synthetic:C,H,W:CLASSES:N, text:FILE, textdir:DIR, csv:FILE:text=COL or a directory "      \
    "holding IDX files"

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
    return !ds ? 0 : ds->lm ? ds->seq : 1;
}

const ct_tokenizer *ct_dataset_tokenizer(const ct_dataset *ds)
{
    return ds ? ds->tok : NULL;
}

const char *ct_dataset_class_name(const ct_dataset *ds, int k)
{
    return ds && ds->class_names && k >= 0 && k < ds->classes ? ds->class_names[k] : NULL;
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

void ct_dataset_decode(const ct_dataset *ds, size_t index, int pad, int dy, int dx, int flip,
                       float *x /* (C, H, W) */)
{
    int h = ds->h, w = ds->w;
    size_t hw = (size_t)h * (size_t)w;
    size_t base = index * ct_dataset_sample_size(ds);
    float scale = ds->storage == CT_STORE_U8 ? 1.0f / 255.0f : 1.0f;
    for (int c = 0; c < ds->c; c++) {
        float m = ds->mean[c], s = ds->std[c];
        size_t cb = base + (size_t)c * hw;
        float *xc = x + (size_t)c * hw;
        if (!pad && !flip) {
            if (ds->storage == CT_STORE_U8)
                for (size_t i = 0; i < hw; i++)
                    xc[i] = ((float)ds->u8[cb + i] * scale - m) / s;
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
                    float raw = ds->storage == CT_STORE_U8 ? (float)ds->u8[at] : ds->f32[at];
                    v = (raw * scale - m) / s;
                }
                xc[(size_t)y * (size_t)w + (size_t)xx] = v;
            }
        }
    }
}

int ct_dataset_sample(const ct_dataset *ds, size_t index, float *x, int32_t *label)
{
    CT_VALIDATE(NULL, ds && x);
    if (ds->storage == CT_STORE_TOKENS)
        return not_for_text(ds);
    if (index >= ds->n)
        return ct_fail(NULL, CT_ERR_INVALID_ARG, "%s: sample %zu out of range (%zu samples)",
                       ds->name, index, ds->n);
    ct_dataset_decode(ds, index, 0, 0, 0, 0, x);
    if (label)
        *label = ds->labels[index];
    return CT_OK;
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

/* ---- specs ---- */

#define MAX_TOKENS 16

typedef struct spec {
    char *buf;
    const char *kind;
    const char *pos[MAX_TOKENS]; /* positional arguments after the kind */
    int npos;
    const char *key[MAX_TOKENS];
    const char *val[MAX_TOKENS];
    int nopt;
} spec;

static int spec_parse(const char *text, spec *s)
{
    memset(s, 0, sizeof *s);
    s->buf = ct_strdup(text);
    if (!s->buf)
        return ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory");
    char *p = s->buf;
    int ntok = 0;
    for (;;) {
        char *colon = strchr(p, ':');
        if (colon)
            *colon = 0;
        if (ntok == 0) {
            s->kind = p;
        } else {
            char *eq = strchr(p, '=');
            if (ntok > MAX_TOKENS)
                return ct_fail(NULL, CT_ERR_INVALID_ARG, "dataset '%s' has too many ':' parts", text);
            if (eq) {
                *eq = 0;
                s->key[s->nopt] = p;
                s->val[s->nopt++] = eq + 1;
            } else {
                s->pos[s->npos++] = p;
            }
        }
        ntok++;
        if (!colon)
            break;
        p = colon + 1;
    }
    return CT_OK;
}

/* Fails on an option the kind does not take; `allowed` is a space-separated list. */
static int spec_check_options(const spec *s, const char *text, const char *allowed)
{
    for (int i = 0; i < s->nopt; i++) {
        size_t kl = strlen(s->key[i]);
        const char *a = allowed;
        int found = 0;
        while (*a && !found) {
            size_t al = strcspn(a, " ");
            found = al == kl && kl > 0 && !strncmp(a, s->key[i], kl);
            a += al;
            a += *a == ' ';
        }
        if (!found)
            return ct_fail(NULL, CT_ERR_INVALID_ARG,
                           "dataset '%s': unknown option '%s'; HINT: %s takes %s", text, s->key[i],
                           s->kind, *allowed ? allowed : "no options");
    }
    return CT_OK;
}

static const char *spec_option(const spec *s, const char *key)
{
    const char *v = NULL;
    for (int i = 0; i < s->nopt; i++)
        if (!strcmp(s->key[i], key))
            v = s->val[i];
    return v;
}

static int spec_npos(const spec *s, const char *text, int lo, int hi, const char *usage)
{
    if (s->npos < lo || s->npos > hi)
        return ct_fail(NULL, CT_ERR_INVALID_ARG, "dataset '%s': HINT: write it as %s", text, usage);
    return CT_OK;
}

/* A strict unsigned integer in [lo, hi]. */
static int parse_count(const char *text, const char *what, const char *v, unsigned long long lo,
                       unsigned long long hi, unsigned long long *out)
{
    char *end = NULL;
    errno = 0;
    unsigned long long x = (*v >= '0' && *v <= '9') ? strtoull(v, &end, 10) : 0;
    if (!end || *end || errno || x < lo || x > hi)
        return ct_fail(NULL, CT_ERR_INVALID_ARG,
                       "dataset '%s': %s '%s' is not an integer in [%llu, %llu]", text, what, v, lo,
                       hi);
    *out = x;
    return CT_OK;
}

/* A strict fraction in (0, 1). */
static int parse_fraction(const char *text, const char *what, const char *v, double *out)
{
    char *end = NULL;
    errno = 0;
    double x = strtod(v, &end);
    if (!*v || !end || *end || errno || !(x > 0 && x < 1))
        return ct_fail(NULL, CT_ERR_INVALID_ARG,
                       "dataset '%s': %s '%s' is not a fraction between 0 and 1 (exclusive)", text,
                       what, v);
    *out = x;
    return CT_OK;
}

/* The options the text kinds share. */
static int text_options(const char *text, const spec *s, int default_seq,
                        const ct_text_options *given, ct_text_spec *t)
{
    memset(t, 0, sizeof *t);
    t->spec = text;
    t->path = s->pos[0];
    t->tokens = CT_TOKENS_BYTE;
    t->vocab = 10000;
    t->seq = default_seq;
    t->header = -1;
    t->given = given;
    const char *kv = spec_option(s, "tokens"), *vv = spec_option(s, "vocab");
    const char *sv = spec_option(s, "seq"), *fv = spec_option(s, "split");
    const char *dv = spec_option(s, "seed");
    unsigned long long x = 0;
    int st;
    if (kv) {
        if (strcmp(kv, "byte") && strcmp(kv, "word"))
            return ct_fail(NULL, CT_ERR_INVALID_ARG,
                           "dataset '%s': tokens=%s; HINT: tokens takes byte or word", text, kv);
        t->tokens = strcmp(kv, "word") ? CT_TOKENS_BYTE : CT_TOKENS_WORD;
        t->tokens_given = 1;
    }
    if (vv) {
        if (t->tokens != CT_TOKENS_WORD)
            return ct_fail(NULL, CT_ERR_INVALID_ARG,
                           "dataset '%s': vocab= sizes a word vocabulary; HINT: add :tokens=word, "
                           "or drop vocab= (byte tokens have 256 ids)",
                           text);
        if ((st = parse_count(text, "vocab", vv, 1, CT_VOCAB_MAX, &x)))
            return st;
        t->vocab = (size_t)x;
    }
    if (sv) {
        if ((st = parse_count(text, "seq", sv, 1, 65536, &x)))
            return st;
        t->seq = (int)x;
    }
    t->test = spec_option(s, "test");
    if (fv && (st = parse_fraction(text, "split", fv, &t->split)))
        return st;
    if (t->test && fv)
        return ct_fail(NULL, CT_ERR_INVALID_ARG,
                       "dataset '%s' has both test= and split=; HINT: the test split is either "
                       "another file or a fraction of this one, not both",
                       text);
    if (dv) {
        if (!fv)
            return ct_fail(NULL, CT_ERR_INVALID_ARG,
                           "dataset '%s': seed= shuffles a split; HINT: add :split=F or drop seed=",
                           text);
        if ((st = parse_count(text, "seed", dv, 0, UINT64_MAX, &x)))
            return st;
        t->seed = x;
    }
    return CT_OK;
}

static int is_dir(const char *path)
{
    struct stat st;
    return path && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int open_idx(const char *dir, int split, int classes, const char *label, ct_dataset **out)
{
    char *img = NULL, *lbl = NULL, name[4200];
    int st = ct_idx_find(dir, split, &img, &lbl);
    if (!st) {
        snprintf(name, sizeof name, "%s %s (%s)", label, split == CT_SPLIT_TEST ? "test" : "train",
                 img);
        st = ct_idx_load(img, lbl, classes, name, out);
    }
    free(img);
    free(lbl);
    return st;
}

static int open_spec(const char *text, const spec *s, int split, const ct_text_options *given,
                     ct_dataset **out)
{
    const char *k = s->kind;
    int st;
    if (!strcmp(k, "text")) {
        ct_text_spec t;
        if ((st = spec_check_options(s, text, "tokens vocab seq test split")) ||
            (st = spec_npos(s, text, 1, 1, "text:FILE[:tokens=byte|word][:vocab=N][:seq=T]"
                                           "[:test=FILE|:split=F]")) ||
            (st = text_options(text, s, 64, given, &t)))
            return st;
        return ct_text_load(&t, split, out);
    }
    if (!strcmp(k, "textdir")) {
        ct_text_spec t;
        if ((st = spec_check_options(s, text, "tokens vocab seq split seed")) ||
            (st = spec_npos(s, text, 1, 1, "textdir:DIR[:tokens=byte|word][:vocab=N][:seq=T]"
                                           "[:split=F][:seed=S]")) ||
            (st = text_options(text, s, 128, given, &t)))
            return st;
        return ct_textdir_load(&t, split, out);
    }
    if (!strcmp(k, "csv") && spec_option(s, "text")) {
        ct_text_spec t;
        const char *hv = spec_option(s, "header"), *cv = spec_option(s, "classes");
        unsigned long long classes = 0;
        if ((st = spec_check_options(s, text, "text label header classes tokens vocab seq test "
                                              "split seed")) ||
            (st = spec_npos(s, text, 1, 1, "csv:FILE:text=COL[:label=COL][:header=auto|yes|no]"
                                           "[:classes=K][:tokens=byte|word][:vocab=N][:seq=T]"
                                           "[:test=FILE|:split=F][:seed=S]")) ||
            (st = text_options(text, s, 128, given, &t)))
            return st;
        t.text_col = spec_option(s, "text");
        t.label_col = spec_option(s, "label");
        if (hv && strcmp(hv, "auto") && strcmp(hv, "yes") && strcmp(hv, "no"))
            return ct_fail(NULL, CT_ERR_INVALID_ARG,
                           "dataset '%s': header=%s; HINT: header takes auto, yes or no", text, hv);
        t.header = !hv || !strcmp(hv, "auto") ? -1 : !strcmp(hv, "yes");
        if (!*t.text_col || (t.label_col && !*t.label_col))
            return ct_fail(NULL, CT_ERR_INVALID_ARG, "dataset '%s': an empty column name; HINT: "
                           "text= and label= take a header name or a 0-based index", text);
        if (cv && (st = parse_count(text, "classes", cv, 1, 1 << 24, &classes)))
            return st;
        t.classes = (int)classes;
        return ct_csvtext_load(&t, split, out);
    }
    if (!strcmp(k, "fashion-mnist") || !strcmp(k, "mnist") || !strcmp(k, "idx")) {
        int is_fashion = !strcmp(k, "fashion-mnist"), is_mnist = !strcmp(k, "mnist");
        const char *usage = is_fashion ? "fashion-mnist or fashion-mnist:DIR"
                            : is_mnist ? "mnist:DIR (the directory holding the IDX files)"
                                       : "idx:DIR[:classes=K]";
        if ((st = spec_check_options(s, text, is_fashion || is_mnist ? "" : "classes")) ||
            (st = spec_npos(s, text, is_fashion ? 0 : 1, 1, usage)))
            return st;
        unsigned long long classes = is_fashion || is_mnist ? 10 : 0;
        const char *cv = spec_option(s, "classes");
        if (cv && (st = parse_count(text, "classes", cv, 1, 256, &classes)))
            return st;
        const char *dir = s->npos ? s->pos[0] : FASHION_MNIST_DIR;
        if (is_fashion && !s->npos && !is_dir(dir))
            return ct_fail(NULL, CT_ERR_IO,
                           "Fashion-MNIST is not in %s; HINT: install it with `apt install "
                           "dataset-fashion-mnist`, or give the directory holding its IDX files "
                           "as fashion-mnist:DIR",
                           dir);
        if ((st = open_idx(dir, split, (int)classes, k, out)))
            return st;
        if (is_fashion || is_mnist) {
            float m = is_fashion ? 0.2860f : 0.1307f, sd = is_fashion ? 0.3530f : 0.3081f;
            ct_dataset_set_norm(*out, &m, &sd, 1);
        }
        return CT_OK;
    }
    if (!strcmp(k, "cifar10") || !strcmp(k, "cifar-10")) {
        if ((st = spec_check_options(s, text, "")) || (st = spec_npos(s, text, 1, 1, "cifar10:DIR")))
            return st;
        if ((st = ct_cifar10_load(s->pos[0], split, out)))
            return st;
        static const float m[3] = { 0.4914f, 0.4822f, 0.4465f }, sd[3] = { 0.2470f, 0.2435f, 0.2616f };
        ct_dataset_set_norm(*out, m, sd, 3);
        return CT_OK;
    }
    if (!strcmp(k, "csv")) {
        const char *usage = "csv:FILE[:label=COL][:header=auto|yes|no][:classes=K][:test=FILE]";
        if ((st = spec_check_options(s, text, "label header classes test")) ||
            (st = spec_npos(s, text, 1, 1, usage)))
            return st;
        ct_csv_options o = { spec_option(s, "label"), -1, 0 };
        const char *hv = spec_option(s, "header"), *cv = spec_option(s, "classes");
        unsigned long long classes = 0;
        if (hv) {
            if (!strcmp(hv, "auto"))
                o.header = -1;
            else if (!strcmp(hv, "yes"))
                o.header = 1;
            else if (!strcmp(hv, "no"))
                o.header = 0;
            else
                return ct_fail(NULL, CT_ERR_INVALID_ARG,
                               "dataset '%s': header=%s; HINT: header takes auto, yes or no", text, hv);
        }
        if (cv && (st = parse_count(text, "classes", cv, 1, INT_MAX, &classes)))
            return st;
        o.classes = (int)classes;
        const char *path = s->pos[0];
        if (split == CT_SPLIT_TEST) {
            path = spec_option(s, "test");
            if (!path)
                return ct_fail(NULL, CT_ERR_INVALID_ARG,
                               "dataset '%s' has no test split; HINT: name its file with :test=FILE",
                               text);
        }
        return ct_csv_load(path, &o, out);
    }
    if (!strcmp(k, "synthetic")) {
        const char *usage = "synthetic:C,H,W:CLASSES:N[:seed=S][:ntest=M] (or F in place of C,H,W)";
        if ((st = spec_check_options(s, text, "seed ntest")) || (st = spec_npos(s, text, 3, 3, usage)))
            return st;
        unsigned long long dims[3] = { 1, 1, 1 }, classes = 0, n = 0, seed = 1;
        int nd = 0;
        const char *p = s->pos[0];
        for (;;) {
            size_t len = strcspn(p, ",");
            char part[32];
            if (nd == 3 || len == 0 || len >= sizeof part)
                return ct_fail(NULL, CT_ERR_INVALID_ARG, "dataset '%s': shape '%s'; HINT: write it "
                               "as C,H,W or F", text, s->pos[0]);
            memcpy(part, p, len);
            part[len] = 0;
            if ((st = parse_count(text, "dimension", part, 1, 1u << 16, &dims[nd++])))
                return st;
            if (!p[len])
                break;
            p += len + 1;
        }
        if (nd == 2)
            return ct_fail(NULL, CT_ERR_INVALID_ARG, "dataset '%s': shape '%s'; HINT: write it "
                           "as C,H,W or F", text, s->pos[0]);
        if ((st = parse_count(text, "classes", s->pos[1], 1, INT_MAX, &classes)) ||
            (st = parse_count(text, "sample count", s->pos[2], 1, 1ull << 32, &n)))
            return st;
        const char *sv = spec_option(s, "seed"), *tv = spec_option(s, "ntest");
        if (sv && (st = parse_count(text, "seed", sv, 0, UINT64_MAX, &seed)))
            return st;
        if (split == CT_SPLIT_TEST && tv && (st = parse_count(text, "ntest", tv, 1, 1ull << 32, &n)))
            return st;
        return ct_synthetic_create((int)dims[0], (int)dims[1], (int)dims[2], (int)classes, (size_t)n,
                                   seed, split, out);
    }
    if (is_dir(text))
        return open_idx(text, split, 0, "idx", out);
    return ct_fail(NULL, CT_ERR_INVALID_ARG, "unknown dataset '%s' (not a known kind, nor a "
                   "directory); " SPEC_HINT, text);
}

void ct_text_defaults(ct_text_options *o)
{
    if (o)
        memset(o, 0, sizeof *o);
}

int ct_dataset_open(const char *text, int split, ct_dataset **out)
{
    return ct_dataset_open_text(text, split, NULL, out);
}

int ct_dataset_open_text(const char *text, int split, const ct_text_options *o, ct_dataset **out)
{
    CT_VALIDATE(NULL, out);
    *out = NULL;
    CT_VALIDATE(NULL, text);
    if (split != CT_SPLIT_TRAIN && split != CT_SPLIT_TEST)
        return ct_fail(NULL, CT_ERR_INVALID_ARG, "dataset split %d; HINT: use CT_SPLIT_TRAIN (0) or "
                       "CT_SPLIT_TEST (1)", split);
    if (!*text)
        return ct_fail(NULL, CT_ERR_INVALID_ARG, "empty dataset name; " SPEC_HINT);
    if (o && o->classes) {
        if (o->nclasses < 1 || o->nclasses > (1 << 24))
            return ct_fail(NULL, CT_ERR_INVALID_ARG, "%d class names given; HINT: give between 1 "
                           "and %d", o->nclasses, 1 << 24);
        for (int k = 0; k < o->nclasses; k++)
            if (!o->classes[k])
                return ct_fail(NULL, CT_ERR_INVALID_ARG, "class name %d is NULL", k);
    }
    spec s;
    int st = spec_parse(text, &s);
    if (!st)
        st = open_spec(text, &s, split, o, out);
    free(s.buf);
    return st;
}
