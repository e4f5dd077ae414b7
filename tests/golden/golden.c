/*
 * golden - checks ops against PyTorch golden vectors.
 *
 *   golden [--gemm host|clblast] [--device SEL] [--precision fp32|bf16|fp16] DIR_OR_FILE...
 *
 * Every *.safetensors file in each directory (or each file named) is one
 * case; its metadata "op" picks the adapter (GOLDEN_OPS in golden.h), which
 * checks both the host reference and the OpenCL kernels against PyTorch's
 * numbers. A file whose op has no adapter fails. Exit 1 on any failure or
 * when no file was found.
 */
#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "golden.h"

struct golden {
    ct_context *ctx;
    ct_st_file *file;
    const char *path;
    int failed;
    int comparisons;
    double max_err; /* worst error as a fraction of its tolerance */
    char message[1024];
    void **host;
    size_t nhost, caphost;
    cl_mem *dev;
    size_t ndev, capdev;
};

ct_context *golden_ctx(golden *g) { return g->ctx; }

const char *golden_meta(golden *g, const char *key)
{
    return ct_st_meta(g->file, key);
}

const char *golden_op(golden *g)
{
    const char *op = golden_meta(g, "op");
    return op ? op : "";
}

void golden_failf(golden *g, const char *fmt, ...)
{
    if (!g->failed) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(g->message, sizeof g->message, fmt, ap);
        va_end(ap);
    }
    g->failed = 1;
}

int golden_meta_int(golden *g, const char *key, int fallback)
{
    const char *v = golden_meta(g, key);
    if (!v)
        return fallback;
    char *end = NULL;
    long x = strtol(v, &end, 10);
    if (end == v || *end) {
        golden_failf(g, "metadata %s='%s' is not an integer", key, v);
        return fallback;
    }
    return (int)x;
}

double golden_meta_double(golden *g, const char *key, double fallback)
{
    const char *v = golden_meta(g, key);
    if (!v)
        return fallback;
    char *end = NULL;
    double x = strtod(v, &end);
    if (end == v || *end) {
        golden_failf(g, "metadata %s='%s' is not a number", key, v);
        return fallback;
    }
    return x;
}

int golden_meta_bool(golden *g, const char *key, int fallback)
{
    const char *v = golden_meta(g, key);
    if (!v || !strcmp(v, "null"))
        return fallback;
    if (!strcmp(v, "true") || !strcmp(v, "True"))
        return 1;
    if (!strcmp(v, "false") || !strcmp(v, "False"))
        return 0;
    golden_failf(g, "metadata %s='%s' is not true or false", key, v);
    return fallback;
}

static void *track(golden *g, void *p)
{
    if (!p)
        return NULL;
    if (g->nhost == g->caphost) {
        size_t cap = g->caphost ? 2 * g->caphost : 32;
        void **grown = realloc(g->host, cap * sizeof *grown);
        if (!grown) {
            free(p);
            return NULL;
        }
        g->host = grown;
        g->caphost = cap;
    }
    g->host[g->nhost++] = p;
    return p;
}

double *golden_host(golden *g, size_t n)
{
    double *p = track(g, calloc(n ? n : 1, sizeof(double)));
    if (!p) {
        golden_failf(g, "out of host memory");
        static double dummy[1];
        return dummy;
    }
    return p;
}

double *golden_abs(golden *g, const double *x, size_t n)
{
    double *a = track(g, calloc(n ? n : 1, sizeof(double)));
    if (!a) {
        golden_failf(g, "out of host memory");
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        a[i] = fabs(x[i]);
    return a;
}

double golden_prec_bound(golden *g, size_t terms, const double *abs_ref, size_t n, double amax)
{
    return ck_prec_extra(ct_context_precision(g->ctx), terms, ck_amax(abs_ref, n), amax);
}

int golden_has(golden *g, const char *name)
{
    return ct_st_find(g->file, name) != NULL;
}

double *golden_tensor(golden *g, const char *name, size_t *numel, int *shape, int *ndim)
{
    const ct_st_tensor *t = ct_st_find(g->file, name);
    if (!t) {
        golden_failf(g, "the file has no tensor '%s'", name);
        return NULL;
    }
    double *x = golden_host(g, t->numel);
    if (ct_st_to_double(t, x)) {
        golden_failf(g, "%s", ct_last_error());
        return NULL;
    }
    if (numel)
        *numel = t->numel;
    if (ndim)
        *ndim = t->ndim;
    if (shape)
        for (int i = 0; i < t->ndim; i++)
            shape[i] = (int)t->shape[i];
    return x;
}

static ct_buf dev_alloc(golden *g, const double *x, size_t n)
{
    ct_buf b = { NULL, 0 };
    float *h = calloc(n ? n : 1, sizeof *h);
    cl_mem m = NULL;
    int st = h ? ct_buffer_create(g->ctx, (n ? n : 1) * sizeof(float), &m) : CT_ERR_NO_MEMORY;
    for (size_t i = 0; x && h && i < n; i++)
        h[i] = (float)x[i];
    if (!st)
        st = ct_buffer_write(g->ctx, m, 0, (n ? n : 1) * sizeof(float), h);
    free(h);
    if (!st && g->ndev == g->capdev) {
        size_t cap = g->capdev ? 2 * g->capdev : 32;
        cl_mem *grown = realloc(g->dev, cap * sizeof *grown);
        if (grown) {
            g->dev = grown;
            g->capdev = cap;
        } else {
            st = CT_ERR_NO_MEMORY;
        }
    }
    if (st) {
        golden_status(g, st, "allocating a device buffer");
        if (m)
            clReleaseMemObject(m);
        return b;
    }
    g->dev[g->ndev++] = m;
    b.mem = m;
    return b;
}

ct_buf golden_dev(golden *g, const double *x, size_t n) { return dev_alloc(g, x, n); }
ct_buf golden_dev_zero(golden *g, size_t n) { return dev_alloc(g, NULL, n); }

int golden_status(golden *g, int status, const char *what)
{
    if (status)
        golden_failf(g, "%s failed: %s (%s)", what, ct_status_str(status),
                     ct_context_last_error(g->ctx));
    return status;
}

static int compare(golden *g, const char *what, const double *got, const char *expected,
                   double atol, double rtol)
{
    const ct_st_tensor *t = ct_st_find(g->file, expected);
    if (!t) {
        golden_failf(g, "%s: the file has no tensor '%s'", what, expected);
        return 0;
    }
    double *want = golden_tensor(g, expected, NULL, NULL, NULL);
    if (!want)
        return 0;
    g->comparisons++;
    for (size_t i = 0; i < t->numel; i++) {
        double err = fabs(got[i] - want[i]), tol = atol + rtol * fabs(want[i]);
        if (err / tol > g->max_err || isnan(err))
            g->max_err = isnan(err) ? INFINITY : err / tol;
        if (!(err <= tol)) {
            golden_failf(g, "%s: element %zu of %zu is %.8g, PyTorch gives %.8g (|diff| %.3g > "
                         "%.3g + %.3g*|expected|)", what, i, t->numel, got[i], want[i], err, atol,
                         rtol);
            return 0;
        }
    }
    return 1;
}

int golden_expect_host(golden *g, const char *what, const double *got, const char *expected,
                       double atol, double rtol)
{
    char label[256];
    snprintf(label, sizeof label, "reference %s", what);
    return compare(g, label, got, expected, atol, rtol);
}

int golden_expect_dev(golden *g, const char *what, ct_buf got, const char *expected, double atol,
                      double rtol)
{
    const ct_st_tensor *t = ct_st_find(g->file, expected);
    if (!t) {
        golden_failf(g, "%s: the file has no tensor '%s'", what, expected);
        return 0;
    }
    if (!got.mem)
        return 0;
    size_t n = t->numel;
    float *h = malloc((n ? n : 1) * sizeof *h);
    double *d = golden_host(g, n);
    if (!h || golden_status(g, ct_buffer_read(g->ctx, got.mem, got.off * sizeof(float),
                                              n * sizeof(float), h), what)) {
        free(h);
        return 0;
    }
    for (size_t i = 0; i < n; i++)
        d[i] = h[i];
    free(h);
    char label[256];
    snprintf(label, sizeof label, "OpenCL %s", what);
    return compare(g, label, d, expected, atol, rtol);
}

typedef void (*golden_fn)(golden *g);
static const struct {
    const char *op;
    golden_fn fn;
} adapters[] = {
#define GOLDEN_X(op, fn) { op, fn },
    GOLDEN_OPS(GOLDEN_X)
#undef GOLDEN_X
};

static int run_file(ct_context *ctx, const char *path)
{
    golden g;
    memset(&g, 0, sizeof g);
    g.ctx = ctx;
    g.path = path;
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    if (ct_st_read(path, &g.file)) {
        printf("FAIL %-28s %s\n", base, ct_last_error());
        return 0;
    }
    const char *op = golden_op(&g);
    golden_fn fn = NULL;
    for (size_t i = 0; i < CT_ARRAY_LEN(adapters); i++)
        if (!strcmp(adapters[i].op, op))
            fn = adapters[i].fn;
    if (!fn)
        golden_failf(&g, "no adapter for op '%s'", op);
    else
        fn(&g);
    ct_context_finish(ctx);
    if (!g.failed && g.comparisons == 0)
        golden_failf(&g, "the adapter compared nothing");
    if (g.failed)
        printf("FAIL %-28s %-22s %s\n", base, op, g.message);
    else
        printf("ok   %-28s %-22s %2d comparisons, worst %.3g of tolerance\n", base, op,
               g.comparisons, g.max_err);
    for (size_t i = 0; i < g.nhost; i++)
        free(g.host[i]);
    for (size_t i = 0; i < g.ndev; i++)
        clReleaseMemObject(g.dev[i]);
    free(g.host);
    free(g.dev);
    ct_st_free(&g.file);
    return !g.failed;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcmp(s + n - m, suffix);
}

int main(int argc, char **argv)
{
    const char *gemm = NULL, *device = NULL, *precision = NULL;
    char **paths = NULL;
    size_t np = 0, cap = 0;
    int status = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--gemm") && i + 1 < argc) {
            gemm = argv[++i];
            continue;
        }
        if (!strcmp(argv[i], "--device") && i + 1 < argc) {
            device = argv[++i];
            continue;
        }
        if (!strcmp(argv[i], "--precision") && i + 1 < argc) {
            precision = argv[++i];
            continue;
        }
        struct stat sb;
        if (stat(argv[i], &sb)) {
            fprintf(stderr, "golden: cannot open %s\n", argv[i]);
            return 1;
        }
        DIR *d = S_ISDIR(sb.st_mode) ? opendir(argv[i]) : NULL;
        struct dirent *e;
        while (1) {
            const char *name = NULL;
            char buf[4096];
            if (d) {
                if (!(e = readdir(d)))
                    break;
                if (!ends_with(e->d_name, ".safetensors"))
                    continue;
                snprintf(buf, sizeof buf, "%s/%s", argv[i], e->d_name);
                name = buf;
            } else {
                name = argv[i];
            }
            if (np == cap) {
                cap = cap ? 2 * cap : 64;
                char **grown = realloc(paths, cap * sizeof *grown);
                if (!grown)
                    return 1;
                paths = grown;
            }
            paths[np++] = strdup(name);
            if (!d)
                break;
        }
        if (d)
            closedir(d);
    }
    if (np == 0) {
        fprintf(stderr, "golden: no .safetensors files given\nusage: golden [--gemm host|clblast] "
                "[--device SEL] DIR_OR_FILE...\n");
        return 1;
    }
    qsort(paths, np, sizeof *paths, cmp_str);

    ct_context_options o;
    ct_context_defaults(&o);
    o.device = device;
    o.lazy_kernels = 1;
    ct_context *ctx = NULL;
    if (ct_context_create(&o, &ctx)) {
        fprintf(stderr, "golden: %s\n", ct_last_error());
        return 1;
    }
    if (gemm && ct_gemm_set_path(ctx, !strcmp(gemm, "host") ? CT_GEMM_HOST : !strcmp(gemm, "clblast")
                                                     ? CT_GEMM_CLBLAST : (ct_gemm_path)99)) {
        fprintf(stderr, "golden: --gemm %s: %s\n", gemm, ct_context_last_error(ctx));
        ct_context_free(&ctx);
        return 2;
    }
    if (precision && strcmp(precision, "fp32")) {
        ct_precision p = !strcmp(precision, "bf16") ? CT_PRECISION_BF16 : !strcmp(precision, "fp16")
                                                                               ? CT_PRECISION_FP16 : (ct_precision)99;
        if (ct_context_set_precision(ctx, p)) {
            printf("golden: --precision %s: %s: skipped\n", precision, ct_context_last_error(ctx));
            ct_context_free(&ctx);
            for (size_t i = 0; i < np; i++)
                free(paths[i]);
            free(paths);
            return 77;
        }
    }
    int failed = 0;
    for (size_t i = 0; i < np; i++) {
        failed += !run_file(ctx, paths[i]);
        free(paths[i]);
    }
    free(paths);
    printf("%zu files, %d failed (GEMM path %s, %s)\n", np, failed,
           ct_gemm_path_str(ct_gemm_get_path(ctx)), ct_precision_str(ct_context_precision(ctx)));
    ct_context_free(&ctx);
    status = failed ? 1 : 0;
    return status;
}
