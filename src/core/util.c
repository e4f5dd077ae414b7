/*
 * util.c - small host helpers: strings, whole-file reads, directories,
 * atomic file writes, a monotonic clock.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/error.h"
#include "core/util.h"

char *ct_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

char *ct_read_file_max(const char *path, size_t max, size_t *size)
{
    errno = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t cap = 0, n = 0;
    int fail = 0;
    for (;;) {
        if (cap - n < 65536) {
            size_t ncap = cap ? (cap <= SIZE_MAX / 4 ? cap * 2 : SIZE_MAX / 2) : 65536;
            char *nb = realloc(buf, ncap + 1);
            if (!nb) {
                fail = ENOMEM;
                break;
            }
            buf = nb;
            cap = ncap;
        }
        size_t want = cap - n; /* n <= max here: at most one byte past max is read */
        if (max - n < want)
            want = max - n + 1;
        size_t r = fread(buf + n, 1, want, f);
        n += r;
        if (r == 0)
            break;
        if (n > max) {
            fail = EFBIG;
            break;
        }
    }
    if (!fail && ferror(f))
        fail = EIO;
    fclose(f);
    if (fail) {
        free(buf);
        errno = fail;
        return NULL;
    }
    buf[n] = '\0';
    if (size)
        *size = n;
    return buf;
}

char *ct_read_file(const char *path, size_t *size)
{
    return ct_read_file_max(path, SIZE_MAX, size);
}

int ct_make_dirs(const char *path)
{
    char *p = ct_strdup(path);
    if (!p)
        return -1;
    for (char *s = p + 1; *s; s++) {
        if (*s == '/') {
            *s = '\0';
            if (mkdir(p, 0755) && errno != EEXIST) {
                int e = errno;
                free(p);
                errno = e;
                return -1;
            }
            *s = '/';
        }
    }
    int r = mkdir(p, 0755), e = errno;
    free(p);
    errno = e;
    return r && e != EEXIST ? -1 : 0;
}

double ct_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double ct_median(double *t, size_t n)
{
    qsort(t, n, sizeof *t, cmp_double);
    return t[n / 2];
}

/* ---- atomic writes: a temporary file, fsync, rename, fsync of the directory ---- */

int ct_atomic_open(ct_atomic_file *a, const char *path)
{
    memset(a, 0, sizeof *a);
    size_t tn = strlen(path) + 32;
    a->path = ct_strdup(path);
    a->tmp = malloc(tn);
    if (!a->path || !a->tmp) {
        ct_atomic_abort(a);
        return ct_fail(NULL, CT_ERR_NO_MEMORY, "out of host memory writing %s", path);
    }
    snprintf(a->tmp, tn, "%s.tmp.%ld", path, (long)getpid());
    a->f = fopen(a->tmp, "wb");
    if (!a->f) {
        int saved = errno;
        int st = ct_fail(NULL, CT_ERR_IO, "cannot create %s: %s", a->tmp, strerror(saved));
        ct_atomic_abort(a);
        return st;
    }
    return CT_OK;
}

void ct_atomic_abort(ct_atomic_file *a)
{
    if (a->f)
        fclose(a->f);
    if (a->f && a->tmp)
        unlink(a->tmp);
    free(a->tmp);
    free(a->path);
    memset(a, 0, sizeof *a);
}

int ct_atomic_commit(ct_atomic_file *a, int write_errno)
{
    int saved = write_errno, bad = write_errno != 0;
    if (!bad && fflush(a->f))
        bad = 1, saved = errno;
    if (!bad && fsync(fileno(a->f)))
        bad = 1, saved = errno;
    if (fclose(a->f) && !bad)
        bad = 1, saved = errno;
    a->f = NULL;
    int st = CT_OK;
    if (bad) {
        unlink(a->tmp);
        st = ct_fail(NULL, CT_ERR_IO, "cannot write %s: %s; the previous file (if any) is untouched",
                     a->path, strerror(saved ? saved : EIO));
    } else if (rename(a->tmp, a->path)) {
        saved = errno;
        unlink(a->tmp);
        st = ct_fail(NULL, CT_ERR_IO, "cannot rename %s to %s: %s", a->tmp, a->path, strerror(saved));
    } else {
        /* make the rename itself durable */
        char *slash = strrchr(a->tmp, '/');
        if (slash)
            slash[1] = '\0';
        int dfd = open(slash ? a->tmp : ".", O_RDONLY);
        if (dfd >= 0) {
            fsync(dfd);
            close(dfd);
        }
    }
    ct_atomic_abort(a);
    return st;
}
