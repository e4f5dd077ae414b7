/*
 * tune_use.c - the tuned choices a context uses (tune_use.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "core/sha256.h"
#include "ops/clblast_params.h"
#include "ops/tune_use.h"

/* The table read for a context (an extension slot): for which class */
typedef struct tune_state {
    int loaded;
    ct_kernels cls;
    ct_gemm_path gemm;
    int found;
    ct_tune_device d;
} tune_state;

static void state_free(void *p)
{
    tune_state *s = p;
    ct_tune_device_free(&s->d);
    free(s);
}

static const ct_ext_kind tune_kind = { "tuned choices", state_free };

void ct_tune_identity(const ct_context *ctx, ct_tune_device *d)
{
    memset(d, 0, sizeof *d);
    snprintf(d->device, sizeof d->device, "%s", ctx->dev.name);
    snprintf(d->driver, sizeof d->driver, "%s", ctx->dev.driver_version);
    snprintf(d->platform, sizeof d->platform, "%s", ctx->dev.platform_name);
    snprintf(d->cls, sizeof d->cls, "%s", ct_kernels_str(ctx->cls.kernels));
    /* the host's BLAS matters only where products run on the host */
    if (ctx->cls.gemm == CT_GEMM_HOST)
        snprintf(d->host_blas, sizeof d->host_blas, "%s", ct_host_blas_core());
}

int ct_tune_matches(const ct_context *ctx, const ct_tune_device *d, char *why, size_t cap)
{
    ct_tune_device me;
    ct_tune_identity(ctx, &me);
    const char *what = strcmp(me.device, d->device) ? "device"
                       : strcmp(me.driver, d->driver) ? "driver"
                       : strcmp(me.platform, d->platform) ? "platform"
                       : strcmp(me.cls, d->cls) ? "device class"
                       : strcmp(me.host_blas, d->host_blas) ? "host BLAS" : NULL;
    if (what && cap)
        snprintf(why, cap, "made for %s (driver %s, %s, %s class%s%s); this is %s (driver %s, %s, %s class%s%s): "
                 "the %s differs", d->device, d->driver, d->platform, d->cls, d->host_blas[0] ? ", BLAS " : "",
                 d->host_blas, me.device, me.driver, me.platform, me.cls, me.host_blas[0] ? ", BLAS " : "",
                 me.host_blas, what);
    return what == NULL;
}

char *ct_tune_path(const ct_context *ctx)
{
    if (!ctx->cache_dir)
        return NULL;
    ct_tune_device me;
    ct_tune_identity(ctx, &me);
    ct_sha256 s;
    ct_sha256_init(&s);
    ct_sha256_field(&s, "cltrain tuned 1");
    ct_sha256_field(&s, me.device);
    ct_sha256_field(&s, me.driver);
    ct_sha256_field(&s, me.platform);
    ct_sha256_field(&s, me.cls);
    ct_sha256_field(&s, me.host_blas);
    uint8_t key[32];
    char hex[65];
    ct_sha256_final(&s, key);
    ct_sha256_hex(key, hex);
    size_t n = strlen(ctx->cache_dir) + 96;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/tuned-%.32s.json", ctx->cache_dir, hex);
    return p;
}

/* Parses the file at path into *d if it is ctx's table */
static int read_path(ct_context *ctx, const char *path, ct_tune_device *d, int *found)
{
    memset(d, 0, sizeof *d);
    *found = 0;
    size_t n = 0;
    char *text = ct_read_file(path, &n);
    if (!text) {
        if (errno == ENOENT)
            return CT_OK;
        ct_log(ctx, CT_LOG_WARN, "tuned choices: cannot read %s: %s; using the built-in rules", path,
               strerror(errno));
        return CT_OK;
    }
    ct_tune_file f;
    char err[512], why[1024];
    int st = ct_tune_file_parse(text, n, &f, err, sizeof err);
    free(text);
    if (st == CT_ERR_NO_MEMORY)
        return ct_fail(ctx, st, "tuned choices: out of host memory reading %s", path);
    if (st) {
        ct_log(ctx, CT_LOG_WARN, "tuned choices: ignoring %s: %s. HINT: `cltrain tune` writes it again",
               path, err);
        return CT_OK;
    }
    if (f.n != 1 || !ct_tune_matches(ctx, &f.dev[0], why, sizeof why)) {
        ct_log(ctx, CT_LOG_WARN, "tuned choices: ignoring %s: %s", path,
               f.n != 1 ? "it holds other than one device" : why);
        ct_tune_file_free(&f);
        return CT_OK;
    }
    *d = f.dev[0];
    f.n = 0;
    ct_tune_file_free(&f);
    *found = 1;
    return CT_OK;
}

int ct_tune_read(ct_context *ctx, ct_tune_device *d, int *found)
{
    memset(d, 0, sizeof *d);
    *found = 0;
    char *path = ct_tune_path(ctx);
    if (!path)
        return CT_OK;
    int st = read_path(ctx, path, d, found);
    free(path);
    return st;
}

int ct_tune_apply_clblast(ct_context *ctx, const ct_tune_device *d)
{
    for (int i = 0; i < d->nclblast; i++) {
        int s = ct_clblast_params_set(ctx->device, &d->clblast[i]);
        if (s)
            return ct_fail(ctx, CT_ERR_CORRUPT, "tuned choices: CLBlast refused the %s parameters for %s "
                           "(status %d). HINT: `cltrain tune --retune` measures them again", d->clblast[i].kernel,
                           ctx->dev.name, s);
    }
    return CT_OK;
}

static int tune_off(void)
{
    const char *env = getenv("CLTRAIN_TUNE");
    return env && (!strcmp(env, "off") || !strcmp(env, "0"));
}

const ct_tune_device *ct_tune_table(ct_context *ctx)
{
    if (ctx->tune_bypass || tune_off())
        return NULL;
    tune_state *s = ct_context_ext(ctx, &tune_kind);
    if (!s) {
        if (!(s = calloc(1, sizeof *s)))
            return NULL;
        if (ct_context_ext_set(ctx, &tune_kind, s)) {
            free(s);
            return NULL;
        }
    }
    if (s->loaded && s->cls == ctx->cls.kernels && s->gemm == ctx->cls.gemm)
        return s->found ? &s->d : NULL;
    ct_tune_device_free(&s->d);
    s->loaded = 1, s->cls = ctx->cls.kernels, s->gemm = ctx->cls.gemm;
    if (ct_tune_read(ctx, &s->d, &s->found) || !s->found)
        return s->found = 0, NULL;
    /* imported entries not yet checked here are not used */
    size_t kept = 0;
    for (size_t i = 0; i < s->d.ngemm; i++)
        if (s->d.gemm[i].checked)
            s->d.gemm[kept++] = s->d.gemm[i];
    s->d.ngemm = kept;
    if (s->d.nclblast && !s->d.clblast_checked)
        s->d.nclblast = 0;
    if (s->d.nclblast && ctx->cls.gemm == CT_GEMM_CLBLAST && ct_tune_apply_clblast(ctx, &s->d)) {
        ct_log(ctx, CT_LOG_WARN, "%s; using CLBlast's own parameters", ctx->last_error);
        s->d.nclblast = 0;
    }
    return &s->d;
}

const ct_tune_gemm *ct_tune_lookup(ct_context *ctx, int ta, int tb, size_t m, size_t n, size_t k)
{
    const ct_tune_device *d = ct_tune_table(ctx);
    return d ? ct_tune_device_find(d, 0, ta, tb, m, n, k) : NULL;
}

ct_tune_choice ct_tune_choose(ct_context *ctx, int conv, int ta, int tb, size_t m, size_t n, size_t k, int a,
                              int b)
{
    int forced = ctx->gemm_force.pick;
    if (forced == a || forced == b)
        return (ct_tune_choice){ forced, ctx->gemm_force.tiles, ctx->gemm_force.splits };
    const ct_tune_gemm *g = conv ? ct_tune_lookup_conv(ctx, conv, m, n, k) : ct_tune_lookup(ctx, ta, tb, m, n, k);
    if (!g)
        return (ct_tune_choice){ CT_PICK_NONE, 0, 1 };
    return (ct_tune_choice){ (int)g->pick, g->tiles, g->splits };
}

const ct_tune_gemm *ct_tune_lookup_conv(ct_context *ctx, int conv, size_t m, size_t n, size_t k)
{
    const ct_tune_device *d = ct_tune_table(ctx);
    return d ? ct_tune_device_find(d, conv, 0, 0, m, n, k) : NULL;
}

void ct_tune_forget(ct_context *ctx)
{
    tune_state *s = ct_context_ext(ctx, &tune_kind);
    if (s) {
        ct_tune_device_free(&s->d);
        s->loaded = 0, s->found = 0;
    }
}

int ct_tune_write(ct_context *ctx, const ct_tune_device *d, int replace)
{
    char *path = ct_tune_path(ctx);
    if (!path)
        return ct_fail(ctx, CT_ERR_UNSUPPORTED, "tuned choices: the kernel cache is off, so there is nowhere "
                       "to keep them. HINT: set CLTRAIN_CACHE_DIR to a writable directory");
    size_t pn = strlen(path) + 64;
    char *lock = malloc(pn), *tmp = malloc(pn);
    int st = CT_OK, lfd = -1;
    ct_tune_device cur;
    memset(&cur, 0, sizeof cur);
    if (!lock || !tmp) {
        st = ct_fail(ctx, CT_ERR_NO_MEMORY, "out of host memory");
        goto done;
    }
    snprintf(lock, pn, "%.*s.lock", (int)(strlen(path) - 5), path);
    snprintf(tmp, pn, "%s.tmp.%ld", path, (long)getpid());
    lfd = open(lock, O_RDWR | O_CREAT, 0644);
    if (lfd < 0 || flock(lfd, LOCK_EX)) {
        st = ct_fail(ctx, CT_ERR_IO, "tuned choices: cannot lock %s: %s", lock, strerror(errno));
        goto done;
    }
    int found = 0;
    if (!replace && (st = read_path(ctx, path, &cur, &found)))
        goto done;
    if (!found)
        ct_tune_identity(ctx, &cur);
    if ((st = ct_tune_device_merge(&cur, d))) {
        st = ct_fail(ctx, st, "tuned choices: %s", st == CT_ERR_NO_MEMORY ? "out of host memory"
                                                                          : "more shapes than a table holds");
        goto done;
    }
    if (replace) {
        memcpy(cur.clblast, d->clblast, sizeof cur.clblast);
        cur.nclblast = d->nclblast, cur.clblast_checked = d->clblast_checked;
    }
    cur.tuned = (int64_t)time(NULL);
    cur.has_verdicts = 0;
    ct_tune_file f = { &cur, 1 };
    char *text = ct_tune_file_format(&f);
    if (!text) {
        st = ct_fail(ctx, CT_ERR_NO_MEMORY, "out of host memory");
        goto done;
    }
    FILE *fp = fopen(tmp, "w");
    int ok = fp && fputs(text, fp) >= 0 && fputc('\n', fp) != EOF && !fflush(fp) && !fsync(fileno(fp));
    int saved = errno;
    if (fp && fclose(fp))
        ok = 0, saved = errno;
    free(text);
    if (!ok || rename(tmp, path)) {
        if (ok)
            saved = errno;
        unlink(tmp);
        st = ct_fail(ctx, CT_ERR_IO, "tuned choices: cannot write %s: %s", path, strerror(saved));
        goto done;
    }
    ct_tune_forget(ctx);
done:
    if (lfd >= 0)
        close(lfd);
    ct_tune_device_free(&cur);
    free(lock);
    free(tmp);
    free(path);
    return st;
}
