/*
 * spec.c - dataset specs (fashion-mnist[:DIR], mnist:DIR, idx:DIR,
 * cifar10:DIR, csv:FILE, synthetic:..., text:FILE, textdir:DIR,
 * csv:FILE:text=COL, imagefolder:DIR, npy:X.npy,Y.npy, npz:FILE, or a directory of IDX
 * files) parsed strictly and
 * handed to their readers: ct_dataset_open and ct_dataset_open_text.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/error.h"
#include "core/util.h"
#include "data/dataset.h"
#include "data/npy.h"
#include "data/tokenize.h"

#define FASHION_MNIST_DIR "/usr/share/datasets/fashion-mnist"
#define SPEC_HINT                                                                               \
    "HINT: use fashion-mnist[:DIR], mnist:DIR, idx:DIR, cifar10:DIR, csv:FILE[:label=COL], "   \
    "synthetic:C,H,W:CLASSES:N, text:FILE, textdir:DIR, csv:FILE:text=COL, imagefolder:DIR, "    \
    "npy:X.npy,Y.npy, npz:FILE or a " \
    "directory holding IDX files"

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
/* split= and seed= (and their clash with test=) of the text, image and table kinds. */
static int split_options(const char *text, const spec *s, double *split, uint64_t *seed)
{
    const char *fv = spec_option(s, "split"), *dv = spec_option(s, "seed");
    unsigned long long x = 0;
    int st;
    if (fv && (st = parse_fraction(text, "split", fv, split)))
        return st;
    if (fv && spec_option(s, "test"))
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
        *seed = x;
    }
    return CT_OK;
}

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
    const char *sv = spec_option(s, "seq");
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
    return split_options(text, s, &t->split, &t->seed);
}

/* csv target=COL[,COL...]: regression targets in place of a label column. */
static int csv_target_option(const char *text, const spec *s, ct_csv_options *o)
{
    const char *tv = spec_option(s, "target");
    if (!tv)
        return CT_OK;
    if (o->label || spec_option(s, "classes"))
        return ct_fail(NULL, CT_ERR_INVALID_ARG,
                       "dataset '%s' has both target= and %s; HINT: target= makes regression data "
                       "(float targets, no label column); keep label= (and classes=) for class "
                       "labels, or target= alone", text, o->label ? "label=" : "classes=");
    size_t len = strlen(tv);
    if (!len || tv[0] == ',' || tv[len - 1] == ',' || strstr(tv, ",,"))
        return ct_fail(NULL, CT_ERR_INVALID_ARG, "dataset '%s': target=%s has an empty column name; "
                       "HINT: target= takes header names or 0-based indices separated by commas",
                       text, tv);
    o->target = tv;
    return CT_OK;
}

/* A strict CxHxW (or HxW with want 2): dimensions in [1, 65536]. */
static int parse_dims(const char *text, const char *what, const char *v, int want, int *d)
{
    const char *p = v;
    for (int i = 0; i < want; i++) {
        char *end = NULL;
        errno = 0;
        unsigned long x = (*p >= '0' && *p <= '9') ? strtoul(p, &end, 10) : 0;
        if (!end || errno || x < 1 || x > 65536 || (i + 1 < want ? *end != 'x' : *end != 0))
            return ct_fail(NULL, CT_ERR_INVALID_ARG, "dataset '%s': %s=%s; HINT: write it as %s with "
                           "each dimension in [1, 65536]", text, what, v, want == 3 ? "CxHxW" : "HxW");
        d[i] = (int)x;
        p = end + 1;
    }
    return CT_OK;
}

static int open_imagefolder(const char *text, const spec *s, int split, const ct_text_options *given,
                            const ct_data_hints *hints, ct_dataset **out)
{
    ct_imagefolder_spec f;
    int st;
    memset(&f, 0, sizeof f);
    if ((st = spec_check_options(s, text, "size split seed bad stats index")) ||
        (st = spec_npos(s, text, 1, 1, "imagefolder:DIR[:size=HxW][:split=F][:seed=S]"
                                       "[:bad=error|skip][:stats=N|all][:index=FILE]")) ||
        (st = split_options(text, s, &f.split, &f.seed)))
        return st;
    f.spec = text;
    f.path = s->pos[0];
    const char *zv = spec_option(s, "size"), *bv = spec_option(s, "bad"), *sv = spec_option(s, "stats");
    f.stats = 10000;
    if (sv && !strcmp(sv, "all")) {
        f.stats = 0;
    } else if (sv) {
        unsigned long long v = 0;
        if ((st = parse_count(text, "stats", sv, 1, (unsigned long long)1 << 40, &v)))
            return ct_fail(NULL, st, "%s; HINT: stats=N samples N images for the mean and std (default "
                           "10000), stats=all takes every one", ct_last_error());
        f.stats = (size_t)v;
    }
    f.index = spec_option(s, "index");
    if (f.index && !*f.index)
        return ct_fail(NULL, CT_ERR_INVALID_ARG, "dataset '%s': index= names no file; HINT: index=FILE keeps "
                       "the folder's listing in FILE", text);
    if (hints && hints->c) {
        if (hints->c != 1 && hints->c != 3)
            return ct_fail(NULL, CT_ERR_SHAPE, "dataset '%s': the model takes %d channels; HINT: image "
                           "folders give 1 (grey) or 3 (RGB) channels", text, hints->c);
        f.c = hints->c;
        f.h = hints->h;
        f.w = hints->w;
    }
    if (zv) {
        int d[2];
        if ((st = parse_dims(text, "size", zv, 2, d)))
            return st;
        f.h = d[0];
        f.w = d[1];
    }
    if (bv && strcmp(bv, "error") && strcmp(bv, "skip"))
        return ct_fail(NULL, CT_ERR_INVALID_ARG, "dataset '%s': bad=%s; HINT: bad takes error (stop at "
                       "the first image that does not decode) or skip (leave such images out)", text, bv);
    f.skip_bad = bv && !strcmp(bv, "skip");
    if (given && given->classes) {
        f.classes = given->classes;
        f.nclasses = given->nclasses;
    }
    if ((st = ct_imagefolder_load(&f, split, out)) || split != CT_SPLIT_TRAIN || (hints && hints->defer_norm))
        return st;
    /* ct_dataset_open's training split comes with its own normalization */
    float mean[3], sd[3];
    if ((st = ct_dataset_compute_norm(*out, mean, sd, (*out)->c)) ||
        (st = ct_dataset_set_norm(*out, mean, sd, (*out)->c)))
        ct_dataset_free(out);
    return st;
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

/* Splits "A,B" in place into two non-empty parts */
static int two_paths(const char *text, const char *what, char *v, const char **a, const char **b)
{
    char *comma = strchr(v, ',');
    if (!comma || comma == v || !comma[1] || strchr(comma + 1, ','))
        return ct_fail(NULL, CT_ERR_INVALID_ARG, "dataset '%s': %s '%s'; HINT: name the samples' and the "
                       "labels' files as X.npy,Y.npy", text, what, v);
    *comma = 0;
    *a = v;
    *b = comma + 1;
    return CT_OK;
}

/* npy:X.npy,Y.npy and npz:FILE (src/data/npydata.c) */
static int open_npy(const char *text, const spec *s, int split, ct_dataset **out)
{
    int npz = !strcmp(s->kind, "npz");
    const char *usage = npz ? "npz:FILE[:x=NAME:y=NAME][:test=FILE|:split=F][:seed=S][:classes=K]"
                              "[:normalize=none|standard]"
                            : "npy:X.npy,Y.npy[:test=X.npy,Y.npy|:split=F][:seed=S][:classes=K]"
                              "[:normalize=none|standard]";
    int st;
    if ((st = spec_check_options(s, text, npz ? "x y test split seed classes normalize"
                                              : "test split seed classes normalize")) ||
        (st = spec_npos(s, text, 1, 1, usage)))
        return st;
    ct_npy_spec o = { .spec = text, .npz = npz };
    if ((st = split_options(text, s, &o.split, &o.seed)))
        return st;
    const char *cv = spec_option(s, "classes"), *nv = spec_option(s, "normalize");
    unsigned long long classes = 0;
    if (cv && (st = parse_count(text, "classes", cv, 1, 1 << 24, &classes)))
        return st;
    o.classes = (int)classes;
    if (nv && strcmp(nv, "none") && strcmp(nv, "standard"))
        return ct_fail(NULL, CT_ERR_INVALID_ARG, "dataset '%s': normalize=%s; HINT: normalize takes none or "
                       "standard (each channel to mean 0 and std 1 by the training split's statistics; "
                       "uint8 images always are)", text, nv);
    o.standardize = nv && !strcmp(nv, "standard");
    /* the positional part and test= are split in a copy the spec keeps */
    char *buf = ct_strdup(s->pos[0]), *tbuf = spec_option(s, "test") ? ct_strdup(spec_option(s, "test")) : NULL;
    if (!buf || (spec_option(s, "test") && !tbuf)) {
        free(buf);
        free(tbuf);
        return ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory");
    }
    if (npz) {
        const char *xv = spec_option(s, "x"), *yv = spec_option(s, "y");
        o.x_path = buf;
        o.test_x = tbuf;
        /* names: x=/y= (the other then x or y), else NULL: the archive's
         * x_train/y_train (and x_test/y_test as the test split), or x/y */
        if (xv || yv) {
            o.x_member = xv ? xv : "x";
            o.y_member = yv ? yv : "y";
        }
    } else if ((st = two_paths(text, "files", buf, &o.x_path, &o.y_path)) ||
               (tbuf && (st = two_paths(text, "test=", tbuf, &o.test_x, &o.test_y)))) {
        free(buf);
        free(tbuf);
        return st;
    }
    st = ct_npy_load(&o, split, out);
    free(buf);
    free(tbuf);
    return st;
}

static int open_spec(const char *text, const spec *s, int split, const ct_text_options *given,
                     const ct_data_hints *hints, ct_dataset **out)
{
    const char *k = s->kind;
    int st;
    if (!strcmp(k, "imagefolder"))
        return open_imagefolder(text, s, split, given, hints, out);
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
        const char *usage = "csv:FILE[:label=COL|:target=COL[,COL...]][:header=auto|yes|no]"
                            "[:classes=K][:shape=CxHxW][:normalize=none|standard][:test=FILE|:split=F]"
                            "[:seed=S]";
        if ((st = spec_check_options(s, text, "label header classes test target shape normalize "
                                              "split seed")) ||
            (st = spec_npos(s, text, 1, 1, usage)))
            return st;
        ct_csv_options o = { .label = spec_option(s, "label"), .header = -1, .part = split };
        if ((st = csv_target_option(text, s, &o)))
            return st;
        const char *shv = spec_option(s, "shape"), *nv = spec_option(s, "normalize");
        if ((st = split_options(text, s, &o.split, &o.seed)) ||
            (shv && (st = parse_dims(text, "shape", shv, 3, o.shape))))
            return st;
        if (nv && strcmp(nv, "none") && strcmp(nv, "standard"))
            return ct_fail(NULL, CT_ERR_INVALID_ARG, "dataset '%s': normalize=%s; HINT: normalize takes "
                           "none or standard (each feature, or each channel with shape=, to mean 0 and "
                           "std 1 by the training split's statistics)", text, nv);
        o.standardize = nv && !strcmp(nv, "standard");
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
        if (split == CT_SPLIT_TEST && !o.split) {
            path = spec_option(s, "test");
            if (!path)
                return ct_fail(NULL, CT_ERR_INVALID_ARG,
                               "dataset '%s' has no test split; HINT: name its file with :test=FILE, "
                               "or hold out a fraction F of the rows with :split=F",
                               text);
        }
        return ct_csv_load(path, &o, out);
    }
    if (!strcmp(k, "npy") || !strcmp(k, "npz"))
        return open_npy(text, s, split, out);
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
    return ct_dataset_open_hinted(text, split, o, NULL, out);
}

int ct_dataset_open_hinted(const char *text, int split, const ct_text_options *o,
                           const ct_data_hints *hints, ct_dataset **out)
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
        st = open_spec(text, &s, split, o, hints, out);
    free(s.buf);
    return st;
}
