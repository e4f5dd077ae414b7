/*
 * gemm_cl.c - cltrain's own OpenCL SGEMM (cl_kernels/gemm.cl) for the GPU
 * class: picks the tiles and the number of k-slices for a shape, keeps the
 * split-K workspace on the context, and launches the product and, when
 * split, the fixed-order sum of the slices.
 */
#include "ops/gemm_cl.h"
#include "ops/ops.h"

#include <stdlib.h>
#include <string.h>

/* Work-items a product should keep busy per compute unit of a GPU before
 * it is split along k (a GPU's unit runs several work-groups at once);
 * work-groups per compute unit of a CPU (pocl runs one group per thread at
 * a time: a few each balance the threads); the least depth of a slice, and
 * the most slices (GPUs: 64 left an H200 running ResNet-56's first-stage
 * weight gradients, 16 x 144 over k = 131,072, on 320 work-groups of 32,
 * at 1.3 TFLOP/s against the forward's 7.7). */
#define ITEMS_PER_CU 1024
#define GROUPS_PER_CPU_CU 4
#define MIN_SLICE 256
#define MAX_SPLITS_CPU 64
#define MAX_SPLITS_GPU 512

static const char *const kernel_names[4][4] = { /* by tiles, then ta * 2 + tb */
    { "gemm_big_nn", "gemm_big_nt", "gemm_big_tn", "gemm_big_tt" },
    { "gemm_small_nn", "gemm_small_nt", "gemm_small_tn", "gemm_small_tt" },
    { NULL, NULL, NULL, NULL }, /* narrow: the convolution's only */
    { "gemm_huge_nn", "gemm_huge_nt", "gemm_huge_tn", "gemm_huge_tt" },
};
static const char *const reg_names[4] = { "gemm_reg_nn", "gemm_reg_nt", "gemm_reg_tn", "gemm_reg_tt" };
/* cl_kernels/gemm_reg.cl's tiles (CT_GREG_WM, CT_GREG_WN; 4 x 4 sums per
 * work-item, 4 k per step) */
static const ct_gemm_cl_tile reg_tiles = { 16, 32, 4, 4, 8 };
static const char *const vec_names[4] = { "gemm_vec_nn", "gemm_vec_nt", "gemm_vec_tn", "gemm_vec_tt" };
/* gemm_reg.cl's float16 tiles by transposition case (ta * 2 + tb), one
 * work-item per group; k-slices a multiple of 16 deep (NT's step) */
static const ct_gemm_cl_tile vec_tiles[4] = {
    { 8, 32, 16, 1, 1 }, { 4, 4, 16, 1, 1 }, { 32, 8, 16, 1, 1 }, { 32, 8, 16, 1, 1 }
};

typedef ct_gemm_cl_tile tiles_info;

static const ct_gemm_cl_params params_cpu = CT_GEMM_CL_PARAMS_CPU, params_gpu = CT_GEMM_CL_PARAMS_GPU;

static tiles_info tiles_in(const ct_gemm_cl_params *p, ct_gemm_cl_tiles t)
{
    if (t == CT_GEMM_CL_REG)
        return reg_tiles;
    if (t == CT_GEMM_CL_VEC) /* NN's, for the split rule */
        return vec_tiles[0];
    return (tiles_info){ p->wm[t] * p->rm[t], p->wn[t] * p->rnv[t] * p->vn, p->tk, p->wm[t], p->wn[t] };
}

/* The tiles the kernels are built with by default on the context's device */
static const ct_gemm_cl_params *params_of(const ct_context *ctx)
{
    return ctx->dev.type == CT_DEVICE_CPU ? &params_cpu : &params_gpu;
}

static tiles_info tiles_of(const ct_context *ctx, ct_gemm_cl_tiles t)
{
    return tiles_in(params_of(ctx), t);
}

/* The SGEMM's tiles: its depth per local step is its own (GPUs: 32, the
 * convolution's 16) */
static tiles_info mm_tiles_of(const ct_context *ctx, ct_gemm_cl_tiles t)
{
    tiles_info ti = tiles_of(ctx, t);
    if (t != CT_GEMM_CL_REG && t != CT_GEMM_CL_VEC)
        ti.tk = params_of(ctx)->tk_mm;
    return ti;
}

/* The slice depth for s slices: a multiple of the tile depth; the number
 * of slices it gives (no empty slice) in *splits. */
static size_t slice_depth(size_t k, size_t tk, size_t *splits)
{
    size_t kc = ct_cdiv(ct_cdiv(k, *splits), tk) * tk;
    if (kc == 0)
        kc = tk;
    *splits = k ? ct_cdiv(k, kc) : 1;
    return kc;
}

/* mm: the SGEMM's slices (else the convolution's) */
static size_t splits_for(const ct_context *ctx, ct_gemm_cl_tiles t, size_t m, size_t n, size_t k, int mm)
{
    tiles_info ti = mm ? mm_tiles_of(ctx, t) : tiles_of(ctx, t);
    size_t cu = ctx->dev.compute_units ? ctx->dev.compute_units : 1;
    size_t groups = ct_cdiv(m, ti.tm) * ct_cdiv(n, ti.tn);
    size_t want = ctx->dev.type == CT_DEVICE_CPU ? cu * GROUPS_PER_CPU_CU
                                                 : ct_cdiv(cu * ITEMS_PER_CU, ti.wm * ti.wn);
    if (groups >= want)
        return 1;
    size_t s = ct_cdiv(want, groups), most = k / MIN_SLICE;
    if (s > most)
        s = most;
    size_t cap = ctx->dev.type == CT_DEVICE_CPU ? MAX_SPLITS_CPU : MAX_SPLITS_GPU;
    if (s > cap)
        s = cap;
    if (s <= 1)
        return 1;
    slice_depth(k, ti.tk, &s);
    return s;
}

/* The local memory an SGEMM kernel declares: A's and B's tiles, rows
 * padded by one float */
static size_t mm_local_bytes(tiles_info ti)
{
    return ti.tk * (ti.tm + 1 + ti.tn + 1) * sizeof(float);
}

int ct_gemm_cl_has_huge(const ct_context *ctx)
{
    return ctx->dev.type != CT_DEVICE_CPU &&
           mm_local_bytes(mm_tiles_of(ctx, CT_GEMM_CL_HUGE)) <= ctx->dev.local_mem_bytes;
}

/* Whether a product takes the huge tiles: on GPUs, where C has 128 rows and
 * columns at least and fills a quarter of the compute units with 128 x 128
 * tiles before any k-slices. On an H200 (test_gemm_cl --bench, 2026-11-27)
 * they ran 1.03-1.5x the big tiles' speed on such products (1024^3: 21
 * TFLOP/s against 14 and CLBlast's 13.6), and 0.87x on products of 4 to 25
 * huge tiles, which stay big. */
static int huge_fits(const ct_context *ctx, size_t m, size_t n, size_t k)
{
    if (m < 128 || n < 128 || k < 64 || !ct_gemm_cl_has_huge(ctx))
        return 0;
    tiles_info h = tiles_of(ctx, CT_GEMM_CL_HUGE);
    size_t cu = ctx->dev.compute_units ? ctx->dev.compute_units : 1;
    return ctx->dev.max_work_group_size >= h.wm * h.wn && 4 * ct_cdiv(m, h.tm) * ct_cdiv(n, h.tn) >= cu;
}

ct_gemm_cl_plan ct_gemm_cl_plan_for(const ct_context *ctx, size_t m, size_t n, size_t k, int ta,
                                    int tb)
{
    (void)ta, (void)tb;
    if (ct_gemm_cl_reg_device(ctx))
        return (ct_gemm_cl_plan){ CT_GEMM_CL_REG, splits_for(ctx, CT_GEMM_CL_REG, m, n, k, 1) };
    if (ct_gemm_cl_vec_device(ctx))
        return (ct_gemm_cl_plan){ CT_GEMM_CL_VEC, splits_for(ctx, CT_GEMM_CL_VEC, m, n, k, 1) };
    ct_gemm_cl_tiles t = m <= 16 || ctx->dev.max_work_group_size < tiles_of(ctx, CT_GEMM_CL_BIG).wm *
                                 tiles_of(ctx, CT_GEMM_CL_BIG).wn ? CT_GEMM_CL_SMALL : CT_GEMM_CL_BIG;
    if (t == CT_GEMM_CL_BIG && huge_fits(ctx, m, n, k))
        t = CT_GEMM_CL_HUGE;
    return (ct_gemm_cl_plan){ t, splits_for(ctx, t, m, n, k, 1) };
}

size_t ct_gemm_cl_splits(const ct_context *ctx, size_t m, size_t n, size_t k, int ta, int tb)
{
    return ct_gemm_cl_plan_for(ctx, m, n, k, ta, tb).splits;
}

/* On pocl (CPU devices; test_gemm_cl --bench, 2 Zen 4 cores) the tiled
 * kernels ran 1.2-8x CLBlast's speed on the zoo's products (the SGEMM now
 * runs the float16 register tiles there: ct_gemm_cl_vec_device), except the weight
 * gradients of convolutions with 16 or 32 output channels (m <= 32, B
 * transposed, k of tens of thousands: 0.6-0.95x), where tiles of 16 or 64
 * rows are mostly loads. On GPUs, unmeasured here: the products that split
 * (C too small to fill the device, where CLBlast runs a few work-groups
 * along all of k); the rest stay with CLBlast's tuned kernels. Other CPU
 * runtimes: not these tiles (Mesa's llvmpipe runs work-items in SIMD lanes,
 * barriers as coroutine switches, local memory as gathers: 0.25-0.35x
 * CLBlast even with mad()), but the register tiles of gemm_reg.cl. */
int ct_gemm_cl_device_ok(const ct_context *ctx)
{
    return ctx->dev.type != CT_DEVICE_CPU || strstr(ctx->dev.platform_name, "Portable Computing Language");
}

int ct_gemm_cl_reg_device(const ct_context *ctx)
{
    return !ct_gemm_cl_device_ok(ctx);
}

int ct_gemm_cl_vec_device(const ct_context *ctx)
{
    return ctx->dev.type == CT_DEVICE_CPU && ct_gemm_cl_device_ok(ctx);
}

int ct_gemm_cl_choose(const ct_context *ctx, size_t m, size_t n, size_t k, int ta, int tb)
{
    /* register tiles against CLBlast on Mesa's llvmpipe (test_gemm_cl
     * --bench, 2 Zen 4 cores): 1.4-3.9x on every product of the zoo's shapes
     * (4.4-9.1 GFLOP/s against 0.9-4.0), so every product there; the tuner
     * measures CLBlast against them per shape */
    if (ct_gemm_cl_reg_device(ctx))
        return 1;
    /* pocl: the float16 register tiles ran 3.2-15x CLBlast on every product
     * of the zoo's shapes (64-373 GFLOP/s against 14-25), the thin weight
     * gradients included (the tiled kernels lost those to CLBlast) */
    if (ct_gemm_cl_vec_device(ctx))
        return 1;
    if (ctx->dev.type == CT_DEVICE_CPU)
        return !(m <= 32 && tb && !ta && k >= 8192);
    /* GPUs: the products that split, and those the huge tiles take
     * (1.1-1.6x CLBlast on an H200, test_gemm_cl --bench) */
    ct_gemm_cl_plan p = ct_gemm_cl_plan_for(ctx, m, n, k, ta, tb);
    return p.splits > 1 || p.tiles == CT_GEMM_CL_HUGE;
}

size_t ct_gemm_cl_slices(const ct_context *ctx, ct_gemm_cl_tiles t, size_t m, size_t n, size_t k)
{
    return splits_for(ctx, t, m, n, k, 0);
}

size_t ct_gemm_cl_slice_depth(size_t k, size_t tk, size_t *splits)
{
    return slice_depth(k, tk, splits);
}

int ct_gemm_cl_kernel(ct_context *ctx, int base, const char *name, ct_gemm_cl_tiles t,
                      ct_gemm_cl_tile *ti, ct_kernel_entry **e)
{
    int st = ct_kernel_get(ctx, ct_program_for(ctx, base), name, e);
    if (st)
        return st;
    size_t wg[3] = { 0, 0, 0 };
    cl_int err = clGetKernelWorkGroupInfo((*e)->kernel, ctx->device, CL_KERNEL_COMPILE_WORK_GROUP_SIZE,
                                          sizeof wg, wg, NULL);
    const ct_gemm_cl_params *ps[2] = { &params_cpu, &params_gpu };
    for (int i = 0; i < 2 && err == CL_SUCCESS; i++) {
        *ti = tiles_in(ps[i], t);
        if (wg[0] == ti->wn && wg[1] == ti->wm)
            return CT_OK;
    }
    return ct_fail(ctx, CT_ERR_INTERNAL, "ct_gemm_cl: %s was compiled for work-groups of %zu x %zu, "
                   "which neither tile set of src/ops/gemm_cl.h has: it and cl_kernels/gemm.cl "
                   "disagree", name, wg[0], wg[1]);
}

int ct_gemm_cl_launchable(ct_context *ctx, int base, const char *const names[],
                          ct_gemm_cl_tiles *tiles, ct_gemm_cl_tile *ti)
{
    ct_kernel_entry *e;
    int st = ct_gemm_cl_kernel(ctx, base, names[*tiles], *tiles, ti, &e);
    while (!st && e->max_wg < ti->wm * ti->wn && (*tiles == CT_GEMM_CL_HUGE || *tiles == CT_GEMM_CL_BIG)) {
        /* a device (or kernel) that allows fewer work-items per group */
        *tiles = *tiles == CT_GEMM_CL_HUGE ? CT_GEMM_CL_BIG : CT_GEMM_CL_SMALL;
        st = ct_gemm_cl_kernel(ctx, base, names[*tiles], *tiles, ti, &e);
    }
    if (st)
        return st;
    if (e->max_wg < ti->wm * ti->wn)
        return ct_fail(ctx, CT_ERR_UNSUPPORTED, "ct_gemm_cl: %s needs work-groups of %zu on %s, "
                       "which allows %zu", names[*tiles], ti->wm * ti->wn, ctx->dev.name, e->max_wg);
    return CT_OK;
}

/* Whether the register tiles can index buffers a and b: they fold the
 * offsets into 32-bit indices, which every buffer of a device whose
 * allocations stay below 2^32 floats allows; elsewhere the buffers' own
 * sizes decide. */
static int reg_fits(const ct_context *ctx, cl_mem a, cl_mem b)
{
    if (ctx->dev.max_alloc_bytes / sizeof(float) <= UINT32_MAX)
        return 1;
    size_t sa = 0, sb = 0;
    if (clGetMemObjectInfo(a, CL_MEM_SIZE, sizeof sa, &sa, NULL) != CL_SUCCESS ||
        clGetMemObjectInfo(b, CL_MEM_SIZE, sizeof sb, &sb, NULL) != CL_SUCCESS)
        return 0;
    return sa / sizeof(float) <= UINT32_MAX && sb / sizeof(float) <= UINT32_MAX;
}

/* ct_gemm_cl_launchable for the SGEMM of transposition case tc, its name in
 * *name and its program in *prog; on a register-tile device (or asked) the
 * register tiles, where they can index the operands a and b (else the
 * small tiles) */
static int launchable(ct_context *ctx, ct_gemm_cl_tiles *tiles, int tc, tiles_info *ti, const char **name,
                      int *prog, cl_mem a, cl_mem b)
{
    *prog = ct_program_for(ctx, CT_PROG_gemm); /* the 16-bit variants at 16-bit precision */
    if ((*tiles == CT_GEMM_CL_REG || ct_gemm_cl_reg_device(ctx)) && !reg_fits(ctx, a, b))
        *tiles = CT_GEMM_CL_SMALL;
    else if (ct_gemm_cl_reg_device(ctx) && *tiles != CT_GEMM_CL_VEC)
        *tiles = CT_GEMM_CL_REG;
    if (*tiles == CT_GEMM_CL_VEC) {
        *tiles = CT_GEMM_CL_VEC;
        *ti = vec_tiles[tc];
        *name = vec_names[tc];
        *prog = ct_program_for(ctx, CT_PROG_gemm_reg);
        ct_kernel_entry *e;
        return ct_kernel_get(ctx, *prog, *name, &e);
    }
    if (*tiles == CT_GEMM_CL_REG) {
        *ti = reg_tiles;
        *name = reg_names[tc];
        *prog = ct_program_for(ctx, CT_PROG_gemm_reg);
        ct_kernel_entry *e;
        int st = ct_kernel_get(ctx, *prog, *name, &e);
        if (!st && e->max_wg < ti->wm * ti->wn)
            st = ct_fail(ctx, CT_ERR_UNSUPPORTED, "ct_gemm_cl: %s needs work-groups of %zu on %s, which "
                         "allows %zu", *name, ti->wm * ti->wn, ctx->dev.name, e->max_wg);
        return st;
    }
    const char *const names[4] = { kernel_names[0][tc], kernel_names[1][tc], NULL, kernel_names[3][tc] };
    if (*tiles == CT_GEMM_CL_HUGE && !ct_gemm_cl_has_huge(ctx))
        *tiles = CT_GEMM_CL_BIG;
    int st = ct_gemm_cl_launchable(ctx, CT_PROG_gemm, names, tiles, ti);
    *name = kernel_names[*tiles][tc];
    /* the slices' depth: a multiple of the SGEMM's step (a kernel built
     * with another still sums right: its steps are guarded at the slice's
     * end) */
    ti->tk = mm_tiles_of(ctx, *tiles).tk;
    return st;
}

/* The split-K workspace: one buffer per context, grown on demand, released
 * with the context (an extension slot, cl/runtime.h). */
static const ct_ext_kind workspace_kind = { "GEMM split-K workspace", ct_scratch_release };

int ct_gemm_cl_workspace(ct_context *ctx, size_t floats, cl_mem *out)
{
    return ct_scratch(ctx, &workspace_kind, floats, 1u << 16, out);
}

int ct_gemm_cl_sum(ct_context *ctx, cl_mem ws, size_t s, size_t m, size_t n, float alpha,
                   float beta, cl_mem c, size_t c_off, size_t ldc, const ct_gemm_cl_epi *epi)
{
    cl_mem bias = epi && epi->bias ? epi->bias : c;
    cl_ulong bias_off = epi && epi->bias ? epi->bias_off : 0;
    cl_int has_bias = epi && epi->bias, act = epi ? epi->act : 0;
    cl_int hc = epi && (epi->s16 & CT_S16_C); /* C in 16 bits: the storage variant */
    cl_uint ss = (cl_uint)s, lc = (cl_uint)ldc, mm = (cl_uint)m, nn = (cl_uint)n;
    cl_ulong co = c_off;
    size_t g2[2] = { n, m }, ec = hc ? 2 : sizeof(float);
    ct_launch_bytes(ctx, (s * m * n + (has_bias ? n : 0)) * sizeof(float) + (beta != 0.0f ? m * n * ec : 0),
                    m * n * ec);
    return CT_RUN(ctx, hc ? ct_program_store(ctx, CT_PROG_splitk) : CT_PROG_splitk, "gemm_splitk_sum", 2, g2,
                  NULL, CT_ARG(ws), CT_ARG(ss), CT_ARG(c), CT_ARG(co), CT_ARG(lc), CT_ARG(mm), CT_ARG(nn),
                  CT_ARG(alpha), CT_ARG(beta), CT_ARG(bias), CT_ARG(bias_off), CT_ARG(has_bias), CT_ARG(act),
                  CT_ARG(hc));
}

/* The bytes of an own product's operands: (A, B, C) elements' sizes */
static void operand_sizes(int s16, size_t es[3])
{
    for (int i = 0; i < 3; i++)
        es[i] = s16 & (1 << i) ? 2 : sizeof(float);
}

int ct_gemm_cl_run(ct_context *ctx, ct_gemm_cl_plan plan, int trans_a, int trans_b, size_t m,
                   size_t n, size_t k, float alpha, cl_mem a, size_t a_off, size_t lda, cl_mem b,
                   size_t b_off, size_t ldb, float beta, cl_mem c, size_t c_off, size_t ldc)
{
    return ct_gemm_cl_run_epi(ctx, plan, NULL, trans_a, trans_b, m, n, k, alpha, a, a_off, lda, b,
                              b_off, ldb, beta, c, c_off, ldc);
}

int ct_gemm_cl_run_epi(ct_context *ctx, ct_gemm_cl_plan plan, const ct_gemm_cl_epi *epi, int trans_a,
                       int trans_b, size_t m, size_t n, size_t k, float alpha, cl_mem a, size_t a_off,
                       size_t lda, cl_mem b, size_t b_off, size_t ldb, float beta, cl_mem c,
                       size_t c_off, size_t ldc)
{
    CT_VALIDATE(NULL, ctx);
    if (m == 0 || n == 0)
        return CT_OK;
    if (m > 0x7fffffff || n > 0x7fffffff || k > 0x7fffffff || lda > 0x7fffffff ||
        ldb > 0x7fffffff || ldc > 0x7fffffff)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "ct_gemm_cl: %zu x %zu x %zu (ld %zu, %zu, %zu) "
                       "is too large", m, n, k, lda, ldb, ldc);
    CT_VALIDATE(ctx, a && b && c && (plan.tiles == CT_GEMM_CL_BIG || plan.tiles == CT_GEMM_CL_SMALL ||
                                     plan.tiles == CT_GEMM_CL_HUGE || plan.tiles == CT_GEMM_CL_REG ||
                                     plan.tiles == CT_GEMM_CL_VEC));
    cl_int s16 = epi ? epi->s16 & (CT_S16_A | CT_S16_B | CT_S16_C) : 0;
    if (s16 && !ctx->act16)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "ct_gemm_cl: 16-bit operands (%d) without 16-bit activation "
                       "storage set on the context", (int)s16);
    int t = (trans_a ? 2 : 0) + (trans_b ? 1 : 0);
    tiles_info ti;
    const char *name;
    int prog;
    ct_gemm_cl_tiles asked = plan.tiles;
    int st = launchable(ctx, &plan.tiles, t, &ti, &name, &prog, a, b);
    if (st)
        return st;
    if (plan.tiles != asked)
        plan.splits = splits_for(ctx, plan.tiles, m, n, k, 1);
    size_t s = plan.splits ? plan.splits : 1;
    size_t kc = slice_depth(k, ti.tk, &s);

    cl_mem out = c;
    cl_ulong out_off = c_off, stride = 0;
    cl_uint ldo = (cl_uint)ldc;
    float a_out = alpha, b_out = beta;
    if (s > 1) { /* slices into the workspace (s, m, n), summed below */
        if ((st = ct_gemm_cl_workspace(ctx, s * m * n, &out)))
            return st;
        out_off = 0, stride = (cl_ulong)m * n, ldo = (cl_uint)n;
        a_out = 1.0f, b_out = 0.0f;
    }
    /* the epilogue goes with the pass that writes C */
    cl_mem bias = epi && epi->bias ? epi->bias : c;
    cl_ulong bias_off = epi && epi->bias ? epi->bias_off : 0;
    cl_int has_bias = epi && epi->bias, act = epi ? epi->act : 0;
    cl_int k_bias = s > 1 ? 0 : has_bias, k_act = s > 1 ? 0 : act;
    cl_int k_s16 = s > 1 ? s16 & ~CT_S16_C : s16; /* the slices are float */
    size_t epi_rd = has_bias ? n : 0, es[3];
    operand_sizes(k_s16, es);
    cl_ulong ao = a_off, bo = b_off;
    cl_uint la = (cl_uint)lda, lb = (cl_uint)ldb, mm = (cl_uint)m, nn = (cl_uint)n, kk = (cl_uint)k,
            kcc = (cl_uint)kc;
    cl_int zs = 1; /* z: the k-slice */
    cl_uint nb2 = 1;
    cl_ulong zero = 0;
    size_t global[3] = { ct_cdiv(n, ti.tn) * ti.wn, ct_cdiv(m, ti.tm) * ti.wm, s };
    size_t local[3] = { ti.wn, ti.wm, 1 };
    ct_launch_bytes(ctx, m * k * es[0] + k * n * es[1] + (b_out != 0.0f ? m * n * es[2] : 0) +
                             (s > 1 ? 0 : epi_rd * sizeof(float)),
                    s * m * n * es[2]);
    st = CT_RUN(ctx, prog, name, 3, global, local, CT_ARG(a), CT_ARG(ao),
                CT_ARG(la), CT_ARG(b), CT_ARG(bo), CT_ARG(lb), CT_ARG(out), CT_ARG(out_off),
                CT_ARG(ldo), CT_ARG(stride), CT_ARG(mm), CT_ARG(nn), CT_ARG(kk), CT_ARG(kcc),
                CT_ARG(a_out), CT_ARG(b_out), CT_ARG(bias), CT_ARG(bias_off), CT_ARG(k_bias),
                CT_ARG(k_act), CT_ARG(zs), CT_ARG(nb2), CT_ARG(zero), CT_ARG(zero), CT_ARG(zero),
                CT_ARG(zero), CT_ARG(zero), CT_ARG(zero), CT_ARG(k_s16));
    if (st || s == 1)
        return st;
    return ct_gemm_cl_sum(ctx, out, s, m, n, alpha, beta, c, c_off, ldc, epi);
}

int ct_gemm_cl_batched(ct_context *ctx, int trans_a, int trans_b, size_t m, size_t n, size_t k,
                       float alpha, cl_mem a, size_t a_off, size_t lda, const size_t as[2], cl_mem b,
                       size_t b_off, size_t ldb, const size_t bs[2], float beta, cl_mem c,
                       size_t c_off, size_t ldc, const size_t cs[2], size_t n1, size_t n2, int s16)
{
    CT_VALIDATE(NULL, ctx);
    if (m == 0 || n == 0 || n1 == 0 || n2 == 0)
        return CT_OK;
    cl_int k_s16 = s16 & (CT_S16_A | CT_S16_B | CT_S16_C);
    if (k_s16 && !ctx->act16)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "ct_gemm_cl_batched: 16-bit operands (%d) without 16-bit "
                       "activation storage set on the context", (int)k_s16);
    if (m > 0x7fffffff || n > 0x7fffffff || k > 0x7fffffff || lda > 0x7fffffff ||
        ldb > 0x7fffffff || ldc > 0x7fffffff || n1 > 0xffff || n2 > 0xffff)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "ct_gemm_cl_batched: %zu x %zu of %zu x %zu x %zu "
                       "(ld %zu, %zu, %zu) is too large", n1, n2, m, n, k, lda, ldb, ldc);
    CT_VALIDATE(ctx, a && b && c && as && bs && cs);
    ct_gemm_cl_plan plan = ct_gemm_cl_plan_for(ctx, m, n, k, trans_a, trans_b);
    int t = (trans_a ? 2 : 0) + (trans_b ? 1 : 0);
    tiles_info ti;
    const char *name;
    int prog;
    int st = launchable(ctx, &plan.tiles, t, &ti, &name, &prog, a, b);
    if (st)
        return st;
    cl_ulong ao = a_off, bo = b_off, co = c_off, stride = 0, bias_off = 0;
    cl_ulong s[6] = { as[0], as[1], bs[0], bs[1], cs[0], cs[1] };
    cl_uint la = (cl_uint)lda, lb = (cl_uint)ldb, lc = (cl_uint)ldc, mm = (cl_uint)m,
            nn = (cl_uint)n, kk = (cl_uint)k, nb2 = (cl_uint)n2;
    cl_int zs = 0, none = 0; /* z: the product (i1, i2) */
    size_t count = n1 * n2, es[3];
    operand_sizes(k_s16, es);
    size_t global[3] = { ct_cdiv(n, ti.tn) * ti.wn, ct_cdiv(m, ti.tm) * ti.wm, count };
    size_t local[3] = { ti.wn, ti.wm, 1 };
    ct_launch_bytes(ctx, count * (m * k * es[0] + k * n * es[1] + (beta != 0.0f ? m * n * es[2] : 0)),
                    count * m * n * es[2]);
    return CT_RUN(ctx, prog, name, 3, global, local, CT_ARG(a), CT_ARG(ao), CT_ARG(la),
                  CT_ARG(b), CT_ARG(bo), CT_ARG(lb), CT_ARG(c), CT_ARG(co), CT_ARG(lc),
                  CT_ARG(stride), CT_ARG(mm), CT_ARG(nn), CT_ARG(kk), CT_ARG(kk), CT_ARG(alpha),
                  CT_ARG(beta), CT_ARG(c), CT_ARG(bias_off), CT_ARG(none), CT_ARG(none),
                  CT_ARG(zs), CT_ARG(nb2), CT_ARG(s[0]), CT_ARG(s[1]), CT_ARG(s[2]), CT_ARG(s[3]),
                  CT_ARG(s[4]), CT_ARG(s[5]), CT_ARG(k_s16));
}

int ct_gemm_cl(ct_context *ctx, int trans_a, int trans_b, size_t m, size_t n, size_t k,
               float alpha, cl_mem a, size_t a_off, size_t lda, cl_mem b, size_t b_off,
               size_t ldb, float beta, cl_mem c, size_t c_off, size_t ldc)
{
    CT_VALIDATE(NULL, ctx);
    return ct_gemm_cl_run(ctx, ct_gemm_cl_plan_for(ctx, m, n, k, trans_a, trans_b), trans_a,
                          trans_b, m, n, k, alpha, a, a_off, lda, b, b_off, ldb, beta, c, c_off,
                          ldc);
}
