/*
 * devclass.c - the device class: the one place that decides, per context,
 * which implementation every op uses (see devclass.h). Everything else asks
 * ctx->cls.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl/devclass.h"
#include "cl/runtime.h"

int ct_kernels_parse(const char *s)
{
    if (!s || !*s || !strcmp(s, "auto"))
        return CT_KERNELS_AUTO;
    if (!strcmp(s, "cpu"))
        return CT_KERNELS_CPU;
    if (!strcmp(s, "gpu"))
        return CT_KERNELS_GPU;
    return -1;
}

int ct_gemm_parse(const char *s)
{
    if (!s || !*s || !strcmp(s, "auto"))
        return CT_GEMM_AUTO;
    if (!strcmp(s, "clblast"))
        return CT_GEMM_CLBLAST;
    if (!strcmp(s, "host"))
        return CT_GEMM_HOST;
    return -1;
}

const char *ct_kernels_str(ct_kernels k)
{
    switch (k) {
    case CT_KERNELS_CPU: return "cpu";
    case CT_KERNELS_GPU: return "gpu";
    default: return "auto";
    }
}

int ct_devclass_resolve(const ct_device_info *dev, ct_kernels kernels, ct_gemm_path gemm,
                        int conv_direct, ct_devclass *out, char *why, size_t why_size)
{
    memset(out, 0, sizeof *out);
    if (why_size)
        why[0] = '\0';
    /* the device type decides; CPU-class code on accelerators would be as
     * wrong a guess as on GPUs */
    if (kernels == CT_KERNELS_AUTO)
        kernels = dev->type == CT_DEVICE_CPU ? CT_KERNELS_CPU : CT_KERNELS_GPU;
    int cpu = kernels == CT_KERNELS_CPU;
    /* within the class: the host BLAS on CPU devices (they share host
     * memory by definition; OpenBLAS is 5-10x CLBlast on pocl), CLBlast on
     * everything else, whatever memory it shares with the host */
    if (gemm == CT_GEMM_AUTO)
        gemm = cpu && dev->host_unified_memory ? CT_GEMM_HOST : CT_GEMM_CLBLAST;
    if (gemm == CT_GEMM_HOST && !dev->host_unified_memory) {
        snprintf(why, why_size, "the host GEMM path needs a device that shares host memory; %.120s "
                 "does not. HINT: use CLTRAIN_GEMM=clblast (the default there)", dev->name);
        return CT_ERR_UNSUPPORTED;
    }
    out->kernels = kernels;
    out->gemm = gemm;
    out->row_kernels = cpu;
    out->fuse_bias_act = !cpu;
    /* the host-side ops read and write mapped device buffers, so they go
     * with the host GEMM path (a device sharing host memory) */
    out->host_conv = cpu && gemm == CT_GEMM_HOST && conv_direct;
    out->host_pool = cpu && gemm == CT_GEMM_HOST;
    return CT_OK;
}

int ct_devclass_env(ct_kernels *kernels, ct_gemm_path *gemm, int *conv_direct, char *why,
                    size_t why_size)
{
    const char *k = getenv("CLTRAIN_KERNELS"), *g = getenv("CLTRAIN_GEMM"), *c = getenv("CLTRAIN_CONV");
    int kk = ct_kernels_parse(k), gg = ct_gemm_parse(g);
    if (kk < 0) {
        snprintf(why, why_size, "CLTRAIN_KERNELS='%s': expected auto, cpu or gpu", k);
        return CT_ERR_INVALID_ARG;
    }
    if (gg < 0) {
        snprintf(why, why_size, "CLTRAIN_GEMM='%s': expected clblast, host or auto", g);
        return CT_ERR_INVALID_ARG;
    }
    if (c && *c && strcmp(c, "auto") && strcmp(c, "im2col") && strcmp(c, "lane")) {
        snprintf(why, why_size, "CLTRAIN_CONV='%s': expected auto, im2col or lane", c);
        return CT_ERR_INVALID_ARG;
    }
    *kernels = (ct_kernels)kk;
    *gemm = (ct_gemm_path)gg;
    *conv_direct = c && !strcmp(c, "im2col") ? 0 : c && !strcmp(c, "lane") ? 2 : 1;
    return CT_OK;
}

int ct_device_class(const ct_device_info *dev, ct_kernels *kernels, ct_gemm_path *gemm)
{
    CT_VALIDATE(NULL, dev && kernels && gemm);
    ct_kernels k;
    ct_gemm_path g;
    int conv;
    char why[512];
    ct_devclass cls;
    int st = ct_devclass_env(&k, &g, &conv, why, sizeof why);
    if (!st)
        st = ct_devclass_resolve(dev, k, g, conv, &cls, why, sizeof why);
    if (st)
        return ct_fail(NULL, st, "%s", why);
    *kernels = cls.kernels;
    *gemm = cls.gemm;
    return CT_OK;
}

/* ---- on a context ---- */

static int apply(ct_context *ctx, ct_kernels kernels, ct_gemm_path gemm, int conv_direct)
{
    char why[512];
    ct_devclass cls;
    int st = ct_devclass_resolve(&ctx->dev, kernels, gemm, conv_direct, &cls, why, sizeof why);
    if (st)
        return ct_fail(ctx, st, "%s", why);
    ctx->cls = cls;
    ctx->conv_direct = conv_direct;
    ctx->gemm_asked = gemm;
    return CT_OK;
}

int ct_devclass_init(ct_context *ctx, ct_kernels wish)
{
    ct_kernels k;
    ct_gemm_path g;
    int conv;
    char why[512];
    int st = ct_devclass_env(&k, &g, &conv, why, sizeof why);
    if (st)
        return ct_fail(ctx, st, "%s", why);
    if (wish != CT_KERNELS_AUTO)
        k = wish; /* the API's choice over the environment's */
    return apply(ctx, k, g, conv);
}

ct_kernels ct_context_kernels(const ct_context *ctx)
{
    return ctx ? ctx->cls.kernels : CT_KERNELS_AUTO;
}

int ct_context_set_kernels(ct_context *ctx, ct_kernels kernels)
{
    CT_VALIDATE(ctx, ctx && kernels >= CT_KERNELS_AUTO && kernels <= CT_KERNELS_GPU);
    /* the new class with the GEMM path asked for (not the old class's own
     * choice: the CPU class's host BLAS would otherwise follow into the GPU
     * class), or the new class's own where it does not allow that path */
    ct_gemm_path g = ctx->gemm_asked;
    char why[512];
    ct_devclass probe;
    if (ct_devclass_resolve(&ctx->dev, kernels, g, ctx->conv_direct, &probe, why, sizeof why))
        g = CT_GEMM_AUTO;
    return apply(ctx, kernels, g, ctx->conv_direct);
}

ct_gemm_path ct_gemm_get_path(const ct_context *ctx)
{
    return ctx ? ctx->cls.gemm : CT_GEMM_AUTO;
}

int ct_gemm_set_path(ct_context *ctx, ct_gemm_path path)
{
    CT_VALIDATE(ctx, ctx && path >= CT_GEMM_AUTO && path <= CT_GEMM_HOST);
    return apply(ctx, ctx->cls.kernels, path, ctx->conv_direct);
}
