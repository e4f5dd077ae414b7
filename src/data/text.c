/*
 * text.c - text datasets: language-model windows of a text file (text:),
 * a folder of class folders of text files (textdir:), and what both share
 * with the CSV text reader: reading files whole, the tokenizer a split
 * uses, the stratified split and building a classification dataset.
 */
#include <dirent.h>
#include <errno.h>
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

#define MAX_TEXT_BYTES ((size_t)1 << 30) /* a language-model file */
#define MAX_SAMPLE_BYTES ((size_t)1 << 28) /* one file of a class folder */

static const char *kind_name(int kind)
{
    return kind == CT_TOKENS_WORD ? "word" : "byte";
}

/* The whole file (plain or gzip), with a NUL after it. */
static int read_text(const char *path, size_t limit, uint8_t **buf, size_t *n)
{
    ct_gzin in;
    uint64_t extra = 0;
    *buf = NULL;
    int st = ct_gzin_open(&in, path);
    if (st)
        return st;
    st = ct_gzin_read_alloc(&in, limit, buf, n);
    if (!st && *n == limit)
        st = ct_gzin_count_rest(&in, &extra);
    ct_gzin_close(&in);
    if (!st && extra)
        st = ct_fail(NULL, CT_ERR_UNSUPPORTED, "%s: larger than %zu bytes; HINT: split the text "
                     "into smaller files", path, limit);
    if (st) {
        free(*buf);
        *buf = NULL;
    }
    return st;
}

void ct_free_strings(char **v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        free(v[i]);
    free(v);
}

/* The tokenizer of the options, or byte tokens; *out stays NULL when a
 * word vocabulary is to be built from the training split. */
static int fixed_tokenizer(const ct_text_spec *s, ct_tokenizer **out)
{
    *out = NULL;
    if (s->given && s->given->tokenizer) {
        const ct_tokenizer *g = s->given->tokenizer;
        if (s->tokens_given && g->kind != s->tokens)
            return ct_fail(NULL, CT_ERR_INVALID_ARG,
                           "dataset '%s' asks for %s tokens, but the tokenizer it is given (a "
                           "checkpoint's, say) has %s tokens; HINT: drop tokens= or make it agree",
                           s->spec, kind_name(s->tokens), kind_name(g->kind));
        return ct_tokenizer_copy(g, out);
    }
    if (s->tokens == CT_TOKENS_BYTE)
        return ct_tokenizer_new_byte(out);
    return CT_OK;
}

/* ---- language-model windows ---- */

/* Counts tokens, adding the first `limit` to a word count. */
typedef struct counter {
    ct_wordcount *wc;
    size_t seen, limit;
} counter;

static int count_token(void *user, const char *tok, size_t len)
{
    counter *c = user;
    if (c->wc && c->seen < c->limit) {
        int st = ct_wordcount_add(c->wc, tok, len);
        if (st)
            return st;
    }
    c->seen++;
    return CT_OK;
}

/* Windows of T in a stream of L tokens, and the test split's share. */
static int lm_windows(const ct_text_spec *s, int kind, const char *path, size_t L, size_t *W,
                      size_t *ntest)
{
    size_t T = (size_t)s->seq;
    if (L < T + 1)
        return ct_fail(NULL, CT_ERR_CORRUPT,
                       "%s: %zu %s tokens make no window of seq=%zu (T inputs, each with the "
                       "next token as its target, need T + 1 tokens); HINT: use a smaller seq or "
                       "more text",
                       path, L, kind_name(kind), T);
    *W = (L - 1) / T;
    *ntest = 0;
    if (s->split > 0) {
        if (*W < 2)
            return ct_fail(NULL, CT_ERR_CORRUPT,
                           "%s: %zu tokens make %zu window of seq=%zu, too few to split; HINT: "
                           "use a smaller seq or more text",
                           path, L, *W, T);
        double t = ceil(s->split * (double)*W);
        *ntest = t < 1 ? 1 : t > (double)(*W - 1) ? *W - 1 : (size_t)t;
    }
    return CT_OK;
}

int ct_text_load(const ct_text_spec *s, int split, ct_dataset **out)
{
    uint8_t *text = NULL, *other = NULL;
    size_t n = 0, n2 = 0, W = 0, ntest = 0;
    ct_tokenizer *tok = NULL;
    ct_wordcount *wc = NULL;
    ct_idsink sink = { NULL, 0, 0, 1 };
    ct_dataset *ds = NULL;
    const char *path = s->path;
    *out = NULL;
    if (split == CT_SPLIT_TEST && !s->test && !(s->split > 0))
        return ct_fail(NULL, CT_ERR_INVALID_ARG,
                       "dataset '%s' has no test split; HINT: name its file with :test=FILE, or "
                       "hold out the last windows with :split=F",
                       s->spec);
    int st = read_text(path, MAX_TEXT_BYTES, &text, &n);
    if (!st && n == 0)
        st = ct_fail(NULL, CT_ERR_CORRUPT, "%s: empty file; HINT: a language model needs text", path);
    if (!st)
        st = fixed_tokenizer(s, &tok);
    if (!st && !tok) {
        /* a word vocabulary from the training split: with split=F, the
         * tokens up to the last training window's last target */
        counter c = { NULL, 0, SIZE_MAX };
        if (s->split > 0 && !(st = ct_words_scan((const char *)text, n, path, 0, count_token, &c)) &&
            !(st = lm_windows(s, CT_TOKENS_WORD, path, c.seen, &W, &ntest)))
            c.limit = (W - ntest) * (size_t)s->seq + 1;
        c.seen = 0;
        if (!st && !(st = ct_wordcount_new(&c.wc)))
            st = ct_words_scan((const char *)text, n, path, 0, count_token, &c);
        wc = c.wc;
        if (!st)
            st = ct_tokenizer_build(wc, s->vocab, &tok);
    }
    if (!st && split == CT_SPLIT_TEST && s->test) {
        path = s->test;
        st = read_text(path, MAX_TEXT_BYTES, &other, &n2);
        if (!st && n2 == 0)
            st = ct_fail(NULL, CT_ERR_CORRUPT, "%s: empty file; HINT: the test split needs text", path);
    }
    if (!st)
        st = ct_tokenizer_encode_to(tok, (const char *)(other ? other : text), other ? n2 : n, path,
                                    0, &sink);
    if (!st)
        st = lm_windows(s, tok->kind, path, sink.count, &W, &ntest);
    if (st)
        goto done;
    size_t T = (size_t)s->seq, first = 0, count = W;
    if (s->split > 0) {
        first = split == CT_SPLIT_TEST ? W - ntest : 0;
        count = split == CT_SPLIT_TEST ? ntest : W - ntest;
    }
    char name[4400];
    if (s->split > 0)
        snprintf(name, sizeof name, "text %s (%s of %s, %.3g held out), %s tokens, seq %zu",
                 split == CT_SPLIT_TEST ? "test" : "train",
                 split == CT_SPLIT_TEST ? "the last windows" : "the first windows", s->path,
                 s->split, kind_name(tok->kind), T);
    else
        snprintf(name, sizeof name, "text %s (%s), %s tokens, seq %zu",
                 split == CT_SPLIT_TEST ? "test" : "train", path, kind_name(tok->kind), T);
    if ((st = ct_dataset_new(name, (int)T, 1, 1, CT_STORE_TOKENS, &ds)))
        goto done;
    ds->tokens = malloc((count * T + 1) * sizeof *ds->tokens);
    if (!ds->tokens) {
        st = ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory for %zu windows of %zu tokens", count, T);
        goto done;
    }
    memcpy(ds->tokens, sink.ids + first * T, (count * T + 1) * sizeof *ds->tokens);
    ds->n = count;
    ds->seq = (int)T;
    ds->lm = 1;
    ds->classes = (int)tok->size;
    ds->tok = tok;
    tok = NULL;
    *out = ds;
    ds = NULL;
done:
    ct_dataset_free(&ds);
    ct_tokenizer_free(&tok);
    ct_wordcount_free(&wc);
    free(sink.ids);
    free(text);
    free(other);
    return st;
}

/* ---- classification ---- */

static int by_label_then_index(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    return x[0] != y[0] ? (x[0] < y[0] ? -1 : 1) : (x[1] < y[1] ? -1 : x[1] > y[1]);
}

int ct_text_split(const int32_t *labels, size_t n, int classes, double split, uint64_t seed,
                  uint8_t *is_test)
{
    /* (label, index) pairs sorted: each class's samples in index order,
     * visited class by class without a pass per class (CSV tables can
     * have labels up to 2^31) */
    int64_t *pairs = malloc((n ? n : 1) * 2 * sizeof *pairs);
    size_t *idx = malloc((n ? n : 1) * sizeof *idx);
    if (!pairs || !idx) {
        free(pairs);
        free(idx);
        return ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory splitting %zu samples", n);
    }
    memset(is_test, 0, n);
    for (size_t i = 0; i < n; i++) {
        pairs[2 * i] = labels[i];
        pairs[2 * i + 1] = (int64_t)i;
    }
    qsort(pairs, n, 2 * sizeof *pairs, by_label_then_index);
    for (size_t g = 0; g < n;) {
        int64_t k = pairs[2 * g];
        size_t m = 0;
        while (g < n && pairs[2 * g] == k)
            idx[m++] = (size_t)pairs[2 * g++ + 1];
        if (k < 0 || k >= classes)
            continue;
        ct_rng r;
        ct_rng_seed(&r, seed, CT_RNG_SPLIT, (uint64_t)k, 0);
        for (size_t i = m; i > 1; i--) {
            size_t j = (size_t)ct_rng_below(&r, i), t = idx[i - 1];
            idx[i - 1] = idx[j];
            idx[j] = t;
        }
        size_t take = (size_t)floor(split * (double)m + 0.5);
        for (size_t i = 0; i < take; i++)
            is_test[idx[i]] = 1;
    }
    free(pairs);
    free(idx);
    return CT_OK;
}

/* Where a sample is, for messages: the file, or FILE:LINE of a CSV row. */
static void item_where(const ct_text_item *it, char *buf, size_t size)
{
    if (it->text)
        snprintf(buf, size, "%s:%zu", it->file, it->line);
    else
        snprintf(buf, size, "%s", it->file);
}

/* The item's text: in memory, or read into *owned. */
static int item_text(const ct_text_item *it, uint8_t **owned, const char **text, size_t *len)
{
    *owned = NULL;
    if (it->text) {
        *text = it->text;
        *len = it->len;
        return CT_OK;
    }
    int st = read_text(it->file, MAX_SAMPLE_BYTES, owned, len);
    *text = (const char *)*owned;
    return st;
}

int ct_text_classify(const ct_text_spec *s, const char *name, const ct_text_item *vocab_items,
                     size_t nvocab, const ct_text_item *items, size_t n, char **class_names,
                     int classes, ct_dataset **out)
{
    ct_tokenizer *tok = NULL;
    ct_wordcount *wc = NULL;
    ct_dataset *ds = NULL;
    uint8_t *owned = NULL;
    const char *text = NULL;
    size_t len = 0, T = (size_t)s->seq;
    char where[4200];
    *out = NULL;
    int st = fixed_tokenizer(s, &tok);
    if (!st && !tok && !(st = ct_wordcount_new(&wc))) {
        for (size_t i = 0; !st && i < nvocab; i++) {
            item_where(&vocab_items[i], where, sizeof where);
            if (!(st = item_text(&vocab_items[i], &owned, &text, &len)))
                st = ct_words_scan(text, len, where, 0, ct_wordcount_add, wc);
            free(owned);
            owned = NULL;
        }
        if (!st)
            st = ct_tokenizer_build(wc, s->vocab, &tok);
    }
    if (!st && n > SIZE_MAX / sizeof(int32_t) / T)
        st = ct_fail(NULL, CT_ERR_NO_MEMORY, "%zu samples of %zu tokens are too many", n, T);
    if (!st)
        st = ct_dataset_new(name, (int)T, 1, 1, CT_STORE_TOKENS, &ds);
    if (!st) {
        ds->tokens = malloc((n ? n : 1) * T * sizeof *ds->tokens);
        ds->labels = malloc((n ? n : 1) * sizeof *ds->labels);
        if (!ds->tokens || !ds->labels)
            st = ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory for %zu samples of %zu tokens", n, T);
    }
    for (size_t i = 0; !st && i < n; i++) {
        int32_t *row = ds->tokens + i * T;
        ct_idsink sink = { row, T, 0, 0 };
        item_where(&items[i], where, sizeof where);
        if (!(st = item_text(&items[i], &owned, &text, &len)))
            st = ct_tokenizer_encode_to(tok, text, len, where, 0, &sink);
        free(owned);
        owned = NULL;
        if (!st && sink.count == 0)
            st = ct_fail(NULL, CT_ERR_CORRUPT, "%s: %s; HINT: every sample needs text: remove it or "
                         "fill it", where,
                         len == 0 ? (items[i].text ? "the text field is empty" : "empty file")
                                  : "no words, only white space");
        for (size_t t = sink.count; !st && t < T; t++)
            row[t] = CT_TOKEN_PAD;
        if (!st)
            ds->labels[i] = items[i].label;
    }
    if (!st) {
        ds->n = n;
        ds->seq = (int)T;
        ds->classes = classes;
        ds->class_names = class_names;
        class_names = NULL;
        ds->tok = tok;
        tok = NULL;
        *out = ds;
        ds = NULL;
    }
    ct_free_strings(class_names, (size_t)classes);
    ct_dataset_free(&ds);
    ct_tokenizer_free(&tok);
    ct_wordcount_free(&wc);
    return st;
}

/* ---- textdir ---- */

typedef struct names {
    char **v;
    size_t n, cap;
} names;

static int by_string(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *join(const char *dir, const char *name)
{
    size_t a = strlen(dir), b = strlen(name);
    char *p = malloc(a + b + 2);
    if (p) {
        memcpy(p, dir, a);
        p[a] = '/';
        memcpy(p + a + 1, name, b + 1);
    }
    return p;
}

/* The entries of dir that are folders (dirs) or regular files (!dirs),
 * hidden ones (".name") left out, in byte order of their names. */
static int list_dir(const char *dir, int dirs, names *out)
{
    memset(out, 0, sizeof *out);
    errno = 0;
    DIR *d = opendir(dir);
    if (!d)
        return ct_fail(NULL, CT_ERR_IO, "cannot open folder %s: %s", dir, strerror(errno));
    int st = CT_OK;
    struct dirent *e;
    while (!st && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char *p = join(dir, e->d_name);
        struct stat sb;
        if (!p) {
            st = ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory listing %s", dir);
            break;
        }
        int keep = stat(p, &sb) == 0 && (dirs ? S_ISDIR(sb.st_mode) : S_ISREG(sb.st_mode));
        free(p);
        if (!keep)
            continue;
        if (out->n == out->cap) {
            size_t nc = out->cap ? out->cap * 2 : 64;
            char **nv = realloc(out->v, nc * sizeof *nv);
            if (!nv) {
                st = ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory listing %s", dir);
                break;
            }
            out->v = nv;
            out->cap = nc;
        }
        if (!(out->v[out->n] = ct_strdup(e->d_name)))
            st = ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory listing %s", dir);
        else
            out->n++;
    }
    closedir(d);
    if (st) {
        ct_free_strings(out->v, out->n);
        memset(out, 0, sizeof *out);
        return st;
    }
    if (out->n)
        qsort(out->v, out->n, sizeof *out->v, by_string);
    return CT_OK;
}

static int is_dir(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* The files of each class folder of `root` as items (paths in *paths). */
static int collect(const char *root, const names *folders, const int32_t *ids, ct_text_item **items,
                   size_t *n, names *paths)
{
    int st = CT_OK;
    size_t cap = 0;
    *items = NULL;
    *n = 0;
    for (size_t f = 0; !st && f < folders->n; f++) {
        char *dir = join(root, folders->v[f]);
        names files = { 0 };
        if (!dir)
            st = ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory");
        if (!st)
            st = list_dir(dir, 0, &files);
        if (!st && files.n == 0)
            st = ct_fail(NULL, CT_ERR_CORRUPT, "%s holds no files; HINT: every class folder needs "
                         "at least one text file", dir);
        for (size_t i = 0; !st && i < files.n; i++) {
            if (*n == cap) {
                size_t nc = cap ? cap * 2 : 256;
                ct_text_item *ni = realloc(*items, nc * sizeof *ni);
                if (!ni) {
                    st = ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory listing %s", dir);
                    break;
                }
                *items = ni;
                cap = nc;
            }
            if (paths->n == paths->cap) {
                size_t nc = paths->cap ? paths->cap * 2 : 256;
                char **np = realloc(paths->v, nc * sizeof *np);
                if (!np) {
                    st = ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory listing %s", dir);
                    break;
                }
                paths->v = np;
                paths->cap = nc;
            }
            char *p = join(dir, files.v[i]);
            if (!p) {
                st = ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory listing %s", dir);
                break;
            }
            paths->v[paths->n++] = p;
            (*items)[(*n)++] = (ct_text_item){ p, NULL, 0, 0, ids[f] };
        }
        ct_free_strings(files.v, files.n);
        free(dir);
    }
    return st;
}

/* Class ids of the folders: their index in `classes`, an error for a folder
 * outside them. */
static int folder_ids(const char *root, const names *folders, const char *const *classes,
                      int nclasses, const char *from, int32_t *ids)
{
    for (size_t f = 0; f < folders->n; f++) {
        ids[f] = -1;
        for (int k = 0; k < nclasses; k++)
            if (!strcmp(folders->v[f], classes[k]))
                ids[f] = k;
        if (ids[f] < 0)
            return ct_fail(NULL, CT_ERR_CORRUPT, "%s/%s: no class '%s' in %s; HINT: the test "
                           "split's class folders must be the training split's",
                           root, folders->v[f], folders->v[f], from);
    }
    return CT_OK;
}

int ct_textdir_load(const ct_text_spec *s, int split, ct_dataset **out)
{
    const char *dir = s->path;
    char *train_dir = NULL, *test_dir = NULL, **class_names = NULL;
    names folders = { 0 }, test_folders = { 0 }, paths = { 0 };
    ct_text_item *items = NULL, *test_items = NULL, *picked = NULL;
    size_t n = 0, ntest_items = 0;
    int32_t *ids = NULL, *labels = NULL;
    uint8_t *is_test = NULL;
    int classes = 0, st = CT_OK;
    *out = NULL;
    if (!is_dir(dir))
        return ct_fail(NULL, CT_ERR_IO, "textdir %s is not a folder; HINT: give a folder of class "
                       "folders, or one holding train/ and test/", dir);
    train_dir = join(dir, "train");
    test_dir = join(dir, "test");
    if (!train_dir || !test_dir) {
        st = ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory");
        goto done;
    }
    int two = is_dir(train_dir);
    const char *root = two ? train_dir : dir;
    if (two && s->split > 0) {
        st = ct_fail(NULL, CT_ERR_INVALID_ARG, "dataset '%s': %s has train/ and test/ folders, so "
                     "split= does not apply; HINT: drop :split, or name a folder of class folders",
                     s->spec, dir);
        goto done;
    }
    if (split == CT_SPLIT_TEST && !two && !(s->split > 0)) {
        st = ct_fail(NULL, CT_ERR_INVALID_ARG, "dataset '%s' has no test split; HINT: add :split=F, "
                     "or put the classes in %s/train/<class>/ and %s/test/<class>/",
                     s->spec, dir, dir);
        goto done;
    }
    if ((st = list_dir(root, 1, &folders)))
        goto done;
    if (folders.n < 2) {
        st = ct_fail(NULL, CT_ERR_CORRUPT, "%s holds %zu class folder%s%s%s; HINT: a text "
                     "classification folder holds one folder of text files per class, at least two",
                     root, folders.n, folders.n == 1 ? " (" : "s", folders.n == 1 ? folders.v[0] : "",
                     folders.n == 1 ? ")" : "");
        goto done;
    }
    ids = malloc(folders.n * sizeof *ids);
    if (!ids) {
        st = ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory");
        goto done;
    }
    const ct_text_options *g = s->given;
    if (g && g->classes) {
        classes = g->nclasses;
        st = folder_ids(root, &folders, g->classes, classes, "the class names given", ids);
    } else {
        classes = (int)folders.n;
        for (size_t f = 0; f < folders.n; f++)
            ids[f] = (int32_t)f;
    }
    if (st || (st = collect(root, &folders, ids, &items, &n, &paths)))
        goto done;
    class_names = calloc((size_t)classes, sizeof *class_names);
    for (int k = 0; class_names && k < classes; k++)
        if (!(class_names[k] = ct_strdup(g && g->classes ? g->classes[k] : folders.v[k]))) {
            ct_free_strings(class_names, (size_t)k);
            class_names = NULL;
        }
    if (!class_names) {
        st = ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory");
        goto done;
    }
    char name[4400];
    const ct_text_item *vocab = items, *use = items;
    size_t nvocab = n, nuse = n;
    if (two && split == CT_SPLIT_TEST) {
        if ((st = list_dir(test_dir, 1, &test_folders)))
            goto done;
        int32_t *tids = realloc(ids, (test_folders.n ? test_folders.n : 1) * sizeof *tids);
        if (!tids) {
            st = ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory");
            goto done;
        }
        ids = tids;
        if ((st = folder_ids(test_dir, &test_folders, (const char *const *)class_names, classes,
                             g && g->classes ? "the class names given" : train_dir, ids)) ||
            (st = collect(test_dir, &test_folders, ids, &test_items, &ntest_items, &paths)))
            goto done;
        if (ntest_items == 0) {
            st = ct_fail(NULL, CT_ERR_CORRUPT, "%s holds no class folders; HINT: the test split "
                         "has the training split's class folders", test_dir);
            goto done;
        }
        use = test_items;
        nuse = ntest_items;
    } else if (s->split > 0) {
        labels = calloc(n, sizeof *labels);
        is_test = malloc(n);
        picked = malloc(n * sizeof *picked);
        if (!labels || !is_test || !picked) {
            st = ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory");
            goto done;
        }
        for (size_t i = 0; i < n; i++)
            labels[i] = items[i].label;
        if ((st = ct_text_split(labels, n, classes, s->split, s->seed, is_test)))
            goto done;
        size_t ntrain = 0, ntest = 0;
        for (size_t i = 0; i < n; i++)
            if (!is_test[i])
                picked[ntrain++] = items[i];
        for (size_t i = 0; i < n; i++)
            if (is_test[i])
                picked[ntrain + ntest++] = items[i];
        if (ntrain == 0 || ntest == 0) {
            st = ct_fail(NULL, CT_ERR_CORRUPT, "%s: split=%g of %zu files leaves the %s split "
                         "empty; HINT: use a split fraction that leaves files on both sides",
                         dir, s->split, n, ntest == 0 ? "test" : "training");
            goto done;
        }
        vocab = picked;
        nvocab = ntrain;
        use = split == CT_SPLIT_TEST ? picked + ntrain : picked;
        nuse = split == CT_SPLIT_TEST ? ntest : ntrain;
    }
    snprintf(name, sizeof name, "textdir %s (%s%s), %d classes, %s tokens, seq %d",
             split == CT_SPLIT_TEST ? "test" : "train",
             two ? (split == CT_SPLIT_TEST ? test_dir : train_dir) : dir,
             !two && s->split > 0 ? ", split" : "", classes,
             kind_name(g && g->tokenizer ? g->tokenizer->kind : s->tokens), s->seq);
    st = ct_text_classify(s, name, vocab, nvocab, use, nuse, class_names, classes, out);
    class_names = NULL;
done:
    ct_free_strings(class_names, (size_t)classes);
    ct_free_strings(folders.v, folders.n);
    ct_free_strings(test_folders.v, test_folders.n);
    ct_free_strings(paths.v, paths.n);
    free(items);
    free(test_items);
    free(picked);
    free(ids);
    free(labels);
    free(is_test);
    free(train_dir);
    free(test_dir);
    return st;
}
