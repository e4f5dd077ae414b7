/*
 * gemm.c - ct_gemm: row-major SGEMM on (cl_mem, offset) operands, through
 * CLBlast on the device or, where the device class says so (cl/devclass.c),
 * on the host on mapped buffers (zero-copy on devices that share host
 * memory): cltrain's AVX-512 GEMM (gemm512.h) where the CPU has AVX-512 and
 * the shape suits it, else the host's CBLAS.
 */
#include "cl/runtime.h" /* first: sets the OpenCL target version */

#include <stdlib.h>
#include <clblast_c.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "core/blasctl.h"
#include "host/gemm512.h"
#include "host/gemm_host.h"
#include "ops/gemm_cl.h"
#include "host/host_work.h"
#include "host/hostmap.h"
#include "ops/tune_use.h"

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
    size_t es; /* bytes per element: 2 in 16-bit storage (CT_S16_*); 0 or 4 float */
} operand;

/* The operand's last element, one past, from its offset. */
static size_t operand_end(const operand *o)
{
    return o->off + (o->rows - 1) * o->ld + o->cols;
}

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
    size_t end = operand_end(o), es = o->es ? o->es : sizeof(float);
    if (end > bytes / es)
        return ct_fail(ctx, CT_ERR_INVALID_ARG,
                       "ct_gemm: matrix %c (%zu x %zu, ld %zu, offset %zu) reaches element %zu "
                       "of a buffer of %zu %s", name, o->rows, o->cols, o->ld, o->off, end,
                       bytes / es, es == sizeof(float) ? "floats" : "16-bit elements");
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
static int own_gemm_rule(size_t m, size_t n, size_t k)
{
    return m >= 256 && n >= 64 && k >= 16;
}

/* Whether the host BLAS runs kernels without AVX2 (OpenBLAS's names for
 * its SSE-era and AVX1 cores: what it falls back to on a CPU it does not
 * know, as in virtual machines that hide the model): against those the
 * AVX-512 GEMM wins at every shape. Measured on such a machine (OpenBLAS
 * 0.3.21 "Prescott" on an Emerald Rapids guest), `bench`, median ms per
 * step of 3 interleaved rounds, the rule against every product here: gpt
 * (64) 1114 / 710, lstm (128) 718 / 522, fcn-r (1024) 418 / 403, mlp (64)
 * 2.7 / 2.5. */
static int blas_is_weak(void)
{
    static const char *weak[] = { "Prescott", "Core2", "Penryn", "Dunnington", "Nehalem", "Atom",
                                  "Katmai", "Coppermine", "Northwood", "Banias", "Opteron", "Barcelona",
                                  "Bobcat", "Sandybridge", "Bulldozer", "Piledriver", "Steamroller",
                                  "Excavator", "Generic", "Unknown" };
    const char *core = ct_blas_core_name();
    if (!core)
        return 0;
    for (size_t i = 0; i < sizeof weak / sizeof weak[0]; i++)
        if (!strncasecmp(core, weak[i], strlen(weak[i])))
            return 1;
    return 0;
}

/* Every host product on the AVX-512 GEMM: CLTRAIN_HOST_GEMM=avx512, or by
 * default where the BLAS is weak (CLTRAIN_HOST_GEMM=rule: the shape rule
 * whatever the BLAS, for side-by-side measurements) */
static int own_gemm_all(void)
{
    const char *env = getenv("CLTRAIN_HOST_GEMM");
    if (env && (!strcmp(env, "avx512") || !strcmp(env, "rule")))
        return !strcmp(env, "avx512");
    return blas_is_weak();
}

/* The rule, unless the shape was tuned here (ops/tune_use.h) or the
 * tuner forces a pick; never where the AVX-512 GEMM cannot run. */
static int own_gemm(ct_context *ctx, int ta, int tb, size_t m, size_t n, size_t k)
{
    if (!ctx->cls.host_pool || !own_gemm_on())
        return 0;
    if (ctx->precision != CT_PRECISION_FP32) /* the BLAS has no 16-bit products */
        return 1;
    int pick = ct_tune_choose(ctx, 0, ta, tb, m, n, k, CT_PICK_AVX512, CT_PICK_BLAS).pick;
    if (pick == CT_PICK_AVX512 || pick == CT_PICK_BLAS)
        return pick == CT_PICK_AVX512;
    return own_gemm_all() || own_gemm_rule(m, n, k);
}

ct_precision ct_context_precision(const ct_context *ctx)
{
    return ctx ? (ct_precision)ctx->precision : CT_PRECISION_FP32;
}

const char *ct_precision_str(ct_precision precision)
{
    return precision == CT_PRECISION_BF16   ? "bf16"
           : precision == CT_PRECISION_FP16 ? "fp16"
           : precision == CT_PRECISION_FP32 ? "fp32"
                                            : "?";
}

/* 16-bit products run on the device's own SGEMM kernels (their 16-bit
 * program variants: CLBlast cannot round operands) or on the host's
 * AVX-512 GEMM (the BLAS has no 16-bit products). */
int ct_context_set_precision(ct_context *ctx, ct_precision precision)
{
    CT_VALIDATE(ctx, ctx && precision >= CT_PRECISION_FP32 && precision <= CT_PRECISION_FP16);
    int host_ok = ctx->cls.gemm == CT_GEMM_HOST && ctx->cls.host_pool && own_gemm_on();
    if (precision != CT_PRECISION_FP32 && ctx->cls.gemm != CT_GEMM_CLBLAST && !host_ok)
        return ct_fail(ctx, CT_ERR_UNSUPPORTED, "%s products run on the device's own kernels or on the host "
                       "GEMM of an AVX-512 CPU; here: %s class, GEMM path %s, host GEMM %s: HINT: train in fp32 "
                       "here, or take the device path (CLTRAIN_GEMM=clblast)", ct_precision_str(precision),
                       ct_kernels_str(ctx->cls.kernels), ct_gemm_path_str(ctx->cls.gemm), ct_host_gemm_str());
    ctx->precision = precision;
    return CT_OK;
}

int ct_host_gemm_all(void)
{
    return own_gemm_on() && own_gemm_all();
}

int ct_host_bf16_dot(double *speed)
{
    if (speed)
        *speed = ct_host_bf16_dot_speed();
    return own_gemm_on() && ct_host_avx512_bf16();
}

int ct_host_bf16_amx(void)
{
    return own_gemm_on() && ct_host_amx();
}

const char *ct_host_gemm_str(void)
{
    return own_gemm_on() ? "avx512" : "blas";
}

/* One product on host memory: the AVX-512 GEMM on the context's pool, or
 * the host's CBLAS in blocks on the pool (host/gemm_host.h). */
static int host_product(ct_context *ctx, int ta, int tb, size_t m, size_t n, size_t k, float alpha,
                        const float *a, size_t lda, const float *b, size_t ldb, float beta, float *c,
                        size_t ldc)
{
    if (own_gemm(ctx, ta, tb, m, n, k)) {
        ct_host_work *hw;
        int st = ct_host_work_get(ctx, 16, 16, 1, &hw);
        return st ? st : ct_gemm512(ctx, hw, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    }
    return ct_host_blas(ctx, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

/* The operands through host_product, on mapped buffers (host/hostmap.h). */
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

/* --- the device path (CLBlast) ---
 *
 * CLBlast is called column-major with the operands swapped: row-major
 * C (m, n) = op(A) op(B) is column-major C^T (n, m) = op(B)^T op(A)^T over
 * the same memory, the layout CLBlast's kernels compute in, so it
 * transposes neither A nor C through temporaries (row-major calls do both).
 * The temporary its indirect kernel pads operands into is the context's,
 * grown on demand, instead of one allocated per call. Batches of products
 * go through CLBlastSgemmStridedBatched, one call per run of equally spaced
 * offsets: CLBlastSgemmBatched uploads its argument arrays and waits for
 * each upload. CLBlast's kernels index with int: an operand that reaches
 * past element ctx->gemm_index_limit (2^31 - 1) is rebased on a sub-buffer
 * starting at an aligned address at or below it, and refused with a clear
 * message if it spans more than that itself. */

static CLBlastTranspose tr(int t)
{
    return t ? CLBlastTransposeYes : CLBlastTransposeNo;
}

/* o on a sub-buffer when it reaches past the index limit (*sub set: the
 * caller releases it after the enqueue); span: how far beyond o->off later
 * batch entries reach (0 for one product). */
static int rebase(ct_context *ctx, operand *o, size_t span, cl_mem *sub, char name)
{
    *sub = NULL;
    size_t limit = ctx->gemm_index_limit ? ctx->gemm_index_limit : 0x7fffffff;
    size_t end = operand_end(o) + span;
    if (end <= limit)
        return CT_OK;
    cl_uint align_bits = 0;
    cl_int err = clGetDeviceInfo(ctx->device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits,
                                 &align_bits, NULL);
    size_t align = err == CL_SUCCESS && align_bits >= 32 ? align_bits / 32 : 1024; /* floats */
    size_t origin = o->off / align * align;
    if (end - origin > limit)
        return ct_fail(ctx, CT_ERR_INVALID_ARG,
                       "ct_gemm: matrix %c (%zu x %zu, ld %zu, offset %zu) spans %zu elements from "
                       "its aligned start, more than the %zu a GEMM kernel can index. HINT: split "
                       "the product", name, o->rows, o->cols, o->ld, o->off, end - origin, limit);
    size_t bytes = 0;
    clGetMemObjectInfo(o->buf, CL_MEM_SIZE, sizeof bytes, &bytes, NULL);
    cl_buffer_region reg = { origin * sizeof(float), bytes - origin * sizeof(float) };
    *sub = clCreateSubBuffer(o->buf, o->write ? CL_MEM_READ_WRITE : CL_MEM_READ_ONLY,
                             CL_BUFFER_CREATE_TYPE_REGION, &reg, &err);
    if (err != CL_SUCCESS)
        return ct_fail(ctx, err, "ct_gemm: a sub-buffer of matrix %c at element %zu: %s", name,
                       origin, ct_status_str(err));
    o->buf = *sub;
    o->off -= origin;
    return CT_OK;
}

static void release_subs(cl_mem sub[3])
{
    for (int i = 0; i < 3; i++)
        if (sub[i])
            clReleaseMemObject(sub[i]);
}

/* Bytes a product of these operands moves once: A and B read, C written
 * (and read when beta is not 0), and `more` floats read besides (a bias). */
static void gemm_record(ct_context *ctx, int ta, int tb, size_t m, size_t n, size_t k, size_t batch,
                        size_t splits, float beta, size_t more, const operand ops[3])
{
    size_t es[3];
    for (int i = 0; i < 3; i++)
        es[i] = ops && ops[i].es ? ops[i].es : sizeof(float);
    size_t c = m * n * batch * es[2];
    ct_launch_record(ctx, &(ct_launch_rec){ .ta = !!ta, .tb = !!tb, .m = m, .n = n, .k = k, .batch = batch, .k_splits = splits,
                                            .rd = (int64_t)((m * k * es[0] + k * n * es[1]) * batch +
                                                            (beta != 0.0f ? c : 0) + more * sizeof(float)),
                                            .wr = (int64_t)c });
}

/* The context's CLBlast temporary, at least `bytes` long. */
static int gemm_temp(ct_context *ctx, size_t bytes, cl_mem *out)
{
    if (bytes > ctx->gemm_tmp_bytes) {
        size_t want = bytes + bytes / 4;
        if (ctx->gemm_tmp)
            clReleaseMemObject(ctx->gemm_tmp);
        ctx->gemm_tmp = NULL;
        ctx->gemm_tmp_bytes = 0;
        cl_int err;
        ctx->gemm_tmp = clCreateBuffer(ctx->cl, CL_MEM_READ_WRITE, want, NULL, &err);
        if (err != CL_SUCCESS)
            return ct_fail(ctx, err, "ct_gemm: the matrix products' temporary (%zu bytes) on %s: %s",
                           want, ctx->dev.name, ct_status_str(err));
        ctx->gemm_tmp_bytes = want;
    }
    *out = ctx->gemm_tmp;
    return CT_OK;
}

static int clblast_fail(ct_context *ctx, CLBlastStatusCode s, const char *what, int ta, int tb, size_t count,
                        size_t m, size_t n, size_t k)
{
    return ct_fail(ctx, (int)s, "ct_gemm: CLBlast %s %s%s %zu of %zux%zux%zu on %s failed: %s", what,
                   ta ? "T" : "N", tb ? "T" : "N", count, m, n, k, ctx->dev.name, ct_status_str((int)s));
}

/* Which GPU-class GEMM runs a shape: 16-bit operands, or
 * CLTRAIN_GPU_GEMM=own, take cltrain's own kernel, CLTRAIN_GPU_GEMM=clblast
 * CLBlast; else the tuner's forced pick, else the tuned table's entry for the
 * shape (*plan from it), else the rule: cltrain's own kernel
 * (ops/gemm_cl.h) where it was measured faster or where C is too small to
 * fill a GPU without k-slices, else CLBlast. */
static int own_kernel(ct_context *ctx, size_t m, size_t n, size_t k, int ta, int tb, ct_gemm_cl_plan *plan)
{
    const char *env = getenv("CLTRAIN_GPU_GEMM");
    *plan = ct_gemm_cl_plan_for(ctx, m, n, k, ta, tb);
    if ((env && !strcmp(env, "own")) || ctx->precision != CT_PRECISION_FP32) /* 16 bits: own kernels only */
        return 1;
    if (env && !strcmp(env, "clblast"))
        return 0;
    ct_tune_choice c = ct_tune_choose(ctx, 0, ta, tb, m, n, k, CT_PICK_OWN, CT_PICK_CLBLAST);
    if (c.pick == CT_PICK_OWN) {
        ct_gemm_cl_tiles t = c.tiles == CT_GEMM_CL_SMALL || c.tiles == CT_GEMM_CL_HUGE || c.tiles == CT_GEMM_CL_VEC
                                 ? (ct_gemm_cl_tiles)c.tiles
                                 : CT_GEMM_CL_BIG;
        *plan = (ct_gemm_cl_plan){ t, c.splits ? c.splits : 1 };
        return 1;
    }
    if (c.pick == CT_PICK_CLBLAST)
        return 0;
    return ct_gemm_cl_choose(ctx, m, n, k, ta, tb);
}

/* One product on the device; epi (own kernel only): what the pass writing
 * C adds, *fused set when it ran. */
static int device_gemm(ct_context *ctx, int ta, int tb, size_t m, size_t n, size_t k, float alpha,
                       operand ops[3], float beta, const ct_gemm_cl_epi *epi, int *fused)
{
    ct_gemm_cl_plan plan;
    if (own_kernel(ctx, m, n, k, ta, tb, &plan)) {
        /* one record for the product, not one per kernel it launches */
        gemm_record(ctx, ta, tb, m, n, k, 1, plan.splits, beta, epi && epi->bias ? n : 0, ops);
        ctx->lrec.mute++;
        int st = ct_gemm_cl_run_epi(ctx, plan, epi, ta, tb, m, n, k, alpha, ops[0].buf, ops[0].off, ops[0].ld,
                                    ops[1].buf, ops[1].off, ops[1].ld, beta, ops[2].buf, ops[2].off, ops[2].ld);
        ctx->lrec.mute--;
        if (fused)
            *fused = epi != NULL;
        return st;
    }
    cl_mem sub[3] = { NULL, NULL, NULL };
    int st = CT_OK;
    for (int i = 0; i < 3 && !st; i++)
        st = rebase(ctx, &ops[i], 0, &sub[i], "ABC"[i]);
    if (st)
        goto done;
    cl_command_queue q = ctx->queue;
    size_t tmp_bytes = 0;
    CLBlastStatusCode s = CLBlastSGemmTempBufferSize(CLBlastLayoutColMajor, tr(tb), tr(ta), n, m, k, ops[1].off,
                                                     ops[1].ld, ops[0].off, ops[0].ld, ops[2].off, ops[2].ld,
                                                     &q, &tmp_bytes);
    cl_mem tmp = NULL;
    if (s != CLBlastSuccess) {
        st = clblast_fail(ctx, s, "SGEMM temporary size", ta, tb, 1, m, n, k);
        goto done;
    }
    if ((st = gemm_temp(ctx, tmp_bytes ? tmp_bytes : sizeof(float), &tmp)) || (st = ct_hold_sync(ctx)))
        goto done;
    ctx->count.launches++;
    gemm_record(ctx, ta, tb, m, n, k, 1, 1, beta, 0, NULL);
    double t0 = ctx->ktime.on ? ct_now() : 0;
    s = CLBlastSgemmWithTempBuffer(CLBlastLayoutColMajor, tr(tb), tr(ta), n, m, k, alpha, ops[1].buf, ops[1].off,
                                   ops[1].ld, ops[0].buf, ops[0].off, ops[0].ld, beta, ops[2].buf, ops[2].off,
                                   ops[2].ld, &q, NULL, tmp);
    if (s != CLBlastSuccess)
        st = clblast_fail(ctx, s, "SGEMM", ta, tb, 1, m, n, k);
    else
        st = ct_ktime_end(ctx, "CLBlastSgemm", t0);
done:
    release_subs(sub);
    return st;
}

/* count products whose offsets are off[i] + j * stride[i], j < count. */
static int device_strided(ct_context *ctx, int ta, int tb, size_t m, size_t n, size_t k, float alpha,
                          operand ops[3], const size_t stride[3], size_t count, float beta)
{
    cl_mem sub[3] = { NULL, NULL, NULL };
    int st = CT_OK;
    for (int i = 0; i < 3 && !st; i++)
        st = rebase(ctx, &ops[i], (count - 1) * stride[i], &sub[i], "ABC"[i]);
    if (st)
        goto done;
    if ((st = ct_hold_sync(ctx)))
        goto done;
    cl_command_queue q = ctx->queue;
    ctx->count.launches++;
    gemm_record(ctx, ta, tb, m, n, k, count, 1, beta, 0, NULL);
    double t0 = ctx->ktime.on ? ct_now() : 0;
    CLBlastStatusCode s = CLBlastSgemmStridedBatched(CLBlastLayoutColMajor, tr(tb), tr(ta), n, m, k, alpha,
                                                     ops[1].buf, ops[1].off, ops[1].ld, stride[1], ops[0].buf,
                                                     ops[0].off, ops[0].ld, stride[0], beta, ops[2].buf,
                                                     ops[2].off, ops[2].ld, stride[2], count, &q, NULL);
    if (s != CLBlastSuccess)
        st = clblast_fail(ctx, s, "SGEMM strided batched", ta, tb, count, m, n, k);
    else
        st = ct_ktime_end(ctx, "CLBlastSgemmStridedBatched", t0);
done:
    release_subs(sub);
    return st;
}

int ct_gemm(ct_context *ctx, int trans_a, int trans_b, size_t m, size_t n, size_t k, float alpha,
            cl_mem a, size_t a_offset, size_t lda, cl_mem b, size_t b_offset, size_t ldb,
            float beta, cl_mem c, size_t c_offset, size_t ldc)
{
    return ct_gemm_epi(ctx, trans_a, trans_b, m, n, k, alpha, a, a_offset, lda, b, b_offset, ldb, beta,
                       c, c_offset, ldc, NULL, NULL);
}

int ct_gemm_epi(ct_context *ctx, int trans_a, int trans_b, size_t m, size_t n, size_t k, float alpha,
                cl_mem a, size_t a_offset, size_t lda, cl_mem b, size_t b_offset, size_t ldb, float beta,
                cl_mem c, size_t c_offset, size_t ldc, const ct_gemm_cl_epi *epi, int *fused)
{
    CT_VALIDATE(NULL, ctx);
    if (fused)
        *fused = 0;
    if (m == 0 || n == 0)
        return CT_OK;
    if (m > 0x7fffffff || n > 0x7fffffff || k > 0x7fffffff)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "ct_gemm: %zu x %zu x %zu is too large", m, n, k);
    int s16 = epi ? epi->s16 : 0;
    operand ops[3] = {
        { a, a_offset, trans_a ? k : m, trans_a ? m : k, lda, 0, s16 & CT_S16_A ? 2 : 0 },
        { b, b_offset, trans_b ? n : k, trans_b ? k : n, ldb, 0, s16 & CT_S16_B ? 2 : 0 },
        { c, c_offset, m, n, ldc, 1, s16 & CT_S16_C ? 2 : 0 },
    };
    int st;
    if (s16 && (ctx->cls.gemm == CT_GEMM_HOST || !ctx->act16 || ctx->precision == CT_PRECISION_FP32))
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "ct_gemm: 16-bit operands (%d) take the GPU class's own "
                       "kernels with 16-bit activation storage set", s16);
    if (k == 0 && (s16 & CT_S16_C))
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "ct_gemm: k = 0 with a 16-bit C (scaling it has no kernel)");
    if (k == 0) {
        /* C = beta * C: CLBlast rejects k = 0, so scale C with a kernel */
        if ((st = check_operand(ctx, &ops[2], 'C')))
            return st;
        cl_uint mm = (cl_uint)m, nn = (cl_uint)n, ld = (cl_uint)ldc;
        cl_ulong off = c_offset;
        size_t global[2] = { n, m };
        ct_launch_bytes(ctx, beta != 0.0f ? m * n * sizeof(float) : 0, m * n * sizeof(float));
        return CT_RUN(ctx, CT_PROG_fill, "scale2d_f32", 2, global, NULL, CT_ARG(c), CT_ARG(off),
                      CT_ARG(ld), CT_ARG(mm), CT_ARG(nn), CT_ARG(beta));
    }
    if ((st = check_operand(ctx, &ops[0], 'A')) || (st = check_operand(ctx, &ops[1], 'B')) ||
        (st = check_operand(ctx, &ops[2], 'C')))
        return st;
    if (ops[0].ld > 0x7fffffff || ops[1].ld > 0x7fffffff || ops[2].ld > 0x7fffffff)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "ct_gemm: leading dimension too large");
    if (epi && epi->bias && (st = check_operand(ctx, &(operand){ epi->bias, epi->bias_off, 1, n, n, 0, 0 }, 'b')))
        return st;

    if (ctx->cls.gemm == CT_GEMM_HOST) {
        gemm_record(ctx, trans_a, trans_b, m, n, k, 1, 1, beta, 0, NULL);
        return host_gemm(ctx, trans_a, trans_b, m, n, k, alpha, ops, beta);
    }
    return device_gemm(ctx, trans_a, trans_b, m, n, k, alpha, ops, beta, epi, fused);
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
        { a, 0, trans_a ? k : m, trans_a ? m : k, lda, 0, 0 },
        { b, 0, trans_b ? n : k, trans_b ? k : n, ldb, 0, 0 },
        { c, 0, m, n, ldc, 1, 0 },
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
        gemm_record(ctx, trans_a, trans_b, m, n, k, count, 1, beta, 0, NULL);
        ct_hmap_range r[3];
        for (int i = 0; i < 3; i++)
            r[i] = (ct_hmap_range){ ops[i].buf, lo[i], hi[i] - lo[i] + (ops[i].rows - 1) * ops[i].ld + ops[i].cols,
                                    ops[i].write, NULL };
        ct_hmap hm;
        if ((st = ct_hmap_map(ctx, r, 3, &hm, "ct_gemm_batched")))
            return st;
        if (count >= CT_HOST_BATCH_MIN && ctx->cls.host_pool) {
            /* each product whole on one of the pool's threads */
            st = ct_host_gemm_batch(ctx, own_gemm(ctx, trans_a, trans_b, m, n, k), trans_a, trans_b, m, n, k,
                                    alpha, r[0].host, a_offsets, lo[0], lda, r[1].host, b_offsets, lo[1], ldb,
                                    beta, r[2].host, c_offsets, lo[2], ldc, count);
            return ct_hmap_unmap(ctx, &hm, st, "ct_gemm_batched");
        }
        for (size_t bi = 0; bi < count && !st; bi++)
            st = host_product(ctx, trans_a, trans_b, m, n, k, alpha, r[0].host + (a_offsets[bi] - lo[0]), lda,
                              r[1].host + (b_offsets[bi] - lo[1]), ldb, beta,
                              r[2].host + (c_offsets[bi] - lo[2]), ldc);
        return ct_hmap_unmap(ctx, &hm, st, "ct_gemm_batched");
    }

    ct_tune_table(ctx); /* its CLBlast parameters, before CLBlast runs */
    /* runs of equally spaced offsets, one strided-batched call each */
    for (size_t i0 = 0; i0 < count && !st;) {
        size_t stride[3] = { 0, 0, 0 }, len = 1;
        if (i0 + 1 < count && a_offsets[i0 + 1] >= a_offsets[i0] && b_offsets[i0 + 1] >= b_offsets[i0] &&
            c_offsets[i0 + 1] >= c_offsets[i0]) {
            for (int i = 0; i < 3; i++)
                stride[i] = offs[i][i0 + 1] - offs[i][i0];
            len = 2;
            /* the products' Cs must not overlap: each past the last, or
             * side by side within the rows of one leading dimension */
            size_t s2 = stride[2], ext = (ops[2].rows - 1) * ops[2].ld + ops[2].cols;
            if (s2 < ext && !(s2 >= ops[2].cols && (len - 1) * s2 + ops[2].cols <= ops[2].ld)) {
                len = 1;
            } else {
                while (i0 + len < count && offs[0][i0 + len] == offs[0][i0] + len * stride[0] &&
                       offs[1][i0 + len] == offs[1][i0] + len * stride[1] &&
                       offs[2][i0 + len] == offs[2][i0] + len * stride[2] &&
                       (s2 >= ext || len * s2 + ops[2].cols <= ops[2].ld))
                    len++;
            }
        }
        operand o[3];
        for (int i = 0; i < 3; i++)
            o[i] = ops[i], o[i].off = offs[i][i0];
        if (len == 1 || ctx->precision != CT_PRECISION_FP32) { /* 16 bits: own kernels, one by one */
            for (size_t j = 0; j < len && !st; j++) {
                operand oj[3] = { o[0], o[1], o[2] };
                for (int i = 0; i < 3; i++)
                    oj[i].off += j * stride[i];
                st = device_gemm(ctx, trans_a, trans_b, m, n, k, alpha, oj, beta, NULL, NULL);
            }
        } else
            st = device_strided(ctx, trans_a, trans_b, m, n, k, alpha, o, stride, len, beta);
        i0 += len;
    }
    return st;
}

/* Whether blocks (rows, cols, ld) at count offsets `stride` apart are
 * disjoint: each past the previous one's end, or side by side within the
 * rows of one leading dimension. The group they form, as one block, in
 * *g_cols (its width, when side by side) and *g_ext (its extent). */
static int blocks_disjoint(size_t rows, size_t cols, size_t ld, size_t ext, size_t stride, size_t count,
                           size_t *g_cols, size_t *g_ext)
{
    *g_cols = cols, *g_ext = ext;
    if (count <= 1)
        return 1;
    if (stride >= ext) {
        *g_cols = ld, *g_ext = (count - 1) * stride + ext;
        return 1;
    }
    if (stride >= cols && (count - 1) * stride + cols <= ld) {
        *g_cols = (count - 1) * stride + cols, *g_ext = (rows - 1) * ld + *g_cols;
        return 1;
    }
    return 0;
}

/* Which way a two-level batch runs: cltrain's own kernel in one launch,
 * except where it was measured slow (Mesa's llvmpipe) or CLBlast is forced */
static int own_batched(const ct_context *ctx)
{
    const char *env = getenv("CLTRAIN_GPU_GEMM");
    if (ctx->precision != CT_PRECISION_FP32)
        return 1; /* CLBlast cannot round the operands */
    if (env && (!strcmp(env, "own") || !strcmp(env, "clblast")))
        return !strcmp(env, "own");
    return ct_gemm_cl_device_ok(ctx);
}

int ct_gemm_batched2(ct_context *ctx, int trans_a, int trans_b, size_t m, size_t n, size_t k, float alpha,
                     cl_mem a, size_t a_off, size_t lda, const size_t as[2], cl_mem b, size_t b_off,
                     size_t ldb, const size_t bs[2], float beta, cl_mem c, size_t c_off, size_t ldc,
                     const size_t cs[2], size_t n1, size_t n2)
{
    return ct_gemm_batched2_s(ctx, trans_a, trans_b, m, n, k, alpha, a, a_off, lda, as, b, b_off, ldb, bs, beta, c,
                              c_off, ldc, cs, n1, n2, 0);
}

int ct_gemm_batched2_s(ct_context *ctx, int trans_a, int trans_b, size_t m, size_t n, size_t k, float alpha,
                       cl_mem a, size_t a_off, size_t lda, const size_t as[2], cl_mem b, size_t b_off,
                       size_t ldb, const size_t bs[2], float beta, cl_mem c, size_t c_off, size_t ldc,
                       const size_t cs[2], size_t n1, size_t n2, int s16)
{
    CT_VALIDATE(NULL, ctx);
    CT_VALIDATE(ctx, as && bs && cs);
    size_t count = n1 * n2;
    if (count == 0 || m == 0 || n == 0)
        return CT_OK;
    /* the Cs must not overlap, whichever path runs: the inner level's
     * blocks, then the groups they form */
    int inner = cs[1] <= cs[0];
    size_t gc, ge, gc2, ge2, ext = (m - 1) * ldc + n;
    if (!blocks_disjoint(m, n, ldc, ext, cs[inner], inner ? n2 : n1, &gc, &ge) ||
        !blocks_disjoint(m, gc, ldc, ge, cs[!inner], inner ? n1 : n2, &gc2, &ge2))
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "ct_gemm_batched2: the %zu x %zu products' C "
                       "blocks (%zu x %zu, ld %zu, strides %zu and %zu) overlap", n1, n2, m, n,
                       ldc, cs[0], cs[1]);
    int own = ctx->cls.gemm == CT_GEMM_CLBLAST && k > 0 && own_batched(ctx);
    if (s16 && (!own || !ctx->act16))
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "ct_gemm_batched2: 16-bit operands (%d) take the GPU class's own "
                       "kernels with 16-bit activation storage set, and k > 0", s16);
    if (own) {
        operand ops[3] = {
            { a, a_off, trans_a ? k : m, trans_a ? m : k, lda, 0, s16 & CT_S16_A ? 2 : 0 },
            { b, b_off, trans_b ? n : k, trans_b ? k : n, ldb, 0, s16 & CT_S16_B ? 2 : 0 },
            { c, c_off, m, n, ldc, 1, s16 & CT_S16_C ? 2 : 0 },
        };
        const size_t *str[3] = { as, bs, cs };
        int st;
        for (int i = 0; i < 3; i++) {
            operand last = ops[i];
            last.off += (n1 - 1) * str[i][0] + (n2 - 1) * str[i][1];
            if ((st = check_operand(ctx, &last, "ABC"[i])))
                return st;
        }
        gemm_record(ctx, trans_a, trans_b, m, n, k, count, 1, beta, 0, ops);
        ctx->lrec.mute++;
        st = ct_gemm_cl_batched(ctx, trans_a, trans_b, m, n, k, alpha, a, a_off, lda, as, b, b_off, ldb, bs, beta,
                                c, c_off, ldc, cs, n1, n2, s16);
        ctx->lrec.mute--;
        return st;
    }
    /* elsewhere: offsets for ct_gemm_batched, the longer level inner (a run
     * of equal strides is one strided-batched product) */
    size_t *off = malloc(3 * count * sizeof *off);
    if (!off)
        return ct_fail(ctx, CT_ERR_NO_MEMORY, "ct_gemm_batched2: out of host memory");
    size_t *ao = off, *bo = off + count, *co = off + 2 * count;
    int n2_inner = n2 >= n1;
    for (size_t i = 0; i < n1; i++)
        for (size_t j = 0; j < n2; j++) {
            size_t z = n2_inner ? i * n2 + j : j * n1 + i;
            ao[z] = a_off + i * as[0] + j * as[1];
            bo[z] = b_off + i * bs[0] + j * bs[1];
            co[z] = c_off + i * cs[0] + j * cs[1];
        }
    int st = ct_gemm_batched(ctx, trans_a, trans_b, m, n, k, alpha, a, ao, lda, b, bo, ldb, beta, c, co, ldc,
                             count);
    free(off);
    return st;
}
