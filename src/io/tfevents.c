/*
 * tfevents.c - TensorBoard event files (see tfevents.h). The Event messages
 * are packed by protobuf-c from src/io/tfevents.proto (generated at build
 * time); the framing and its CRC-32C are here and in src/core/crc32c.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/crc32c.h"
#include "core/error.h"
#include "core/util.h"
#include "io/tfevents.h"
#include "tfevents.pb-c.h"

struct ct_tfevents {
    FILE *f;
    char *path;
    int failed;      /* errno of the first failure; 0: none */
    uint8_t *buf;    /* one framed record */
    size_t cap;
};

const char *ct_tfevents_path(const ct_tfevents *w)
{
    return w ? w->path : NULL;
}

static void put_le(uint8_t *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

void ct_tfevents_frame(const void *data, size_t len, uint8_t *out)
{
    put_le(out, (uint64_t)len, 8);
    put_le(out + 8, ct_crc32c_mask(ct_crc32c(0, out, 8)), 4);
    if (len)
        memcpy(out + 12, data, len);
    put_le(out + 12 + len, ct_crc32c_mask(ct_crc32c(0, data, len)), 4);
}

static int failure(ct_tfevents *w, int err)
{
    if (!w->failed)
        w->failed = err ? err : EIO;
    return ct_fail(NULL, CT_ERR_IO, "cannot write TensorBoard events to %s: %s", w->path,
                   strerror(w->failed));
}

static double wall_time(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Packs, frames and writes one event (into the stdio buffer). */
static int write_event(ct_tfevents *w, Tensorboard__Event *ev)
{
    if (w->failed)
        return failure(w, w->failed);
    ev->wall_time = wall_time();
    size_t n = tensorboard__event__get_packed_size(ev);
    if (n + CT_TFEVENTS_FRAMING > w->cap) {
        size_t cap = (n + CT_TFEVENTS_FRAMING) * 2;
        uint8_t *b = realloc(w->buf, cap);
        if (!b)
            return ct_fail(NULL, CT_ERR_NO_MEMORY, "out of host memory writing %s", w->path);
        w->buf = b;
        w->cap = cap;
    }
    /* the data goes after the 12-byte header; framing it in place */
    tensorboard__event__pack(ev, w->buf + 12);
    put_le(w->buf, (uint64_t)n, 8);
    put_le(w->buf + 8, ct_crc32c_mask(ct_crc32c(0, w->buf, 8)), 4);
    put_le(w->buf + 12 + n, ct_crc32c_mask(ct_crc32c(0, w->buf + 12, n)), 4);
    errno = 0;
    if (fwrite(w->buf, 1, n + CT_TFEVENTS_FRAMING, w->f) != n + CT_TFEVENTS_FRAMING)
        return failure(w, errno);
    return CT_OK;
}

int ct_tfevents_flush(ct_tfevents *w)
{
    if (w->failed)
        return failure(w, w->failed);
    errno = 0;
    if (fflush(w->f) || fsync(fileno(w->f)))
        return failure(w, errno);
    return CT_OK;
}

int ct_tfevents_close(ct_tfevents **pw)
{
    if (!pw || !*pw)
        return CT_OK;
    ct_tfevents *w = *pw;
    int st = ct_tfevents_flush(w);
    errno = 0;
    if (fclose(w->f) && !st)
        st = failure(w, errno);
    free(w->path);
    free(w->buf);
    free(w);
    *pw = NULL;
    return st;
}

/* A new file in dir: TensorFlow's name, with a suffix when it is taken. */
static int create_file(ct_tfevents *w, const char *dir)
{
    char host[256];
    if (gethostname(host, sizeof host) || !host[0])
        snprintf(host, sizeof host, "localhost");
    host[sizeof host - 1] = '\0';
    for (char *c = host; *c; c++) /* a name, never a path */
        if (*c == '/')
            *c = '_';
    long long now = (long long)time(NULL);
    size_t len = strlen(dir) + strlen(host) + 64;
    if (!(w->path = malloc(len)))
        return ct_fail(NULL, CT_ERR_NO_MEMORY, "out of host memory");
    for (int k = 0; k < 1000; k++) {
        size_t d = strlen(dir);
        while (d > 1 && dir[d - 1] == '/') /* "runs/" names runs/events.out..., not runs//events.out... */
            d--;
        int n = snprintf(w->path, len, "%.*s/events.out.tfevents.%lld.%s", (int)d, dir, now, host);
        if (k)
            snprintf(w->path + n, len - (size_t)n, ".%d", k);
        int fd = open(w->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0 && errno == EEXIST)
            continue;
        if (fd < 0)
            return ct_fail(NULL, CT_ERR_IO, "cannot create %s: %s. HINT: --tensorboard needs a directory "
                           "it can write", w->path, strerror(errno));
        if (!(w->f = fdopen(fd, "wb"))) {
            int e = errno;
            close(fd);
            unlink(w->path);
            return ct_fail(NULL, CT_ERR_IO, "cannot open %s: %s", w->path, strerror(e));
        }
        return CT_OK;
    }
    return ct_fail(NULL, CT_ERR_IO, "%s: a thousand event files of this second and host exist already. "
                   "HINT: use another directory", dir);
}

int ct_tfevents_open(const char *dir, ct_tfevents **out)
{
    CT_VALIDATE(NULL, dir && *dir && out);
    *out = NULL;
    ct_tfevents *w = calloc(1, sizeof *w);
    if (!w)
        return ct_fail(NULL, CT_ERR_NO_MEMORY, "out of host memory");
    int st;
    if (ct_make_dirs(dir)) {
        st = ct_fail(NULL, CT_ERR_IO, "cannot create the directory %s: %s. HINT: --tensorboard needs a "
                     "directory it can create or write", dir, strerror(errno));
        goto fail;
    }
    if ((st = create_file(w, dir)))
        goto fail;
    Tensorboard__Event ev = TENSORBOARD__EVENT__INIT;
    ev.what_case = TENSORBOARD__EVENT__WHAT_FILE_VERSION;
    ev.file_version = (char *)CT_TFEVENTS_VERSION;
    /* the version on disk now: a directory that fills up fails here, not later */
    if ((st = write_event(w, &ev)) || (st = ct_tfevents_flush(w))) {
        fclose(w->f);
        unlink(w->path);
        w->f = NULL;
        goto fail;
    }
    *out = w;
    return CT_OK;
fail:
    free(w->path);
    free(w->buf);
    free(w);
    return st;
}

/* An event holding one summary value. */
static int write_value(ct_tfevents *w, int64_t step, Tensorboard__Summary__Value *v)
{
    Tensorboard__Summary__Value *values[1] = { v };
    Tensorboard__Summary sum = TENSORBOARD__SUMMARY__INIT;
    sum.n_value = 1;
    sum.value = values;
    Tensorboard__Event ev = TENSORBOARD__EVENT__INIT;
    ev.step = step;
    ev.what_case = TENSORBOARD__EVENT__WHAT_SUMMARY;
    ev.summary = &sum;
    return write_event(w, &ev);
}

int ct_tfevents_scalar(ct_tfevents *w, const char *tag, int64_t step, double value)
{
    CT_VALIDATE(NULL, w && tag);
    Tensorboard__Summary__Value v = TENSORBOARD__SUMMARY__VALUE__INIT;
    v.tag = (char *)tag;
    v.value_case = TENSORBOARD__SUMMARY__VALUE__VALUE_SIMPLE_VALUE;
    v.simple_value = (float)value;
    return write_value(w, step, &v);
}

int ct_tfevents_histogram(ct_tfevents *w, const char *tag, int64_t step, const float *x, size_t n,
                          int buckets)
{
    CT_VALIDATE(NULL, w && tag && (x || !n) && buckets >= 1);
    Tensorboard__HistogramProto h = TENSORBOARD__HISTOGRAM_PROTO__INIT;
    h.min = INFINITY;
    h.max = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        double v = x[i];
        if (!isfinite(v))
            continue;
        h.min = v < h.min ? v : h.min;
        h.max = v > h.max ? v : h.max;
        h.num += 1;
        h.sum += v;
        h.sum_squares += v * v;
    }
    if (h.num == 0)
        return CT_OK;
    int nb = h.max > h.min ? buckets : 1;
    double width = (h.max - h.min) / nb;
    double *mem = calloc(2 * (size_t)nb, sizeof *mem);
    if (!mem)
        return ct_fail(NULL, CT_ERR_NO_MEMORY, "out of host memory writing %s", w->path);
    h.n_bucket_limit = h.n_bucket = (size_t)nb;
    h.bucket_limit = mem;
    h.bucket = mem + nb;
    for (int b = 0; b < nb - 1; b++)
        h.bucket_limit[b] = h.min + width * (b + 1);
    h.bucket_limit[nb - 1] = DBL_MAX;
    for (size_t i = 0; i < n; i++) {
        double v = x[i];
        if (!isfinite(v))
            continue;
        double k = nb > 1 ? floor((v - h.min) / width) : 0;
        h.bucket[k < 0 ? 0 : k > nb - 1 ? nb - 1 : (int)k] += 1;
    }
    Tensorboard__Summary__Value v = TENSORBOARD__SUMMARY__VALUE__INIT;
    v.tag = (char *)tag;
    v.value_case = TENSORBOARD__SUMMARY__VALUE__VALUE_HISTO;
    v.histo = &h;
    int st = write_value(w, step, &v);
    free(mem);
    return st;
}
