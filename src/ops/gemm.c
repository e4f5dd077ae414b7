/*
 * gemm.c - ct_gemm: row-major SGEMM on (cl_mem, offset) operands, through
 * CLBlast on the device or, where the device class says so (cl/devclass.c),
 * on the host on mapped buffers (zero-copy on devices that share host
 * memory): cltrain's AVX-512 GEMM (gemm512.h) where the CPU has AVX-512 and
 * the shape suits it, else the host's CBLAS.
 */
#include "cl/runtime.h" /* first: sets the OpenCL target version */

#include <cblas.h>
#include <stdlib.h>
#include <clblast_c.h>
#include <stdio.h>
#include <string.h>

#include "ops/gemm512.h"
#include "ops/host_work.h"
#include "ops/hostmap.h"

const char *ct_gemm_path_str(ct_gemm_path path)
{
    switch (path) {
    case CT_GEMM_CLBLAST: return "clblast";
    case CT_GEMM_HOST: return "host";
    default: return "auto";
    }
}

/* One operand: rows x cols elements with leading dimension ld at offset. */
typedef struct operand {
    cl_mem buf;
    size_t off, rows, cols, ld;
    int write;
} operand;

static int check_operand(ct_context *ctx, const operand *o, char name)
{
    if (!o->buf)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "ct_gemm: matrix %c is NULL", name);
    if (o->ld < o->cols || o->ld == 0)
        return ct_fail(ctx, CT_ERR_INVALID_ARG,
                       "ct_gemm: leading dimension of %c is %zu, less than its %zu columns",
                       name, o->ld, o->cols);
    size_t bytes = 0;
    cl_int err = clGetMemObjectInfo(o->buf, CL_MEM_SIZE, sizeof bytes, &bytes, NULL);
    if (err != CL_SUCCESS)
        return ct_fail(ctx, err, "ct_gemm: matrix %c is not a valid buffer: %s", name,
                       ct_status_str(err));
    size_t end = o->off + (o->rows - 1) * o->ld + o->cols; /* one past the last element */
    if (end > bytes / sizeof(float))
        return ct_fail(ctx, CT_ERR_INVALID_ARG,
                       "ct_gemm: matrix %c (%zu x %zu, ld %zu, offset %zu) reaches element %zu "
                       "of a buffer of %zu floats", name, o->rows, o->cols, o->ld, o->off, end,
                       bytes / sizeof(float));
    return CT_OK;
}

/* cltrain's own SGEMM is on: AVX-512, and not CLTRAIN_HOST_GEMM=blas */
static int own_gemm_on(void)
{
    const char *env = getenv("CLTRAIN_HOST_GEMM");
    return ct_host_avx512() && !(env && !strcmp(env, "blas"));
}

/* Whether a host product of this shape runs the AVX-512 GEMM (gemm512.h)
 * rather than the host's CBLAS: on a CPU with AVX-512 unless
 * CLTRAIN_HOST_GEMM=blas, on CPU devices (whose host thread pool it runs
 * on), where it was measured faster (docs/BENCHMARKS.md):
 * enough rows to share each packed panel of B and enough columns and depth
 * to fill its tiles. The choice depends on the shape alone, never on the
 * thread count. */
static int own_gemm(const ct_context *ctx, size_t m, size_t n, size_t k)
{
    return m >= 256 && n >= 64 && k >= 16 && ctx->cls.host_pool && own_gemm_on();
}

const char *ct_host_gemm_str(void)
{
    return own_gemm_on() ? "avx512" : "blas";
}

/* One product on host memory: the AVX-512 GEMM on the context's pool, or
 * the host's CBLAS. */
static int host_product(ct_context *ctx, int ta, int tb, size_t m, size_t n, size_t k, float alpha,
                        const float *a, size_t lda, const float *b, size_t ldb, float beta, float *c,
                        size_t ldc)
{
    if (own_gemm(ctx, m, n, k)) {
        ct_host_work *hw;
        int st = ct_host_work_get(ctx, 16, 16, 1, &hw);
        return st ? st : ct_gemm512(ctx, hw, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    }
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                (int)m, (int)n, (int)k, alpha, a, (int)lda, b, (int)ldb, beta, c, (int)ldc);
    return CT_OK;
}

/* The operands through host_product, on mapped buffers (ops/hostmap.h). */
static int host_gemm(ct_context *ctx, int ta, int tb, size_t m, size_t n, size_t k, float alpha,
                     operand ops[3], float beta)
{
    ct_hmap_range r[3];
    for (int i = 0; i < 3; i++)
        r[i] = (ct_hmap_range){ ops[i].buf, ops[i].off,
                                (ops[i].rows - 1) * ops[i].ld + ops[i].cols, ops[i].write, NULL };
    ct_hmap hm;
    int st = ct_hmap_map(ctx, r, 3, &hm, "ct_gemm");
    if (st)
        return st;
    st = host_product(ctx, ta, tb, m, n, k, alpha, r[0].host, ops[0].ld, r[1].host, ops[1].ld, beta,
                      r[2].host, ops[2].ld);
    return ct_hmap_unmap(ctx, &hm, st, "ct_gemm");
}

int ct_gemm(ct_context *ctx, int trans_a, int trans_b, size_t m, size_t n, size_t k, float alpha,
            cl_mem a, size_t a_offset, size_t lda, cl_mem b, size_t b_offset, size_t ldb,
            float beta, cl_mem c, size_t c_offset, size_t ldc)
{
    CT_VALIDATE(NULL, ctx);
    if (m == 0 || n == 0)
        return CT_OK;
    if (m > 0x7fffffff || n > 0x7fffffff || k > 0x7fffffff)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "ct_gemm: %zu x %zu x %zu is too large", m, n, k);
    operand ops[3] = {
        { a, a_offset, trans_a ? k : m, trans_a ? m : k, lda, 0 },
        { b, b_offset, trans_b ? n : k, trans_b ? k : n, ldb, 0 },
        { c, c_offset, m, n, ldc, 1 },
    };
    int st;
    if (k == 0) {
        /* C = beta * C: CLBlast rejects k = 0, so scale C with a kernel */
        if ((st = check_operand(ctx, &ops[2], 'C')))
            return st;
        cl_uint mm = (cl_uint)m, nn = (cl_uint)n, ld = (cl_uint)ldc;
        cl_ulong off = c_offset;
        size_t global[2] = { n, m };
        return CT_RUN(ctx, CT_PROG_fill, "scale2d_f32", 2, global, NULL, CT_ARG(c), CT_ARG(off),
                      CT_ARG(ld), CT_ARG(mm), CT_ARG(nn), CT_ARG(beta));
    }
    if ((st = check_operand(ctx, &ops[0], 'A')) || (st = check_operand(ctx, &ops[1], 'B')) ||
        (st = check_operand(ctx, &ops[2], 'C')))
        return st;
    if (ops[0].ld > 0x7fffffff || ops[1].ld > 0x7fffffff || ops[2].ld > 0x7fffffff)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "ct_gemm: leading dimension too large");

    if (ctx->cls.gemm == CT_GEMM_HOST)
        return host_gemm(ctx, trans_a, trans_b, m, n, k, alpha, ops, beta);

    if ((st = ct_hold_sync(ctx)))
        return st;
    cl_command_queue q = ctx->queue;
    ctx->count.launches++;
    CLBlastStatusCode s = CLBlastSgemm(CLBlastLayoutRowMajor,
                                       trans_a ? CLBlastTransposeYes : CLBlastTransposeNo,
                                       trans_b ? CLBlastTransposeYes : CLBlastTransposeNo, m, n, k,
                                       alpha, a, a_offset, lda, b, b_offset, ldb, beta, c, c_offset,
                                       ldc, &q, NULL);
    if (s != CLBlastSuccess)
        return ct_fail(ctx, (int)s, "ct_gemm: CLBlast SGEMM %s%s %zux%zux%zu on %s failed: %s",
                       trans_a ? "T" : "N", trans_b ? "T" : "N", m, n, k, ctx->dev.name,
                       ct_status_str((int)s));
    return CT_OK;
}

/* The span of count operands of one shape at offsets offs: the lowest
 * offset in *lo, and the operand at the highest one for the bounds check. */
static operand span_of(const operand *o, const size_t *offs, size_t count, size_t *lo)
{
    operand hi = *o;
    *lo = offs[0];
    hi.off = offs[0];
    for (size_t b = 1; b < count; b++) {
        *lo = offs[b] < *lo ? offs[b] : *lo;
        hi.off = offs[b] > hi.off ? offs[b] : hi.off;
    }
    return hi;
}

int ct_gemm_batched(ct_context *ctx, int trans_a, int trans_b, size_t m, size_t n, size_t k, float alpha,
                    cl_mem a, const size_t *a_offsets, size_t lda, cl_mem b, const size_t *b_offsets,
                    size_t ldb, float beta, cl_mem c, const size_t *c_offsets, size_t ldc, size_t count)
{
    CT_VALIDATE(NULL, ctx);
    if (count == 0 || m == 0 || n == 0)
        return CT_OK;
    CT_VALIDATE(ctx, a_offsets && b_offsets && c_offsets);
    if (k == 0 || count == 1) { /* C = beta C, or one product: ct_gemm's own cases */
        int st = CT_OK;
        for (size_t i = 0; i < count && !st; i++)
            st = ct_gemm(ctx, trans_a, trans_b, m, n, k, alpha, a, a_offsets[i], lda, b, b_offsets[i], ldb,
                         beta, c, c_offsets[i], ldc);
        return st;
    }
    if (m > 0x7fffffff || n > 0x7fffffff || k > 0x7fffffff || count > 0x7fffffff)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "ct_gemm_batched: %zu of %zu x %zu x %zu is too large",
                       count, m, n, k);
    operand ops[3] = {
        { a, 0, trans_a ? k : m, trans_a ? m : k, lda, 0 },
        { b, 0, trans_b ? n : k, trans_b ? k : n, ldb, 0 },
        { c, 0, m, n, ldc, 1 },
    };
    const size_t *offs[3] = { a_offsets, b_offsets, c_offsets };
    size_t lo[3], hi[3];
    int st;
    for (int i = 0; i < 3; i++) {
        operand last = span_of(&ops[i], offs[i], count, &lo[i]);
        hi[i] = last.off;
        if ((st = check_operand(ctx, &last, "ABC"[i])))
            return st;
    }
    if (ops[0].ld > 0x7fffffff || ops[1].ld > 0x7fffffff || ops[2].ld > 0x7fffffff)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "ct_gemm_batched: leading dimension too large");

    if (ctx->cls.gemm == CT_GEMM_HOST) {
        /* one mapping over each operand's whole span, then the products */
        ct_hmap_range r[3];
        for (int i = 0; i < 3; i++)
            r[i] = (ct_hmap_range){ ops[i].buf, lo[i], hi[i] - lo[i] + (ops[i].rows - 1) * ops[i].ld + ops[i].cols,
                                    ops[i].write, NULL };
        ct_hmap hm;
        if ((st = ct_hmap_map(ctx, r, 3, &hm, "ct_gemm_batched")))
            return st;
        for (size_t bi = 0; bi < count && !st; bi++)
            st = host_product(ctx, trans_a, trans_b, m, n, k, alpha, r[0].host + (a_offsets[bi] - lo[0]), lda,
                              r[1].host + (b_offsets[bi] - lo[1]), ldb, beta,
                              r[2].host + (c_offsets[bi] - lo[2]), ldc);
        return ct_hmap_unmap(ctx, &hm, st, "ct_gemm_batched");
    }

    if ((st = ct_hold_sync(ctx)))
        return st;
    float *ab = malloc(2 * count * sizeof *ab);
    if (!ab)
        return ct_fail(ctx, CT_ERR_NO_MEMORY, "ct_gemm_batched: out of host memory");
    for (size_t bi = 0; bi < count; bi++)
        ab[bi] = alpha, ab[count + bi] = beta;
    cl_command_queue q = ctx->queue;
    ctx->count.launches++;
    CLBlastStatusCode s = CLBlastSgemmBatched(CLBlastLayoutRowMajor,
                                              trans_a ? CLBlastTransposeYes : CLBlastTransposeNo,
                                              trans_b ? CLBlastTransposeYes : CLBlastTransposeNo, m, n, k, ab, a,
                                              a_offsets, lda, b, b_offsets, ldb, ab + count, c, c_offsets, ldc,
                                              count, &q, NULL);
    free(ab);
    if (s != CLBlastSuccess)
        return ct_fail(ctx, (int)s, "ct_gemm_batched: CLBlast SGEMM batched %s%s %zu of %zux%zux%zu on %s "
                       "failed: %s", trans_a ? "T" : "N", trans_b ? "T" : "N", count, m, n, k, ctx->dev.name,
                       ct_status_str((int)s));
    return CT_OK;
}
