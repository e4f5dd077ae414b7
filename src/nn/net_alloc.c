/*
 * net_alloc.c - a net's memory plan against its device: the limits (the
 * device's, lowered by CLTRAIN_MEM_LIMIT and CLTRAIN_MAX_ALLOC), whether the
 * plan fits and why not, the largest batch that does, the plan as text, and
 * the allocation of its buffers. The plan itself is made in net.c.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/net.h"
#include "ops/ops.h"

/* "512M", "2G", "1048576": bytes, with binary suffixes K, M, G, T (an
 * optional "iB" or "B" after them). */
static int parse_bytes(const char *s, uint64_t *out)
{
    char *end = NULL;
    if (!s || *s < '0' || *s > '9')
        return 0;
    unsigned long long v = strtoull(s, &end, 10);
    int shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    case 't': case 'T': shift = 40; end++; break;
    default: break;
    }
    if (shift && (!strcmp(end, "iB") || !strcmp(end, "B")))
        end += strlen(end);
    if (*end || v == 0 || v > (UINT64_MAX >> shift))
        return 0;
    *out = (uint64_t)v << shift;
    return 1;
}

/* The limits a plan must meet: the device's, lowered by CLTRAIN_MEM_LIMIT
 * (global memory to use) and CLTRAIN_MAX_ALLOC (bytes per buffer), so a
 * run can keep to a share of a device and tests can pin both. */
int ct_net_plan_limits(ct_context *ctx, ct_net *net)
{
    const ct_device_info *dev = ctx ? ct_context_device(ctx) : NULL;
    net->limit_global = dev ? dev->global_mem_bytes : UINT64_MAX;
    net->limit_alloc = dev ? dev->max_alloc_bytes : UINT64_MAX;
    static const char *const vars[2] = { "CLTRAIN_MEM_LIMIT", "CLTRAIN_MAX_ALLOC" };
    for (int k = 0; k < 2; k++) {
        const char *s = getenv(vars[k]);
        uint64_t v;
        if (!s || !*s)
            continue;
        if (!parse_bytes(s, &v))
            return ct_fail(ctx, CT_ERR_INVALID_ARG, "%s='%s' is not a size. HINT: give bytes or a "
                           "size like 512M or 2G, or unset it", vars[k], s);
        uint64_t *lim = k ? &net->limit_alloc : &net->limit_global;
        if (v < *lim) {
            *lim = v;
            net->limit_env |= 1 << k;
        }
    }
    if (net->limit_alloc > net->limit_global)
        net->limit_alloc = net->limit_global;
    return CT_OK;
}

static double mib(uint64_t bytes)
{
    return (double)bytes / 1048576.0;
}

/* bytes of n elements of arena a */
static uint64_t abytes(const ct_net *net, int a, size_t n)
{
    return (uint64_t)n * ct_net_arena_esize(net, a);
}

uint64_t ct_net_plan_bytes(const ct_net *net)
{
    uint64_t total = 2 * (uint64_t)net->slot_n * sizeof(float);
    for (int a = 0; a < CT_ARENA_COUNT; a++)
        total += abytes(net, a, net->arena_size[a]);
    return total;
}

static size_t largest_chunk(const ct_net *net, int a)
{
    size_t n = 0;
    for (int c = 0; c < net->nchunks[a]; c++)
        n = net->chunk_size[a][c] > n ? net->chunk_size[a][c] : n;
    return n;
}

/* Why the plan exceeds the limits when at most `global` bytes may be used
 * in all (empty when it fits); *batch_helps: whether a smaller batch can
 * help (the parameters do not shrink with it). */
static void misfit(const ct_net *net, uint64_t global, char *why, size_t cap, int *batch_helps)
{
    uint64_t alloc = net->limit_alloc < global ? net->limit_alloc : global;
    why[0] = '\0';
    *batch_helps = 1;
    for (int a = 0; a < CT_ARENA_COUNT; a++) {
        uint64_t big = abytes(net, a, largest_chunk(net, a));
        if (big <= alloc)
            continue;
        if (a <= CT_ARENA_BUFFERS) {
            *batch_helps = 0;
            snprintf(why, cap, "the %s are one buffer of %.2f MiB (the optimizer and checkpoints "
                     "need them flat), more than the %.2f MiB one allocation may have",
                     ct_arena_names[a], mib(big), mib(alloc));
        } else {
            const char *who = net->largest_layer[a];
            snprintf(why, cap, "%s%s%s needs a tensor of %.2f MiB in the %s, more than the %.2f MiB one "
                     "allocation may have", who ? "layer '" : "the largest workspace", who ? who : "",
                     who ? "'" : "", mib(abytes(net, a, net->largest_n[a])), ct_arena_names[a],
                     mib(alloc));
        }
        return;
    }
    if ((uint64_t)net->slot_n * sizeof(float) > alloc) {
        snprintf(why, cap, "a batch slot (input and labels) of %.2f MiB is more than the %.2f MiB one "
                 "allocation may have", mib((uint64_t)net->slot_n * sizeof(float)), mib(alloc));
        return;
    }
    if (ct_net_plan_bytes(net) > global)
        snprintf(why, cap, "it needs %.2f MiB in all, more than the %.2f MiB there are",
                 mib(ct_net_plan_bytes(net)), mib(global));
}

static int fits_at(const ct_net *net, int batch, uint64_t global)
{
    ct_net t;
    int ok = 0, helps;
    char why[8];
    if (!ct_net_plan_grouped(net->ctx, net->model, batch, net->bn_groups, &t)) {
        misfit(&t, global, why, sizeof why, &helps);
        ok = !why[0];
    }
    ct_net_free_plan(&t);
    return ok;
}

int ct_net_largest_batch(const ct_net *net, uint64_t global)
{
    /* the planner does not allocate, so bisect over it: fits(lo), !fits(hi) */
    int g = net->bn_groups > 0 ? net->bn_groups : 1, lo = 0, hi = net->batch / g + 1;
    if (fits_at(net, (hi - 1) * g, global))
        return (hi - 1) * g;
    hi--;
    while (hi - lo > 1) {
        int mid = lo + (hi - lo) / 2;
        if (fits_at(net, mid * g, global))
            lo = mid;
        else
            hi = mid;
    }
    return lo * g;
}

/* "parameters 97.5 MiB, ..., 4391.4 MiB in all" and the limits, for messages */
static void describe(const ct_net *net, char *plan, size_t pcap, char *lim, size_t lcap)
{
    size_t at = 0;
    for (int a = 0; a < CT_ARENA_COUNT && at < pcap; a++) {
        int n = snprintf(plan + at, pcap - at, "%s %.2f MiB", ct_arena_names[a],
                         mib(abytes(net, a, net->arena_size[a])));
        at += n > 0 ? (size_t)n : 0;
        if (net->nchunks[a] > 1 && at < pcap) {
            n = snprintf(plan + at, pcap - at, " in %d buffers", net->nchunks[a]);
            at += n > 0 ? (size_t)n : 0;
        }
        if (at < pcap)
            at += (size_t)snprintf(plan + at, pcap - at, ", ");
    }
    if (at < pcap)
        snprintf(plan + at, pcap - at, "batch slots 2 x %.2f MiB; %.2f MiB in all",
                 mib((uint64_t)net->slot_n * sizeof(float)), mib(ct_net_plan_bytes(net)));
    const ct_device_info *dev = net->ctx ? ct_context_device(net->ctx) : NULL;
    static const char *const env[4] = { "", " (lowered by CLTRAIN_MEM_LIMIT)", " (lowered by CLTRAIN_MAX_ALLOC)",
                                        " (lowered by CLTRAIN_MEM_LIMIT and CLTRAIN_MAX_ALLOC)" };
    snprintf(lim, lcap, "%.2f MiB per allocation and %.2f MiB in all on %s%s", mib(net->limit_alloc),
             mib(net->limit_global), dev ? dev->name : "any device", env[net->limit_env & 3]);
}

int ct_net_check_fit(ct_net *net)
{
    char why[384], plan[768], lim[640];
    int helps;
    misfit(net, net->limit_global, why, sizeof why, &helps);
    if (!why[0])
        return CT_OK;
    describe(net, plan, sizeof plan, lim, sizeof lim);
    int best = helps ? ct_net_largest_batch(net, net->limit_global) : 0;
    if (best > 0)
        return ct_fail(net->ctx, CT_ERR_NO_MEMORY, "the memory plan at batch %d does not fit: %s. Plan: "
                       "%s. Limits: %s. The largest batch that fits is %d. HINT: use a batch of %d or "
                       "less%s", net->batch, why, plan, lim, best, best,
                       net->limit_env ? ", or raise the limit in the environment" : "");
    return ct_fail(net->ctx, CT_ERR_NO_MEMORY, "the memory plan at batch %d does not fit: %s. Plan: %s. "
                   "Limits: %s. No batch fits. HINT: use a smaller model or a device with more memory%s",
                   net->batch, why, plan, lim, net->limit_env ? ", or raise the limit in the environment" : "");
}

/* The device refused memory the limits allowed: report it with the plan and
 * the largest batch whose plan fits in what the device did give. */
static int alloc_failed(ct_net *net, int st, const char *where, uint64_t given)
{
    char cause[512], plan[768], lim[640];
    snprintf(cause, sizeof cause, "%s", ct_context_last_error(net->ctx));
    describe(net, plan, sizeof plan, lim, sizeof lim);
    int best = ct_net_largest_batch(net, given);
    return ct_fail(net->ctx, st, "allocating the memory plan at batch %d failed at %s: %s. Plan: %s. "
                   "Limits: %s. The device gave %.2f MiB before; the largest batch that fits in that is "
                   "%d. HINT: use a batch of %d or less, or set CLTRAIN_MEM_LIMIT to what the device can "
                   "give", net->batch, where, cause, plan, lim, mib(given), best, best);
}

static void release_buffers(ct_net *net)
{
    for (int a = 0; a < CT_ARENA_COUNT; a++) {
        for (int c = 0; c < net->nchunks[a]; c++) {
            if (net->chunk[a][c])
                ct_hold_forget(net->ctx, net->chunk[a][c]);
            ct_buffer_release(&net->chunk[a][c]);
        }
        memset(&net->arena[a], 0, sizeof net->arena[a]);
    }
    ct_buffer_release(&net->slot[0]);
    ct_buffer_release(&net->slot[1]);
}

/* A driver may defer the allocation to first use (pocl maps host memory
 * then): a zero fill of each buffer, waited for, makes that happen here. */
static int touch(ct_net *net, cl_mem mem, size_t n)
{
    int st = CT_OK;
    for (size_t at = 0; at < n && !st; at += (size_t)1 << 30) {
        size_t k = n - at < ((size_t)1 << 30) ? n - at : (size_t)1 << 30;
        st = ct_fill(net->ctx, (ct_buf){ mem, at }, k, 0.0f);
    }
    return st ? st : ct_context_finish(net->ctx);
}

int ct_net_alloc(ct_net *net)
{
    int st = ct_net_check_fit(net);
    if (st)
        return st;
    uint64_t given = 0;
    char where[160];
    for (int a = 0; a < CT_ARENA_COUNT; a++)
        for (int c = 0; c < net->nchunks[a]; c++) {
            uint64_t bytes = abytes(net, a, net->chunk_size[a][c]);
            if ((st = ct_buffer_create(net->ctx, (size_t)bytes, &net->chunk[a][c]))) {
                snprintf(where, sizeof where, "buffer %d of %d of the %s (%.2f MiB)", c + 1,
                         net->nchunks[a], ct_arena_names[a], mib(bytes));
                goto fail;
            }
            given += bytes;
            /* the arenas' host mappings may persist across host ops (the
             * batch slots', written by the transfer queue, may not) */
            ct_hold_register(net->ctx, net->chunk[a][c]);
        }
    for (int k = 0; k < 2; k++) {
        if ((st = ct_buffer_create(net->ctx, net->slot_n * sizeof(float), &net->slot[k]))) {
            snprintf(where, sizeof where, "batch slot %d (%.2f MiB)", k + 1,
                     mib((uint64_t)net->slot_n * sizeof(float)));
            goto fail;
        }
        given += (uint64_t)net->slot_n * sizeof(float);
    }
    given = 0;
    for (int a = 0; a < CT_ARENA_COUNT; a++)
        for (int c = 0; c < net->nchunks[a]; c++) {
            /* touched as floats: a 16-bit chunk's element count is even (16-aligned) */
            size_t nf = (size_t)(abytes(net, a, net->chunk_size[a][c]) / sizeof(float));
            if ((st = touch(net, net->chunk[a][c], nf))) {
                snprintf(where, sizeof where, "the first use of buffer %d of %d of the %s (%.2f MiB)",
                         c + 1, net->nchunks[a], ct_arena_names[a],
                         mib(abytes(net, a, net->chunk_size[a][c])));
                goto fail;
            }
            given += abytes(net, a, net->chunk_size[a][c]);
        }
    for (int k = 0; k < 2; k++) {
        if ((st = touch(net, net->slot[k], net->slot_n))) {
            snprintf(where, sizeof where, "the first use of batch slot %d", k + 1);
            goto fail;
        }
        given += (uint64_t)net->slot_n * sizeof(float);
    }
    for (int a = 0; a < CT_ARENA_COUNT; a++) {
        net->arena[a].mem = net->chunk[a][0];
        net->arena[a].capacity = net->arena[a].used = net->arena_size[a];
        net->arena[a].name = ct_arena_names[a];
    }
    ct_net_patch_buffers(net);
    ct_net_use_slot(net, 0);
    net->allocated = 1;
    return CT_OK;

fail:
    st = alloc_failed(net, st, where, given);
    release_buffers(net);
    return st;
}

/* Appends printf-style text to buf (size cap) at *at; *at counts what the
 * whole text needs even when it is cut short. */
static void put(char *buf, size_t cap, size_t *at, const char *fmt, ...) CT_PRINTF(4, 5);
static void put(char *buf, size_t cap, size_t *at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(*at < cap ? buf + *at : NULL, *at < cap ? cap - *at : 0, fmt, ap);
    va_end(ap);
    if (n > 0)
        *at += (size_t)n;
}

size_t ct_net_format_plan(const ct_net *net, char *buf, size_t cap)
{
    static const char *const names[CT_ARENA_COUNT] = { "parameters", "gradients", "buffers",
                                                        "activations", "activation grads", "scratch",
                                                        "saved state" };
    size_t at = 0;
    if (cap)
        buf[0] = '\0';
    put(buf, cap, &at, "memory plan at batch %d:\n", net->batch);
    double total = 0;
    for (int a = 0; a < CT_ARENA_COUNT; a++) {
        double mb = mib(abytes(net, a, net->arena_size[a]));
        total += mb;
        put(buf, cap, &at, "  %-18s %10.2f MiB", names[a], mb);
        if (net->act16 && (a == CT_ARENA_ACTS || a == CT_ARENA_DACTS))
            put(buf, cap, &at, " %s", ct_precision_str((ct_precision)net->act16));
        /* 16-bit products in the GPU class without the storage: say why */
        if (a == CT_ARENA_ACTS && !net->act16 && net->ctx && net->ctx->act16_why[0])
            put(buf, cap, &at, " float32 (%s)", net->ctx->act16_why);
        if (net->nchunks[a] > 1)
            put(buf, cap, &at, " in %d buffers of at most %.2f MiB", net->nchunks[a],
                mib(abytes(net, a, largest_chunk(net, a))));
        if (a == CT_ARENA_DACTS)
            put(buf, cap, &at, " (shared by liveness; %.2f MiB without)",
                mib(abytes(net, a, net->dacts_unshared)));
        put(buf, cap, &at, "\n");
    }
    double slots = mib(2 * (uint64_t)net->slot_n * sizeof(float));
    total += slots;
    put(buf, cap, &at, "  %-18s %10.2f MiB (two, so uploads overlap compute)\n", "batch slots", slots);
    put(buf, cap, &at, "  %-18s %10.2f MiB (plus optimizer state)\n", "total", total);
    char plan[768], lim[640], why[384];
    int helps;
    describe(net, plan, sizeof plan, lim, sizeof lim);
    put(buf, cap, &at, "  %-18s %s\n", "limits", lim);
    misfit(net, net->limit_global, why, sizeof why, &helps);
    if (!why[0])
        put(buf, cap, &at, "  %-18s yes\n", "fits");
    else if (helps)
        put(buf, cap, &at, "  %-18s no: %s; the largest batch that fits is %d\n", "fits", why,
            ct_net_largest_batch(net, net->limit_global));
    else
        put(buf, cap, &at, "  %-18s no: %s; no batch fits\n", "fits", why);
    return at;
}

void ct_net_release(ct_net *net)
{
    release_buffers(net);
    ct_net_profile(net, 0);
    ct_net_free_plan(net);
    net->allocated = 0;
}
