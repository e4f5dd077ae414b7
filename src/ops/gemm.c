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
