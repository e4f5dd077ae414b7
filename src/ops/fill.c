/*
 * fill.c - fills and copies (cl_kernels/fill.cl).
 */
#include "ops/ops.h"

#include "host/eltwise_host.h"

int ct_fill(ct_context *ctx, ct_buf x, size_t n, float value)
{
    if (n > UINT32_MAX)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "ct_fill: %zu elements is too many", n);
    if (ct_eltwise_host_ok(ctx, n))
        return ct_host_fill(ctx, x, n, value);
    cl_uint nn = (cl_uint)n;
    size_t g[1] = { n };
    ct_launch_bytes(ctx, 0, n * sizeof(float));
    return CT_RUN(ctx, CT_PROG_fill, "fill_f32", 1, g, NULL, CT_BUF(x), CT_ARG(nn), CT_ARG(value));
}

int ct_copy(ct_context *ctx, ct_buf dst, ct_buf src, size_t n)
{
    if (n > UINT32_MAX)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "ct_copy: %zu elements is too many", n);
    if (ct_eltwise_host_ok(ctx, n))
        return ct_host_copy(ctx, dst, src, n);
    cl_uint nn = (cl_uint)n;
    size_t g[1] = { n };
    ct_launch_bytes(ctx, n * sizeof(float), n * sizeof(float));
    return CT_RUN(ctx, CT_PROG_fill, "copy_f32", 1, g, NULL, CT_BUF(dst), CT_BUF(src), CT_ARG(nn));
}

int ct_ones(ct_context *ctx, size_t n, ct_buf *out)
{
    if (ctx->ones_n < n) {
        size_t want = 1024;
        while (want < n)
            want *= 2;
        cl_mem m = NULL;
        int st = ct_buffer_create(ctx, want * sizeof(float), &m);
        ct_buf b = { m, 0 };
        if (!st && (st = ct_fill(ctx, b, want, 1.0f)))
            clReleaseMemObject(m);
        if (st)
            return st;
        if (ctx->ones)
            clReleaseMemObject(ctx->ones); /* in-order queue: earlier users have it queued already */
        ctx->ones = m;
        ctx->ones_n = want;
    }
    out->mem = ctx->ones;
    out->off = 0;
    return CT_OK;
}

cl_uint2 ct_fastdiv(uint32_t d)
{
    cl_uint2 r = { { 0, 0 } };
    if (d <= 1)
        return r;
    unsigned l = 0;
    while (((uint64_t)1 << l) < d)
        l++;
    uint64_t p = (uint64_t)1 << (31 + l);
    r.s[0] = (cl_uint)((p + d - 1) / d);
    r.s[1] = l - 1;
    return r;
}

int ct_rows_check(ct_context *ctx, const char *who, size_t R, size_t F)
{
    if (F == 0)
        return ct_fail(ctx, CT_ERR_SHAPE, "%s: rows of 0 features", who);
    if (R > UINT32_MAX / F)
        return ct_fail(ctx, CT_ERR_SHAPE, "%s: (R, F) = (%zu, %zu) has 2^32 elements or more. "
                       "HINT: split the batch", who, R, F);
    return CT_OK;
}

void ct_slices(size_t total, size_t want, size_t least, size_t *S, size_t *L)
{
    if (total == 0) { /* nothing to sum: one empty slice */
        *S = *L = 1;
        return;
    }
    size_t most = (total + least - 1) / least, s = want < most ? want : most;
    if (s == 0)
        s = 1;
    *L = (total + s - 1) / s;
    *S = (total + *L - 1) / *L;
}

int ct_row_range(ct_context *ctx, int prog, const char *name, size_t wd, size_t rows, size_t g[2], size_t l[2])
{
    ct_kernel_entry *e;
    int st = ct_kernel_get(ctx, prog, name, &e);
    if (st)
        return st;
    size_t cap = e->max_wg < 256 ? e->max_wg : 256;
    l[0] = wd < cap ? wd : cap;
    l[1] = cap / l[0] < rows ? cap / l[0] : rows;
    if (g) {
        g[0] = (wd + l[0] - 1) / l[0] * l[0];
        g[1] = (rows + l[1] - 1) / l[1] * l[1];
    }
    return CT_OK;
}

typedef struct scratch {
    cl_mem mem;
    size_t n;
} scratch;

void ct_scratch_release(void *state)
{
    scratch *p = state;
    if (p->mem)
        clReleaseMemObject(p->mem);
    free(p);
}

int ct_scratch(ct_context *ctx, const ct_ext_kind *kind, size_t n, size_t least, cl_mem *out)
{
    scratch *p = ct_context_ext(ctx, kind);
    if (!p) {
        if (!(p = calloc(1, sizeof *p)))
            return ct_fail(ctx, CT_ERR_NO_MEMORY, "%s: out of host memory", kind->name);
        int st = ct_context_ext_set(ctx, kind, p);
        if (st) {
            free(p);
            return st;
        }
    }
    if (p->n < n) {
        size_t want = least ? least : 1;
        while (want < n)
            want *= 2;
        cl_mem m = NULL;
        int st = ct_buffer_create(ctx, want * sizeof(float), &m);
        if (st)
            return st;
        if (p->mem)
            clReleaseMemObject(p->mem); /* in-order queue: earlier users have it queued already */
        p->mem = m;
        p->n = want;
    }
    *out = p->mem;
    return CT_OK;
}
