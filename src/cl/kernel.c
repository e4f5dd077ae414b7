/*
 * kernel.c - kernel objects by name (created once per context) and launches.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl/runtime.h"
#include "core/util.h"

static void ktime_add(struct ct_context *ctx, const char *name, double seconds);

static uint64_t hash_name(int prog, const char *name)
{
    uint64_t h = 1469598103934665603ull ^ (uint64_t)prog;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * 1099511628211ull;
    return h;
}

static int table_grow(struct ct_context *ctx)
{
    size_t cap = ctx->kernel_cap ? ctx->kernel_cap * 2 : 64;
    ct_kernel_entry *t = calloc(cap, sizeof *t);
    if (!t)
        return ct_fail(ctx, CT_ERR_NO_MEMORY, "out of host memory");
    for (size_t i = 0; i < ctx->kernel_cap; i++) {
        ct_kernel_entry *e = &ctx->kernels[i];
        if (!e->name)
            continue;
        size_t j = hash_name(e->prog, e->name) & (cap - 1);
        while (t[j].name)
            j = (j + 1) & (cap - 1);
        t[j] = *e;
    }
    free(ctx->kernels);
    ctx->kernels = t;
    ctx->kernel_cap = cap;
    return CT_OK;
}

int ct_kernel_get(struct ct_context *ctx, int prog, const char *name, ct_kernel_entry **out)
{
    if (ctx->kernel_cap) {
        size_t j = hash_name(prog, name) & (ctx->kernel_cap - 1);
        for (; ctx->kernels[j].name; j = (j + 1) & (ctx->kernel_cap - 1)) {
            if (ctx->kernels[j].prog == prog && !strcmp(ctx->kernels[j].name, name)) {
                *out = &ctx->kernels[j];
                return CT_OK;
            }
        }
    }
    cl_program p;
    int st = ct_program_get(ctx, prog, &p);
    if (st)
        return st;
    cl_int err = CL_SUCCESS;
    cl_kernel k = clCreateKernel(p, name, &err);
    if (err != CL_SUCCESS)
        return ct_fail(ctx, err, "no kernel '%s' in program %s.cl: %s", name,
                       ct_program_names[prog], ct_status_str(err));
    size_t wg = 0;
    if (clGetKernelWorkGroupInfo(k, ctx->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL) != CL_SUCCESS || !wg)
        wg = 1;

    if ((ctx->kernel_count + 1) * 2 > ctx->kernel_cap && (st = table_grow(ctx)) != CT_OK) {
        clReleaseKernel(k);
        return st;
    }
    size_t j = hash_name(prog, name) & (ctx->kernel_cap - 1);
    while (ctx->kernels[j].name)
        j = (j + 1) & (ctx->kernel_cap - 1);
    ct_kernel_entry *e = &ctx->kernels[j];
    e->name = ct_strdup(name);
    if (!e->name) {
        clReleaseKernel(k);
        return ct_fail(ctx, CT_ERR_NO_MEMORY, "out of host memory");
    }
    e->prog = prog;
    e->kernel = k;
    e->max_wg = wg;
    ctx->kernel_count++;
    *out = e;
    return CT_OK;
}

int ct_kernel_pow2_wg(struct ct_context *ctx, int prog, const char *name, size_t cap, size_t want,
                      size_t *wg)
{
    ct_kernel_entry *e;
    int st = ct_kernel_get(ctx, prog, name, &e);
    if (st)
        return st;
    if (e->max_wg < cap)
        cap = e->max_wg;
    if (want && want < cap)
        cap = want;
    size_t w = 1;
    while (w * 2 <= cap)
        w *= 2;
    *wg = w;
    return CT_OK;
}

int ct_run(struct ct_context *ctx, int prog, const char *name, unsigned dims,
           const size_t *global, const size_t *local, size_t nargs, const ct_karg *args)
{
    if (dims < 1 || dims > 3)
        return ct_fail(ctx, CT_ERR_INTERNAL, "kernel %s launched with %u dimensions", name, dims);
    ct_kernel_entry *e;
    int st = ct_kernel_get(ctx, prog, name, &e);
    if (st)
        return st;
    for (size_t i = 0; i < nargs; i++) {
        cl_int err = clSetKernelArg(e->kernel, (cl_uint)i, args[i].size, args[i].ptr);
        if (err != CL_SUCCESS)
            return ct_fail(ctx, err, "setting argument %zu of kernel %s: %s", i, name,
                           ct_status_str(err));
    }

    size_t lsz[3] = { 1, 1, 1 }, gsz[3] = { 1, 1, 1 };
    if (local) {
        for (unsigned d = 0; d < dims; d++)
            lsz[d] = local[d];
    } else if (dims == 1) {
        lsz[0] = e->max_wg < 256 ? e->max_wg : 256;
    } else {
        /* 16x16 (or 8x8 where a kernel is limited, or a row of the largest
         * power of two it allows: Mesa's llvmpipe limits every kernel to 32,
         * and work-groups of one made it launch, and under ASan allocate for,
         * one group per element), remaining dims 1 */
        if (e->max_wg >= 64) {
            lsz[0] = lsz[1] = e->max_wg >= 256 ? 16 : 8;
        } else {
            while (lsz[0] * 2 <= e->max_wg)
                lsz[0] *= 2;
        }
    }
    for (unsigned d = 0; d < dims; d++) {
        if (global[d] == 0)
            return CT_OK; /* nothing to do */
        gsz[d] = (global[d] + lsz[d] - 1) / lsz[d] * lsz[d];
    }
    if ((st = ct_hold_sync(ctx)))
        return st;
    ctx->count.launches++;
    size_t gall = 1, lall = 1;
    for (unsigned d = 0; d < dims; d++)
        gall *= gsz[d], lall *= lsz[d];
    ct_launch_record(ctx, &(ct_launch_rec){ .kernel = name, .global = gall, .local = lall,
                                            .rd = -1, .wr = -1 });
    cl_event ev = NULL;
    double t0 = ctx->ktime.on ? ct_now() : 0;
    cl_int err = clEnqueueNDRangeKernel(ctx->queue, e->kernel, dims, NULL, gsz, lsz, 0, NULL,
                                        ctx->ktime.on ? &ev : NULL);
    if (err != CL_SUCCESS)
        return ct_fail(ctx, err, "launching kernel %s (global %zux%zux%zu, local %zux%zux%zu) "
                       "on %s: %s", name, gsz[0], gsz[1], gsz[2], lsz[0], lsz[1], lsz[2],
                       ctx->dev.name, ct_status_str(err));
    if (ev) {
        err = clWaitForEvents(1, &ev);
        cl_ulong a = 0, b = 0;
        double s;
        if (err == CL_SUCCESS && ctx->queue_profiling &&
            clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof a, &a, NULL) == CL_SUCCESS &&
            clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof b, &b, NULL) == CL_SUCCESS &&
            b >= a + 100) {
            s = (double)(b - a) * 1e-9;
        } else {
            /* no real profile (Mesa 22.3's rusticl reports every kernel as
             * 1 ns, and its event completes before the kernel has run; no
             * device runs a kernel in under 100 ns): the wall time to a
             * marker behind the launch */
            cl_event mark = NULL;
            if (err == CL_SUCCESS && clEnqueueMarkerWithWaitList(ctx->queue, 0, NULL, &mark) == CL_SUCCESS) {
                err = clWaitForEvents(1, &mark);
                clReleaseEvent(mark);
            }
            s = ct_now() - t0;
        }
        clReleaseEvent(ev);
        if (err != CL_SUCCESS)
            return ct_fail(ctx, err, "kernel %s on %s: %s", name, ctx->dev.name, ct_status_str(err));
        ktime_add(ctx, name, s);
    }
    return CT_OK;
}

/* ---- kernel timing ---- */

static void ktime_add(ct_context *ctx, const char *name, double seconds)
{
    for (size_t i = 0; i < ctx->ktime.n; i++)
        if (!strcmp(ctx->ktime.t[i].name, name)) {
            ctx->ktime.t[i].launches++;
            ctx->ktime.t[i].seconds += seconds;
            return;
        }
    if (ctx->ktime.n == ctx->ktime.cap) {
        size_t cap = ctx->ktime.cap ? 2 * ctx->ktime.cap : 64;
        ct_kernel_time *p = realloc(ctx->ktime.t, cap * sizeof *p);
        if (!p)
            return; /* this kernel goes untimed; the launch went on */
        ctx->ktime.t = p;
        ctx->ktime.cap = cap;
    }
    ctx->ktime.t[ctx->ktime.n++] = (ct_kernel_time){ name, 1, seconds };
}

void ct_ktime_start(ct_context *ctx)
{
    ctx->ktime.n = 0;
    ctx->ktime.on = 1;
}

void ct_ktime_stop(ct_context *ctx)
{
    ctx->ktime.on = 0;
}

int ct_ktime_end(ct_context *ctx, const char *name, double t0)
{
    if (!ctx->ktime.on)
        return CT_OK;
    cl_int err = clFinish(ctx->queue);
    if (err != CL_SUCCESS)
        return ct_cl_fail(ctx, err, name);
    ktime_add(ctx, name, ct_now() - t0);
    return CT_OK;
}

void ct_launch_record(ct_context *ctx, const ct_launch_rec *r)
{
    if (ctx->lrec.on && !ctx->lrec.mute) {
        if (ctx->lrec.n == ctx->lrec.cap) {
            size_t cap = ctx->lrec.cap ? 2 * ctx->lrec.cap : 256;
            ct_launch_rec *p = realloc(ctx->lrec.recs, cap * sizeof *p);
            if (!p) {
                ctx->lrec.on = 0; /* the records stop; the launch goes on */
                goto clear;
            }
            ctx->lrec.recs = p;
            ctx->lrec.cap = cap;
        }
        ct_launch_rec *o = &ctx->lrec.recs[ctx->lrec.n++];
        *o = *r;
        o->layer = ctx->lrec.layer;
        if (o->rd < 0)
            o->rd = ctx->lrec.rd;
        if (o->wr < 0)
            o->wr = ctx->lrec.wr;
    }
clear:
    ctx->lrec.rd = ctx->lrec.wr = -1;
}

int ct_launch_recording(ct_context *ctx, int on)
{
    if (on)
        ctx->lrec.n = 0;
    ctx->lrec.on = on;
    return CT_OK;
}
