/*
 * imagefolder.c - imagefolder:DIR, torchvision's ImageFolder layout: the
 * class names are the sorted names of DIR/train's subfolders (the test
 * split reads DIR/test), or without DIR/train of DIR's own, split by
 * :split=F as textdir splits (src/data/text.c's ct_text_split: per class,
 * the fraction F after a shuffle by the seed). A class folder's samples are
 * its .png, .jpg and .jpeg files (any case; hidden files and other names
 * are left out; subfolders are not read), in byte order of their names.
 *
 * The dataset keeps the paths and labels, not the pixels: the loader
 * decodes each sample when it is drawn (on its prefetch thread), so a
 * folder of a million JPEGs costs its path list in memory. Opening checks
 * every file of the split by decoding it once, keeping only its
 * per-channel sums, from which the training split's mean and std come
 * (ct_dataset_compute_norm) without another pass; bad=skip leaves out the
 * files that fail, bad=error (the default) stops at the first (in list
 * order). That check decodes on a thread per core (at most 16).
 */
#include <dirent.h>
#include <errno.h>
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

/* The sorted names in dir of subfolders (want_dirs) or image files. */
static int list_dir(const char *dir, int want_dirs, strs *out)
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
        int keep = want_dirs ? is_dir(path) : is_image_name(e->d_name) && !is_dir(path);
        free(path);
        if (keep)
            st = strs_push(out, ct_strdup(e->d_name));
    }
    closedir(d);
    if (!st && out->n > 1)
        qsort(out->v, out->n, sizeof *out->v, by_name);
    return st;
}

/* Every image of dir's class folders, labelled by the class names. With
 * given names, a folder outside them is an error; without, they are the
 * folders. */
static int collect(const ct_imagefolder_spec *s, const char *dir, strs *names, int given, strs *files,
                   int32_t **labels)
{
    strs folders = { 0 };
    size_t cap = 0;
    int st = list_dir(dir, 1, &folders);
    if (!st && folders.n == 0)
        st = ct_fail(NULL, CT_ERR_INVALID_ARG, "dataset '%s': %s has no class folders; HINT: put each "
                     "class's images in a folder named for it: %s/CLASS/*.png", s->spec, dir, dir);
    if (!st && !given)
        for (size_t i = 0; !st && i < folders.n; i++)
            st = strs_push(names, ct_strdup(folders.v[i]));
    for (size_t i = 0; !st && i < folders.n; i++) {
        size_t k = 0;
        while (k < names->n && strcmp(names->v[k], folders.v[i]))
            k++;
        if (k == names->n) {
            st = ct_fail(NULL, CT_ERR_INVALID_ARG, "dataset '%s': class folder %s/%s is not one of the "
                         "%zu classes the model was trained on; HINT: remove it, or train on data that "
                         "has it", s->spec, dir, folders.v[i], names->n);
            break;
        }
        char *cdir = join(dir, folders.v[i]);
        strs imgs = { 0 };
        st = cdir ? list_dir(cdir, 0, &imgs) : ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory");
        if (!st && imgs.n == 0)
            st = ct_fail(NULL, CT_ERR_INVALID_ARG, "dataset '%s': class folder %s holds no images; "
                         "HINT: a class folder holds .png, .jpg or .jpeg files (remove empty ones)",
                         s->spec, cdir);
        for (size_t j = 0; !st && j < imgs.n; j++) {
            if (files->n + 1 > cap) {
                cap = cap ? cap * 2 : 1024;
                int32_t *nl = realloc(*labels, cap * sizeof *nl);
                if (!nl) {
                    st = ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory");
                    break;
                }
                *labels = nl;
            }
            (*labels)[files->n] = (int32_t)k;
            st = strs_push(files, join(cdir, imgs.v[j]));
        }
        ct_free_strings(imgs.v, imgs.n);
        free(cdir);
    }
    ct_free_strings(folders.v, folders.n);
    return st;
}

/* Decodes one file at the dataset's shape and takes its per-channel sums. */
static int check_file(const char *path, int c, int h, int w, uint8_t *scratch, uint64_t *sums)
{
    int st = ct_image_load(path, c, h, w, scratch);
    if (st)
        return st;
    size_t hw = (size_t)h * (size_t)w;
    for (int k = 0; k < c; k++) {
        uint64_t s1 = 0, s2 = 0;
        for (size_t i = 0; i < hw; i++) {
            uint64_t v = scratch[(size_t)k * hw + i];
            s1 += v;
            s2 += v * v;
        }
        sums[2 * k] = s1;
        sums[2 * k + 1] = s2;
    }
    return CT_OK;
}

typedef struct check_job {
    char *const *files;
    int c, h, w;
    uint8_t **scratch;  // (threads) one sample each
    uint64_t *sums;     // (n, 2 C)
    int *status;        // (n)
    char **why;         // (n) the message of a file that failed, else NULL
} check_job;

static void check_one(void *arg, size_t i, int thread)
{
    check_job *j = arg;
    j->status[i] = check_file(j->files[i], j->c, j->h, j->w, j->scratch[thread],
                              j->sums + i * 2 * (size_t)j->c);
    if (j->status[i])
        j->why[i] = ct_strdup(ct_last_error()); /* NULL when out of memory: reported as such */
}

/* Every file checked (check_file) on a thread per core: *status and *why
 * (malloc'd, files->n each) say how each went. */
static int check_all(const strs *files, int c, int h, int w, uint64_t *sums, int **status, char ***why)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int threads = ncpu < 1 ? 1 : ncpu > 16 ? 16 : (int)ncpu;
    if ((size_t)threads > files->n)
        threads = files->n ? (int)files->n : 1;
    size_t per = (size_t)c * (size_t)h * (size_t)w;
    uint8_t *scratch[16] = { 0 };
    ct_pool *pool = NULL;
    *status = calloc(files->n ? files->n : 1, sizeof **status);
    *why = calloc(files->n ? files->n : 1, sizeof **why);
    int ok = *status && *why;
    for (int t = 0; ok && t < threads; t++)
        ok = (scratch[t] = malloc(per)) != NULL;
    if (ok && threads > 1 && ct_pool_create(threads, &pool))
        threads = 1; /* no threads to be had: check on this one */
    if (ok) {
        check_job j = { files->v, c, h, w, scratch, sums, *status, *why };
        if (pool)
            ct_pool_run(pool, files->n, check_one, &j);
        else
            for (size_t i = 0; i < files->n; i++)
                check_one(&j, i, 0);
    }
    ct_pool_free(&pool);
    for (int t = 0; t < 16; t++)
        free(scratch[t]);
    return ok ? CT_OK : ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory checking %zu images", files->n);
}

/* The shape of the first image that decodes, where the spec and model left it open. */
static int first_shape(const ct_imagefolder_spec *s, const strs *files, int *c, int *h, int *w)
{
    int st = CT_ERR_INVALID_ARG;
    for (size_t i = 0; i < files->n; i++) {
        uint8_t *data = NULL;
        size_t size = 0;
        ct_image im;
        st = ct_image_read_file(files->v[i], &data, &size);
        if (!st)
            st = ct_image_decode(data, size, files->v[i], CT_IMAGE_MAX_PIXELS, &im);
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
    return ct_fail(NULL, CT_ERR_CORRUPT, "dataset '%s': no image decodes (%zu files)%s%s", s->spec,
                   files->n, files->n ? "; the last: " : "", files->n ? ct_last_error() : "");
}

int ct_imagefolder_load(const ct_imagefolder_spec *s, int split, ct_dataset **out)
{
    *out = NULL;
    strs names = { 0 }, files = { 0 };
    int32_t *labels = NULL;
    uint8_t *is_test = NULL;
    int *status = NULL;
    char **why = NULL;
    size_t checked = 0; /* entries of status and why */
    uint64_t *sums = NULL;
    ct_dataset *ds = NULL;
    char *train_dir = join(s->path, "train"), *dir = NULL;
    int given = s->classes && s->nclasses > 0, st = CT_OK;
    char first_bad[600] = "";
    size_t bad = 0;
    if (!train_dir)
        return ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory");
    int layout = is_dir(train_dir); /* DIR/train and DIR/test */
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
    for (int k = 0; given && k < s->nclasses && !st; k++)
        st = strs_push(&names, ct_strdup(s->classes[k]));
    int c = s->c, h = s->h, w = s->w;
    /* the test split's class names and, left open, its shape come from the
     * training folders, so that both splits agree */
    if (!st && layout && split == CT_SPLIT_TEST && (!given || !c || !h)) {
        strs tf = { 0 }, tn = { 0 };
        int32_t *tl = NULL;
        st = collect(s, train_dir, given ? &tn : &names, 0, &tf, &tl);
        if (!st && (!c || !h))
            st = first_shape(s, &tf, &c, &h, &w);
        ct_free_strings(tf.v, tf.n);
        ct_free_strings(tn.v, tn.n);
        free(tl);
        given = 1;
    }
    if (st)
        goto done;
    dir = layout ? join(s->path, split == CT_SPLIT_TEST ? "test" : "train") : ct_strdup(s->path);
    if (!dir) {
        st = ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory");
        goto done;
    }
    if (layout && !is_dir(dir)) {
        st = ct_fail(NULL, CT_ERR_IO, "dataset '%s': %s has train/ but no test/ folder; HINT: add "
                     "%s/CLASS/... for the test split", s->spec, s->path, dir);
        goto done;
    }
    if ((st = collect(s, dir, &names, given, &files, &labels)))
        goto done;
    if (names.n > (1u << 24)) {
        st = ct_fail(NULL, CT_ERR_UNSUPPORTED, "dataset '%s': %zu classes, more than %u", s->spec,
                     names.n, 1u << 24);
        goto done;
    }
    if ((!c || !h) && (st = first_shape(s, &files, &c, &h, &w)))
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
    sums = malloc((files.n ? files.n : 1) * 2 * (size_t)c * sizeof *sums);
    if (!sums) {
        st = ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory");
        goto done;
    }
    checked = files.n;
    if ((st = check_all(&files, c, h, w, sums, &status, &why)))
        goto done;
    size_t m = 0;
    for (size_t i = 0; i < files.n; i++) {
        int fst = status[i];
        if (fst == CT_ERR_NO_MEMORY || (fst && !s->skip_bad)) {
            st = ct_fail(NULL, fst, "%s", why[i] ? why[i] : "out of memory");
            goto done;
        }
        if (fst) {
            if (!bad++)
                snprintf(first_bad, sizeof first_bad, "%s", why[i] ? why[i] : "");
            free(files.v[i]);
            files.v[i] = NULL;
            continue;
        }
        if (m != i) {
            files.v[m] = files.v[i];
            files.v[i] = NULL;
            memcpy(sums + m * 2 * (size_t)c, sums + i * 2 * (size_t)c, 2 * (size_t)c * sizeof *sums);
        }
        labels[m++] = labels[i];
    }
    files.n = m;
    if (files.n == 0) {
        st = ct_fail(NULL, CT_ERR_INVALID_ARG, "dataset '%s': the %s split has no images%s%s", s->spec,
                     split == CT_SPLIT_TEST ? "test" : "training", bad ? "; every file failed, the "
                     "first: " : "", first_bad);
        goto done;
    }
    char name[1400];
    int at = snprintf(name, sizeof name, "imagefolder %s (%s, %zu images of %dx%dx%d", split == CT_SPLIT_TEST
                      ? "test" : "train", dir, files.n, c, h, w);
    if (bad && at > 0 && (size_t)at < sizeof name)
        at += snprintf(name + at, sizeof name - (size_t)at, "; %zu bad image%s skipped, the first: %.600s",
                       bad, bad == 1 ? "" : "s", first_bad);
    if (at > 0 && (size_t)at < sizeof name)
        snprintf(name + at, sizeof name - (size_t)at, ")");
    if ((st = ct_dataset_new(name, c, h, w, CT_STORE_FILES, &ds)))
        goto done;
    ds->n = ds->nfiles = files.n;
    ds->files = files.v;
    ds->labels = labels;
    ds->sums = sums;
    ds->classes = (int)names.n;
    ds->class_names = names.v;
    ds->norm_from_train = 1;
    ds->skipped = bad;
    files.v = NULL;
    names.v = NULL;
    labels = NULL;
    sums = NULL;
    if (split == CT_SPLIT_TRAIN) {
        float *mean = malloc((size_t)c * sizeof *mean), *sd = malloc((size_t)c * sizeof *sd);
        st = !mean || !sd ? ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory")
                          : ct_dataset_compute_norm(ds, mean, sd, c);
        if (!st)
            st = ct_dataset_set_norm(ds, mean, sd, c);
        free(mean);
        free(sd);
        if (st)
            ct_dataset_free(&ds);
    }
    *out = ds;
done:
    ct_free_strings(names.v, names.n);
    ct_free_strings(files.v, files.n);
    free(labels);
    free(is_test);
    free(status);
    ct_free_strings(why, checked);
    free(sums);
    free(train_dir);
    free(dir);
    return st;
}
