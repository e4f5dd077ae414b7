/*
 * imagefolder.c - imagefolder:DIR, torchvision's ImageFolder layout: the
 * class names are the sorted names of DIR/train's subfolders (the test
 * split reads DIR/test), or without DIR/train of DIR's own, split by
 * :split=F as textdir splits (src/data/text.c's ct_text_split: per class,
 * the fraction F after a shuffle by the seed). A class folder's samples are
 * its .png, .jpg and .jpeg files (any case; hidden files and other names
 * are left out; subfolders are not read), in byte order of their names.
 *
 * Opening lists the folders and decodes nothing (but the first image, when
 * neither the model nor size= gives the shape): the dataset keeps the
 * paths and labels, and the loader decodes each sample when it is drawn,
 * so a folder of a million JPEGs opens in the time it takes to list it. A
 * file that does not decode is found when it is drawn (src/data/loader.c:
 * an error, or with bad=skip counted and left out).
 *
 * The training split's mean and std come from a seeded sample of stats=N
 * images (default 10000; stats=all: every one), decoded on a thread per
 * core (ct_imagefolder_stats) when the caller asks for them: a run resumed
 * from a checkpoint takes the checkpoint's instead.
 *
 * index=FILE keeps the listing (src/data/imgindex.h): written when FILE
 * does not exist, else read and checked against the folder (every class
 * folder's image count, and every file's size and modification time),
 * a mismatch being an error that names the first difference.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "core/pool.h"
#include "core/util.h"
#include "data/dataset.h"
#include "data/image.h"
#include "data/imgindex.h"
#include "data/rng.h"

typedef struct strs {
    char **v;
    size_t n, cap;
} strs;

static int strs_push(strs *s, char *x)
{
    if (!x)
        return ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory");
    if (s->n == s->cap) {
        size_t ncap = s->cap ? s->cap * 2 : 64;
        char **nv = realloc(s->v, ncap * sizeof *nv);
        if (!nv) {
            free(x);
            return ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory");
        }
        s->v = nv;
        s->cap = ncap;
    }
    s->v[s->n++] = x;
    return CT_OK;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int file_by_name(const void *a, const void *b)
{
    return strcmp(((const ct_imgfile *)a)->name, ((const ct_imgfile *)b)->name);
}

static char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", dir, name);
    return p;
}

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int is_image_name(const char *name)
{
    const char *dot = strrchr(name, '.');
    return name[0] != '.' && dot &&
           (!strcasecmp(dot, ".png") || !strcasecmp(dot, ".jpg") || !strcasecmp(dot, ".jpeg"));
}

static int64_t mtime_ns(const struct stat *st)
{
    return (int64_t)st->st_mtim.tv_sec * 1000000000 + (int64_t)st->st_mtim.tv_nsec;
}

/* The sorted names of dir's subfolders. */
static int list_folders(const char *dir, strs *out)
{
    errno = 0;
    DIR *d = opendir(dir);
    if (!d)
        return ct_fail(NULL, CT_ERR_IO, "cannot open the folder %s: %s", dir, strerror(errno));
    int st = CT_OK;
    struct dirent *e;
    while (!st && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char *path = join(dir, e->d_name);
        if (!path) {
            st = ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory");
            break;
        }
        int keep = is_dir(path);
        free(path);
        if (keep)
            st = strs_push(out, ct_strdup(e->d_name));
    }
    closedir(d);
    if (!st && out->n > 1)
        qsort(out->v, out->n, sizeof *out->v, by_name);
    return st;
}

/* dir's image files with their sizes and times, sorted by name, appended
 * to sp->files with the given label; *count (if not NULL) instead only
 * counts them, statting nothing. */
static int list_images(const char *dir, int32_t label, ct_imgsplit *sp, size_t *cap, size_t *count)
{
    errno = 0;
    DIR *d = opendir(dir);
    if (!d)
        return ct_fail(NULL, CT_ERR_IO, "cannot open the folder %s: %s", dir, strerror(errno));
    int st = CT_OK;
    size_t first = sp ? sp->nfiles : 0;
    struct dirent *e;
    while (!st && (e = readdir(d)) != NULL) {
        if (!is_image_name(e->d_name))
            continue;
        struct stat sb;
        char *path = count && e->d_type == DT_REG ? NULL : join(dir, e->d_name);
        if (!path && !(count && e->d_type == DT_REG)) {
            st = ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory");
            break;
        }
        int keep = path ? stat(path, &sb) == 0 && !S_ISDIR(sb.st_mode) : 1;
        free(path);
        if (!keep)
            continue;
        if (count) {
            (*count)++;
            continue;
        }
        if (sp->nfiles == *cap) {
            size_t ncap = *cap ? *cap * 2 : 1024;
            ct_imgfile *nf = realloc(sp->files, ncap * sizeof *nf);
            if (!nf) {
                st = ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory");
                break;
            }
            sp->files = nf;
            *cap = ncap;
        }
        ct_imgfile *f = &sp->files[sp->nfiles];
        if (!(f->name = ct_strdup(e->d_name))) {
            st = ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory");
            break;
        }
        f->label = label;
        f->size = (uint64_t)sb.st_size;
        f->mtime_ns = mtime_ns(&sb);
        sp->nfiles++;
    }
    closedir(d);
    if (!st && sp && sp->nfiles - first > 1)
        qsort(sp->files + first, sp->nfiles - first, sizeof *sp->files, file_by_name);
    return st;
}

static char *split_path(const char *root, const char *dir)
{
    return strcmp(dir, ".") ? join(root, dir) : ct_strdup(root);
}

/* The class folders and files of root/dir (dir "train", "test" or "."). */
static int list_split(const ct_imagefolder_spec *s, const char *dir, ct_imgsplit *out)
{
    memset(out, 0, sizeof *out);
    strs folders = { 0 };
    size_t cap = 0;
    char *path = split_path(s->path, dir);
    out->dir = ct_strdup(dir);
    int st = path && out->dir ? list_folders(path, &folders) : ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory");
    if (!st && folders.n == 0)
        st = ct_fail(NULL, CT_ERR_INVALID_ARG, "dataset '%s': %s has no class folders; HINT: put each "
                     "class's images in a folder named for it: %s/CLASS/*.png", s->spec, path, path);
    for (size_t i = 0; !st && i < folders.n; i++) {
        char *cdir = join(path, folders.v[i]);
        size_t before = out->nfiles;
        st = cdir ? list_images(cdir, (int32_t)i, out, &cap, NULL) : ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory");
        if (!st && out->nfiles == before)
            st = ct_fail(NULL, CT_ERR_INVALID_ARG, "dataset '%s': class folder %s holds no images; "
                         "HINT: a class folder holds .png, .jpg or .jpeg files (remove empty ones)",
                         s->spec, cdir);
        free(cdir);
    }
    if (!st && folders.n > (1u << 24))
        st = ct_fail(NULL, CT_ERR_UNSUPPORTED, "dataset '%s': %zu classes, more than %u", s->spec, folders.n,
                     1u << 24);
    out->classes = folders.v;
    out->nclasses = folders.n;
    free(path);
    return st;
}

/* Whether root/dir still holds what the index says: the same class
 * folders, as many images in each, and each file of the same size and
 * modification time. */
static int verify_split(const ct_imagefolder_spec *s, const ct_imgsplit *ix)
{
    strs folders = { 0 };
    char *path = split_path(s->path, ix->dir);
    char why[1200] = "";
    int st = path ? list_folders(path, &folders) : ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory");
    if (!st && folders.n != ix->nclasses)
        snprintf(why, sizeof why, "%s has %zu class folders, the index %zu", path, folders.n, ix->nclasses);
    for (size_t k = 0; !st && !why[0] && k < folders.n; k++)
        if (strcmp(folders.v[k], ix->classes[k]))
            snprintf(why, sizeof why, "class folder %s/%.200s is not the index's %.200s", path, folders.v[k],
                     ix->classes[k]);
    size_t at = 0;
    for (size_t k = 0; !st && !why[0] && k < ix->nclasses; k++) {
        char *cdir = join(path, ix->classes[k]);
        size_t have = 0, want = 0;
        while (at + want < ix->nfiles && ix->files[at + want].label == (int32_t)k)
            want++;
        st = cdir ? list_images(cdir, 0, NULL, NULL, &have) : ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory");
        if (!st && have != want)
            snprintf(why, sizeof why, "%.600s holds %zu images, the index %zu", cdir, have, want);
        for (size_t i = at; !st && !why[0] && i < at + want; i++) {
            char *f = join(cdir, ix->files[i].name);
            struct stat sb;
            if (!f)
                st = ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory");
            else if (stat(f, &sb))
                snprintf(why, sizeof why, "%.600s is gone (%s)", f, strerror(errno));
            else if ((uint64_t)sb.st_size != ix->files[i].size || mtime_ns(&sb) != ix->files[i].mtime_ns)
                snprintf(why, sizeof why, "%.600s changed (%llu bytes, the index %llu; or a new time)", f,
                         (unsigned long long)sb.st_size, (unsigned long long)ix->files[i].size);
            free(f);
        }
        at += want;
        free(cdir);
    }
    if (!st && why[0])
        st = ct_fail(NULL, CT_ERR_INVALID_ARG, "dataset '%s': the index %s no longer matches the folder: %s; "
                     "HINT: delete %s to list the folder again and rewrite it", s->spec, s->index, why, s->index);
    ct_free_strings(folders.v, folders.n);
    free(path);
    return st;
}

/* The split folders of the dataset: "train" and "test" (where it has one)
 * with the train/test layout, else ".". */
static int split_dirs(const ct_imagefolder_spec *s, int layout, const char **dirs)
{
    if (!layout) {
        dirs[0] = ".";
        return 1;
    }
    char *t = join(s->path, "test");
    int n = t && is_dir(t) ? 2 : 1;
    free(t);
    dirs[0] = "train";
    dirs[1] = "test";
    return n;
}

/* The listing of the split folders in want (n of them): index=FILE's
 * (checked against the folder for those), or the folders listed now (all
 * of them written to FILE when it does not exist yet). */
static int get_index(const ct_imagefolder_spec *s, int layout, const char *const *want, int nwant, ct_imgindex *ix)
{
    const char *dirs[2];
    int n = split_dirs(s, layout, dirs), e = 0, st;
    memset(ix, 0, sizeof *ix);
    if (s->index) {
        st = ct_imgindex_read(s->index, ix, &e);
        if (st && e != ENOENT)
            return st;
        if (!st) {
            for (int i = 0; !st && i < nwant; i++) {
                const ct_imgsplit *sp = ct_imgindex_find(ix, want[i]);
                st = sp ? verify_split(s, sp)
                        : ct_fail(NULL, CT_ERR_INVALID_ARG, "dataset '%s': the index %s has no '%s' split (it "
                                  "lists another folder); HINT: delete it to rewrite it, or name another",
                                  s->spec, s->index, want[i]);
            }
            if (st)
                ct_imgindex_free(ix);
            return st;
        }
    } else {
        n = nwant;
        dirs[0] = want[0];
        dirs[1] = nwant > 1 ? want[1] : NULL;
    }
    for (int i = 0; i < n; i++) {
        ix->nsplits = i + 1;
        if ((st = list_split(s, dirs[i], &ix->split[i]))) {
            ct_imgindex_free(ix);
            return st;
        }
    }
    if (s->index && (st = ct_imgindex_write(s->index, ix)))
        ct_imgindex_free(ix);
    return s->index ? st : CT_OK;
}

/* ---- normalization statistics ---- */

typedef struct stats_job {
    const ct_dataset *ds;
    const size_t *pick;  // (n) dataset indices
    uint8_t **scratch;   // (threads) a sample each
    uint64_t *sums;      // (n, 2 C) per channel: sum and sum of squares
    int *status;         // (n)
    char **why;          // (n) a failed file's message, else NULL
} stats_job;

static void stats_one(void *arg, size_t i, int thread)
{
    stats_job *j = arg;
    const ct_dataset *ds = j->ds;
    uint8_t *px = j->scratch[thread];
    j->status[i] = ct_image_load(ds->files[j->pick[i]], ds->c, ds->h, ds->w, px);
    if (j->status[i]) {
        j->why[i] = ct_strdup(ct_last_error()); /* NULL when out of memory: reported as such */
        return;
    }
    size_t hw = (size_t)ds->h * (size_t)ds->w;
    for (int k = 0; k < ds->c; k++) {
        uint64_t s1 = 0, s2 = 0;
        for (size_t p = 0; p < hw; p++) {
            uint64_t v = px[(size_t)k * hw + p];
            s1 += v;
            s2 += v * v;
        }
        j->sums[i * 2 * (size_t)ds->c + 2 * (size_t)k] = s1;
        j->sums[i * 2 * (size_t)ds->c + 2 * (size_t)k + 1] = s2;
    }
}

static int by_index(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

/* The sample: all of [0, n) when it asks for as many, else `want` indices
 * of a partial Fisher-Yates shuffle by (seed, CT_RNG_STATS), ascending. */
static size_t *stats_pick(size_t n, size_t want, uint64_t seed, size_t *m)
{
    *m = want && want < n ? want : n;
    size_t *v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return NULL;
    for (size_t i = 0; i < n; i++)
        v[i] = i;
    if (*m < n) {
        ct_rng r;
        ct_rng_seed(&r, seed, CT_RNG_STATS, 0, 0);
        for (size_t i = 0; i < *m; i++) {
            size_t k = i + (size_t)ct_rng_below(&r, n - i), t = v[i];
            v[i] = v[k];
            v[k] = t;
        }
        qsort(v, *m, sizeof *v, by_index);
    }
    return v;
}

int ct_imagefolder_stats(const ct_dataset *ds, int threads, float *mean, float *sd, size_t *used,
                         size_t *failed)
{
    size_t m = 0, per = ct_dataset_sample_size(ds), c2 = 2 * (size_t)ds->c;
    size_t *pick = stats_pick(ds->n, ds->stats_n, ds->stats_seed, &m);
    if (threads < 1) {
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        threads = ncpu < 1 ? 1 : ncpu > 64 ? 64 : (int)ncpu;
    }
    if ((size_t)threads > m)
        threads = m ? (int)m : 1;
    uint8_t **scratch = calloc((size_t)threads, sizeof *scratch);
    uint64_t *sums = malloc((m ? m : 1) * c2 * sizeof *sums);
    int *status = calloc(m ? m : 1, sizeof *status);
    char **why = calloc(m ? m : 1, sizeof *why);
    ct_pool *pool = NULL;
    int ok = pick && scratch && sums && status && why, st = CT_OK;
    for (int t = 0; ok && t < threads; t++)
        ok = (scratch[t] = malloc(per)) != NULL;
    if (ok && threads > 1 && ct_pool_create(threads, &pool))
        threads = 1; /* no threads to be had: decode on this one */
    if (ok) {
        stats_job j = { ds, pick, scratch, sums, status, why };
        if (pool)
            ct_pool_run(pool, m, stats_one, &j);
        else
            for (size_t i = 0; i < m; i++)
                stats_one(&j, i, 0);
    }
    ct_pool_free(&pool);
    size_t good = 0, bad = 0;
    for (size_t i = 0; ok && i < m && !st; i++) {
        if (status[i] == CT_ERR_NO_MEMORY || (status[i] && !ds->skip_bad))
            st = ct_fail(NULL, status[i], "%s (decoding the sample the normalization statistics come from)",
                         why[i] ? why[i] : "out of memory");
        else if (status[i])
            bad++;
        else if (good++ != i)
            memcpy(sums + (good - 1) * c2, sums + i * c2, c2 * sizeof *sums);
    }
    if (!ok)
        st = ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory for the statistics of %zu images", m);
    else if (!st && good == 0)
        st = ct_fail(NULL, CT_ERR_CORRUPT, "%s: none of the %zu images sampled for the normalization "
                     "statistics decodes; the first: %s", ds->name, m, m && why[0] ? why[0] : "");
    /* exact integer sums: the order they are added in does not matter */
    double count = (double)good * (double)ds->h * (double)ds->w;
    for (int k = 0; !st && k < ds->c; k++) {
        uint64_t s1 = 0, s2 = 0;
        for (size_t i = 0; i < good; i++) {
            s1 += sums[i * c2 + 2 * (size_t)k];
            s2 += sums[i * c2 + 2 * (size_t)k + 1];
        }
        double mu = (double)s1 / count, var = (double)s2 / count - mu * mu;
        double dev = var > 0 ? sqrt(var) / 255.0 : 0;
        mean[k] = (float)(mu / 255.0);
        sd[k] = dev > 0 && (float)dev > 0 ? (float)dev : 1.0f;
    }
    if (used)
        *used = good;
    if (failed)
        *failed = bad;
    for (int t = 0; scratch && t < threads; t++)
        free(scratch[t]);
    free(scratch);
    if (why)
        ct_free_strings(why, m);
    free(status);
    free(sums);
    free(pick);
    return st;
}

/* ---- opening ---- */

/* The shape of the first image that decodes, where the spec and model left it open. */
static int first_shape(const ct_imagefolder_spec *s, char *const *files, size_t n, int *c, int *h, int *w)
{
    int st = CT_ERR_INVALID_ARG;
    for (size_t i = 0; i < n; i++) {
        uint8_t *data = NULL;
        size_t size = 0;
        ct_image im;
        st = ct_image_read_file(files[i], &data, &size);
        if (!st)
            st = ct_image_decode(data, size, files[i], CT_IMAGE_MAX_PIXELS, &im);
        free(data);
        if (!st) {
            if (!*c)
                *c = im.c;
            if (!*h) {
                *h = im.h;
                *w = im.w;
            }
            ct_image_free(&im);
            return CT_OK;
        }
        if (!s->skip_bad)
            return st;
    }
    return ct_fail(NULL, CT_ERR_CORRUPT, "dataset '%s': no image decodes (%zu files)%s%s", s->spec, n,
                   n ? "; the last: " : "", n ? ct_last_error() : "");
}

/* The class each of sp's class folders is among names (the given ones),
 * into map (sp->nclasses). */
static int map_classes(const ct_imagefolder_spec *s, const ct_imgsplit *sp, char *const *names, size_t nnames,
                       int32_t *map)
{
    for (size_t i = 0; i < sp->nclasses; i++) {
        size_t k = 0;
        while (k < nnames && strcmp(names[k], sp->classes[i]))
            k++;
        if (k == nnames) {
            char *p = split_path(s->path, sp->dir);
            int st = ct_fail(NULL, CT_ERR_INVALID_ARG, "dataset '%s': class folder %s/%s is not one of the "
                             "%zu classes the model was trained on; HINT: remove it, or train on data that "
                             "has it", s->spec, p ? p : s->path, sp->classes[i], nnames);
            free(p);
            return st;
        }
        map[i] = (int32_t)k;
    }
    return CT_OK;
}

int ct_imagefolder_load(const ct_imagefolder_spec *s, int split, ct_dataset **out)
{
    *out = NULL;
    ct_imgindex ix = { 0 };
    strs names = { 0 }, files = { 0 };
    int32_t *labels = NULL, *map = NULL;
    uint8_t *is_test = NULL;
    ct_dataset *ds = NULL;
    char *train_dir = join(s->path, "train"), *dir = NULL;
    int given = s->classes && s->nclasses > 0, st = CT_OK;
    if (!train_dir)
        return ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory");
    int layout = is_dir(train_dir); /* DIR/train and DIR/test */
    const char *want[2] = { layout ? (split == CT_SPLIT_TEST ? "test" : "train") : ".", "train" };
    if (!is_dir(s->path)) {
        st = ct_fail(NULL, CT_ERR_IO, "dataset '%s': %s is not a folder; HINT: imagefolder:DIR reads "
                     "DIR/train/CLASS/*.png (and DIR/test/...) or DIR/CLASS/*.png with :split=F",
                     s->spec, s->path);
        goto done;
    }
    if (layout && s->split > 0) {
        st = ct_fail(NULL, CT_ERR_INVALID_ARG, "dataset '%s': %s has train/ (and test/) folders, so "
                     "split= does not apply; HINT: drop split=, or point at a folder of class folders",
                     s->spec, s->path);
        goto done;
    }
    if (!layout && s->split == 0 && split == CT_SPLIT_TEST) {
        st = ct_fail(NULL, CT_ERR_INVALID_ARG, "dataset '%s' has no test split: %s has no train/ and "
                     "test/ folders; HINT: add :split=F to hold out a fraction F of each class",
                     s->spec, s->path);
        goto done;
    }
    dir = split_path(s->path, want[0]);
    if (!dir) {
        st = ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory");
        goto done;
    }
    if (layout && !is_dir(dir)) {
        st = ct_fail(NULL, CT_ERR_IO, "dataset '%s': %s has train/ but no test/ folder; HINT: add "
                     "%s/CLASS/... for the test split", s->spec, s->path, dir);
        goto done;
    }
    int c = s->c, h = s->h, w = s->w;
    /* the test split's class names and, left open, its shape come from the
     * training folders, so that both splits agree */
    int from_train = layout && split == CT_SPLIT_TEST && (!given || !c || !h);
    if ((st = get_index(s, layout, want, from_train ? 2 : 1, &ix)))
        goto done;
    const ct_imgsplit *sp = ct_imgindex_find(&ix, want[0]);
    const ct_imgsplit *tr = from_train ? ct_imgindex_find(&ix, "train") : NULL;
    for (int k = 0; given && k < s->nclasses && !st; k++)
        st = strs_push(&names, ct_strdup(s->classes[k]));
    for (size_t k = 0; !given && k < (tr ? tr : sp)->nclasses && !st; k++)
        st = strs_push(&names, ct_strdup((tr ? tr : sp)->classes[k]));
    map = malloc(sp->nclasses * sizeof *map);
    labels = malloc((sp->nfiles ? sp->nfiles : 1) * sizeof *labels);
    if (!st && (!map || !labels))
        st = ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory");
    if (st || (st = map_classes(s, sp, names.v, names.n, map)))
        goto done;
    for (size_t i = 0; i < sp->nfiles && !st; i++) {
        char *cdir = join(dir, sp->classes[sp->files[i].label]);
        labels[i] = map[sp->files[i].label];
        st = strs_push(&files, cdir ? join(cdir, sp->files[i].name) : NULL);
        free(cdir);
    }
    if (st)
        goto done;
    if (tr && tr->nfiles && (!c || !h)) {
        char *first = join(s->path, "train");
        char *cdir = first ? join(first, tr->classes[tr->files[0].label]) : NULL;
        char *f = cdir ? join(cdir, tr->files[0].name) : NULL;
        st = f ? first_shape(s, &f, 1, &c, &h, &w) : ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory");
        free(f);
        free(cdir);
        free(first);
    }
    if (!st && (!c || !h))
        st = first_shape(s, files.v, files.n, &c, &h, &w);
    if (st)
        goto done;
    if (s->split > 0) { /* keep this split's files, in order */
        is_test = malloc(files.n ? files.n : 1);
        if (!is_test) {
            st = ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory");
            goto done;
        }
        if ((st = ct_text_split(labels, files.n, (int)names.n, s->split, s->seed, is_test)))
            goto done;
        size_t m = 0;
        for (size_t i = 0; i < files.n; i++) {
            if (is_test[i] == (split == CT_SPLIT_TEST)) {
                files.v[m] = files.v[i];
                labels[m++] = labels[i];
            } else {
                free(files.v[i]);
            }
        }
        files.n = m;
    }
    if (files.n == 0) {
        st = ct_fail(NULL, CT_ERR_INVALID_ARG, "dataset '%s': the %s split has no images", s->spec,
                     split == CT_SPLIT_TEST ? "test" : "training");
        goto done;
    }
    char name[1400];
    snprintf(name, sizeof name, "imagefolder %s (%s, %zu images of %dx%dx%d)", split == CT_SPLIT_TEST ? "test"
             : "train", dir, files.n, c, h, w);
    if ((st = ct_dataset_new(name, c, h, w, CT_STORE_FILES, &ds)))
        goto done;
    ds->n = ds->nfiles = files.n;
    ds->files = files.v;
    ds->labels = labels;
    ds->classes = (int)names.n;
    ds->class_names = names.v;
    ds->norm_from_train = 1;
    ds->skip_bad = s->skip_bad;
    ds->stats_n = s->stats;
    ds->stats_seed = s->seed;
    files.v = NULL;
    names.v = NULL;
    labels = NULL;
    *out = ds;
done:
    ct_imgindex_free(&ix);
    ct_free_strings(names.v, names.n);
    ct_free_strings(files.v, files.n);
    free(labels);
    free(map);
    free(is_test);
    free(train_dir);
    free(dir);
    return st;
}
