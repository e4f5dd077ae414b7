/*
 * verify.c - kernels verified on first contact. Before a model trains on a
 * device, each op family it uses is checked against the host reference
 * (the selftest's cases, a bounded number of random shapes, both passes),
 * once per key: the device, its driver, the kernel sources and build
 * options, the device class and the choices the environment makes
 * (CLTRAIN_CONV, CLTRAIN_ATTENTION, CLTRAIN_GPU_GEMM, CLTRAIN_HOST_GEMM,
 * CLTRAIN_HOST_ISA). The verdict is stored in the kernel cache as one small
 * entry per family ("verified-<key>.clbin", the cache's checksummed
 * container), so a later start reads it instead of checking again. A
 * family that computes wrong numbers stops the run with its case and the
 * ways out; the failure is cached too, until the key changes (a driver
 * update, other kernels, another class).
 *
 * The payload: "cltrain-verdict 1\n" then "ok <unix time> <cases>\n" or
 * "fail <unix time> <message>\n" (ct_verdict_parse).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cl/runtime.h"
#include "core/sha256.h"
#include "core/util.h"
#include "nn/layer.h"
#include "train/verify.h"

#define VERDICT_MAGIC "cltrain-verdict 1\n"

/* The check families a layer type runs on (a line each; conv2d's grouped
 * form has its own kernels); a type this table does not know yet runs
 * every family. */
static const struct {
    const char *type, *family;
} type_family[] = {
    { "input", "" },           { "flatten", "" },         { "dense", "dense" },
    { "conv2d", "conv" },      { "conv2d", "gconv" },
    { "batchnorm", "batchnorm" }, { "relu", "act" },
    { "leaky_relu", "act" },   { "sigmoid", "act" },      { "tanh", "act" },
    { "gelu", "act" },         { "dropout", "dropout" },  { "maxpool", "pool" },
    { "avgpool", "pool" },     { "global_avgpool", "pool" }, { "lrn", "lrn" },
    { "add", "eltwise" },      { "shortcut_a", "shortcut" }, { "embedding", "embedding" },
    { "lstm", "lstm" },        { "seqpool", "seqpool" },  { "attention", "attention" },
    { "layernorm", "layernorm" }, { "posembed", "posembed" },
    { "softmax_cross_entropy", "loss" }, { "mse", "loss" }, { "silu", "act" },
    { "hardswish", "act" },    { "relu6", "act" },        { "mul", "eltwise" },
    { "concat", "eltwise" },   { "rmsnorm", "rmsnorm" },
    { "upsample", "upsample" },   { "bce_logits", "loss" },   { "gru", "gru" },
    { "conv_transpose2d", "convt" }, { "conv_transpose2d", "conv" }, { "to_sequence", "transpose" },
};

int ct_verify_mode_parse(const char *s, int *mode)
{
    if (!strcmp(s, "auto"))
        *mode = CT_VERIFY_AUTO;
    else if (!strcmp(s, "always"))
        *mode = CT_VERIFY_ALWAYS;
    else if (!strcmp(s, "off"))
        *mode = CT_VERIFY_OFF;
    else
        return CT_ERR_INVALID_ARG;
    return CT_OK;
}

int ct_verdict_parse(const uint8_t *p, size_t n, ct_verdict *v)
{
    memset(v, 0, sizeof *v);
    size_t m = strlen(VERDICT_MAGIC);
    if (n < m || memcmp(p, VERDICT_MAGIC, m) || n > m + sizeof v->message + 64 || p[n - 1] != '\n')
        return CT_ERR_CORRUPT;
    char line[sizeof v->message + 64];
    memcpy(line, p + m, n - m - 1);
    line[n - m - 1] = '\0';
    if (memchr(line, '\0', n - m - 1) || strchr(line, '\n'))
        return CT_ERR_CORRUPT;
    char *end = NULL;
    const char *rest;
    if (!strncmp(line, "ok ", 3)) {
        v->passed = 1;
        rest = line + 3;
    } else if (!strncmp(line, "fail ", 5)) {
        rest = line + 5;
    } else {
        return CT_ERR_CORRUPT;
    }
    errno = 0;
    long long when = strtoll(rest, &end, 10);
    if (errno || end == rest || *end != ' ' || when < 0)
        return CT_ERR_CORRUPT;
    v->when = (int64_t)when;
    rest = end + 1;
    if (v->passed) {
        long cases = strtol(rest, &end, 10);
        if (end == rest || *end || cases < 0 || cases > 1000000)
            return CT_ERR_CORRUPT;
        v->cases = (int)cases;
    } else {
        if (!*rest)
            return CT_ERR_CORRUPT;
        snprintf(v->message, sizeof v->message, "%s", rest);
    }
    return CT_OK;
}

/* The payload for a verdict; returns its length, 0 if it does not fit. */
static size_t verdict_format(const ct_verdict *v, char *out, size_t cap)
{
    char msg[sizeof v->message];
    snprintf(msg, sizeof msg, "%s", v->message);
    for (char *c = msg; *c; c++)
        if (*c == '\n' || *c == '\r')
            *c = ' ';
    int k = v->passed ? snprintf(out, cap, "%sok %lld %d\n", VERDICT_MAGIC, (long long)v->when, v->cases)
                      : snprintf(out, cap, "%sfail %lld %s\n", VERDICT_MAGIC, (long long)v->when,
                                 msg[0] ? msg : "(no message)");
    return k > 0 && (size_t)k < cap ? (size_t)k : 0;
}

/* The key of one family's verdict on this context (src: the context's
 * ct_sources_digest). */
static void family_key(const ct_context *ctx, const uint8_t src[32], const char *family, uint8_t key[32])
{
    static const char *const envs[] = { "CLTRAIN_CONV", "CLTRAIN_ATTENTION", "CLTRAIN_GPU_GEMM",
                                        "CLTRAIN_HOST_GEMM", "CLTRAIN_HOST_ISA" };
    ct_sha256 s;
    ct_sha256_init(&s);
    ct_sha256_field(&s, "cltrain verified kernels 1");
    ct_sha256_update(&s, src, 32);
    ct_sha256_field(&s, ct_kernels_str(ctx->cls.kernels));
    ct_sha256_field(&s, ct_gemm_path_str(ct_gemm_get_path(ctx)));
    ct_sha256_field(&s, ct_precision_str(ct_context_precision(ctx)));
    /* what runs the host's bf16 products on this CPU (AMX tiles, the dot
     * products or the FMAs): the same device name covers CPUs with and
     * without AMX */
    ct_sha256_field(&s, ct_host_bf16_amx() ? "amx" : ct_host_bf16_dot(NULL) ? "dot" : "fma");
    for (size_t i = 0; i < CT_ARRAY_LEN(envs); i++) {
        const char *e = getenv(envs[i]);
        ct_sha256_field(&s, envs[i]);
        ct_sha256_field(&s, e ? e : "");
    }
    ct_sha256_field(&s, family);
    ct_sha256_final(&s, key);
}

typedef struct capture {
    int seen;
    ct_selftest_result r;
} capture;

static void capture_one(void *user, const ct_selftest_result *r)
{
    capture *c = user;
    if (!c->seen || !r->passed) {
        c->r = *r;
        c->seen = 1;
    }
}

/* Runs one family's check (bounded: two random shapes beside the fixed
 * cases, no finite differences, which check the reference, not the device)
 * at the context's precision: at bf16 or fp16 that covers the products'
 * 16-bit variants and the 16-bit activation storage forms training uses. */
static int check_family(ct_context *ctx, const char *family, ct_verdict *v)
{
    ct_selftest_options so;
    ct_selftest_defaults(&so);
    so.iterations = 2;
    so.finite_diff = 0;
    so.filter = family;
    so.precision = (int)ct_context_precision(ctx);
    capture c;
    memset(&c, 0, sizeof c);
    int st = ct_selftest_run(ctx, &so, capture_one, &c);
    if (st && st != CT_ERR_CORRUPT)
        return st;
    memset(v, 0, sizeof *v);
    v->when = (int64_t)time(NULL);
    v->passed = c.seen && c.r.passed;
    v->cases = c.r.cases;
    snprintf(v->message, sizeof v->message, "%s", c.seen ? c.r.message : "the check ran no case");
    return CT_OK;
}

/* Whether the other device class runs this family right here (it is
 * checked now, and the context's class restored). */
static int other_class_passes(ct_context *ctx, const char *family, ct_kernels *other)
{
    ct_kernels mine = ctx->cls.kernels;
    *other = mine == CT_KERNELS_GPU ? CT_KERNELS_CPU : CT_KERNELS_GPU;
    if (ct_context_set_kernels(ctx, *other))
        return 0;
    ct_verdict v;
    int ok = !check_family(ctx, family, &v) && v.passed;
    ct_context_set_kernels(ctx, mine);
    return ok;
}

static void add_name(char *list, size_t cap, const char *name)
{
    size_t n = strlen(list);
    if (n + strlen(name) + 3 < cap)
        snprintf(list + n, cap - n, "%s%s", n ? ", " : "", name);
}

int ct_verify_model(ct_context *ctx, const ct_model *m, int mode, ct_verify_result *rep)
{
    /* m NULL: every family */
    memset(rep, 0, sizeof *rep);
    const char *env = mode == CT_VERIFY_READ ? NULL : getenv("CLTRAIN_VERIFY");
    if (env && ct_verify_mode_parse(env, &mode))
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "CLTRAIN_VERIFY=%s: expected auto, always or off", env);
    rep->mode = mode;
    if (mode == CT_VERIFY_OFF)
        return CT_OK;
    /* the families, in the selftest's order, with the optimizer's and the
     * element-wise ops every training step runs */
    const char *const *all = ct_selftest_ops();
    size_t nall = 0;
    while (all[nall])
        nall++;
    char want[64] = { 0 };
    if (nall > sizeof want)
        nall = sizeof want;
    for (size_t f = 0; f < nall; f++)
        want[f] = !m || !strcmp(all[f], "optim") || !strcmp(all[f], "eltwise");
    for (size_t i = 0; m && i < m->count; i++) {
        const char *t = m->layers[i].type->name;
        int known = 0;
        for (size_t k = 0; k < CT_ARRAY_LEN(type_family); k++)
            if (!strcmp(type_family[k].type, t)) {
                known = 1;
                for (size_t f = 0; f < nall; f++)
                    want[f] |= !strcmp(all[f], type_family[k].family);
            }
        for (size_t f = 0; f < nall && !known; f++)
            want[f] = 1;
    }
    double t0 = ct_now();
    uint8_t src[32];
    int st = ct_sources_digest(ctx, src);
    if (st)
        return st;
    for (size_t f = 0; f < nall; f++) {
        if (!want[f])
            continue;
        uint8_t key[32];
        family_key(ctx, src, all[f], key);
        ct_verdict v;
        int have = 0;
        if ((mode == CT_VERIFY_AUTO || mode == CT_VERIFY_READ) && ctx->cache_dir) {
            size_t n = 0;
            int rejected = 0;
            uint8_t *p = ct_cache_load(ctx, "verified", key, &n, &rejected);
            have = p && !ct_verdict_parse(p, n, &v);
            if (p && !have)
                ct_log(ctx, CT_LOG_INFO, "verified kernels: an unreadable verdict for %s; checking again",
                       all[f]);
            free(p);
        }
        if (!have && mode == CT_VERIFY_READ) {
            add_name(rep->unverified, sizeof rep->unverified, all[f]);
            continue;
        }
        if (have) {
            add_name(rep->cached, sizeof rep->cached, all[f]);
            if (!rep->cached_since || v.when < rep->cached_since)
                rep->cached_since = v.when;
        } else {
            if ((st = check_family(ctx, all[f], &v)))
                return st;
            add_name(rep->checked, sizeof rep->checked, all[f]);
            if (ctx->cache_dir) {
                char payload[sizeof v.message + 64];
                size_t n = verdict_format(&v, payload, sizeof payload);
                if (n)
                    ct_cache_store(ctx, "verified", key, (const uint8_t *)payload, n);
            }
        }
        if (!v.passed) {
            rep->seconds = ct_now() - t0;
            snprintf(rep->failed, sizeof rep->failed, "%s", all[f]);
            ct_kernels other = ctx->cls.kernels;
            int alt = mode != CT_VERIFY_READ && other_class_passes(ctx, all[f], &other);
            char when[32] = "now";
            if (have) {
                time_t w = (time_t)v.when;
                struct tm tmv;
                if (gmtime_r(&w, &tmv))
                    strftime(when, sizeof when, "on %Y-%m-%d %H:%M UTC", &tmv);
            }
            return ct_fail(ctx, CT_ERR_CORRUPT,
                           "verified kernels: op '%s' computes wrong numbers on %s (%s, driver %s, %s class; "
                           "checked %s): %s. %s. Ways out: %s; update the OpenCL driver; "
                           "or CLTRAIN_VERIFY=off to train anyway (not advised). Please report this line",
                           all[f], ctx->dev.name, ctx->dev.platform_name, ctx->dev.driver_version,
                           ct_kernels_str(ctx->cls.kernels), when, v.message,
                           mode == CT_VERIFY_READ ? "Training refuses this device while the verdict stands"
                                                  : "Training stops here",
                           alt ? (other == CT_KERNELS_CPU ? "CLTRAIN_KERNELS=cpu (the CPU class's kernels "
                                                            "pass this check here)"
                                                          : "CLTRAIN_KERNELS=gpu (the GPU class's kernels "
                                                            "pass this check here)")
                               : "another device (the other class's kernels fail here too)");
        }
    }
    rep->seconds = ct_now() - t0;
    rep->kept = ctx->cache_dir != NULL;
    if (rep->checked[0])
        ct_log(ctx, CT_LOG_INFO, "verified kernels on %s (driver %s, %s class): %s checked in %.2f s%s",
               ctx->dev.name, ctx->dev.driver_version, ct_kernels_str(ctx->cls.kernels), rep->checked,
               rep->seconds, ctx->cache_dir ? "" : " (the kernel cache is off: not kept)");
    if (rep->cached[0]) {
        char when[32] = "?";
        time_t w = (time_t)rep->cached_since;
        struct tm tmv;
        if (gmtime_r(&w, &tmv))
            strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", &tmv);
        ct_log(ctx, CT_LOG_INFO, "verified kernels on %s: %s passed before (cached, since %s)", ctx->dev.name,
               rep->cached, when);
    }
    return CT_OK;
}

int ct_verify(ct_context *ctx, const char *model, int mode, ct_verify_result *result)
{
    CT_VALIDATE(ctx, ctx && result && mode >= CT_VERIFY_AUTO && mode <= CT_VERIFY_READ);
    memset(result, 0, sizeof *result);
    if (!model)
        return ct_verify_model(ctx, NULL, mode, result);
    ct_model *m = NULL;
    int st = ct_model_open(model, &m);
    if (st)
        return ct_fail_keep(ctx, st);
    st = ct_verify_model(ctx, m, mode, result);
    ct_model_free(&m);
    return st;
}
