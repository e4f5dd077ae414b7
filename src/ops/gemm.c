/*
 * gemm.c - ct_gemm: row-major SGEMM on (cl_mem, offset) operands, through
 * CLBlast on the device or, where the device class says so (cl/devclass.c),
 * through the host's CBLAS on mapped buffers (zero-copy on devices that
 * share host memory).
 */
#include "cl/runtime.h" /* first: sets the OpenCL target version */

#include <cblas.h>
#include <clblast_c.h>
#include <stdio.h>
#include <string.h>

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

/* The operands through the host's CBLAS, on mapped buffers (ops/hostmap.h). */
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
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                (int)m, (int)n, (int)k, alpha, r[0].host, (int)ops[0].ld, r[1].host,
                (int)ops[1].ld, beta, r[2].host, (int)ops[2].ld);
    return ct_hmap_unmap(ctx, &hm, CT_OK, "ct_gemm");
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
        for (size_t bi = 0; bi < count; bi++)
            cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans,
                        (int)m, (int)n, (int)k, alpha, r[0].host + (a_offsets[bi] - lo[0]), (int)lda,
                        r[1].host + (b_offsets[bi] - lo[1]), (int)ldb, beta, r[2].host + (c_offsets[bi] - lo[2]),
                        (int)ldc);
        return ct_hmap_unmap(ctx, &hm, CT_OK, "ct_gemm_batched");
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
