/*
 * context.c - context creation on one selected device, logging, buffers.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl/runtime.h"

#include <clblast_c.h>
#include <stdatomic.h>

#include "core/blasctl.h"

/* Contexts alive in this process: CLBlast caches its programs and kernels
 * per context in static tables; the last context to go clears them, or
 * they would be released at exit, after the OpenCL runtime may have gone
 * (Oclgrind's heap was corrupted that way). */
static atomic_int live_contexts;

/* the sink ct_fail copies messages through (core/error.h) */
static void store_error(struct ct_context *ctx, const char *message)
{
    snprintf(ctx->last_error, sizeof ctx->last_error, "%s", message);
}

void ct_log(struct ct_context *ctx, int level, const char *fmt, ...)
{
    /* no callback: the library never prints, so the message is dropped */
    if (level > ctx->log_level || !ctx->log)
        return;
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    ctx->log(ctx->log_user, level, msg);
}

void *ct_context_ext(const struct ct_context *ctx, const ct_ext_kind *kind)
{
    for (size_t i = 0; i < CT_CONTEXT_EXTS; i++)
        if (ctx->ext[i].kind == kind)
            return ctx->ext[i].state;
    return NULL;
}

int ct_context_ext_set(struct ct_context *ctx, const ct_ext_kind *kind, void *state)
{
    size_t free_slot = CT_CONTEXT_EXTS;
    for (size_t i = 0; i < CT_CONTEXT_EXTS; i++) {
        if (ctx->ext[i].kind == kind) {
            ctx->ext[i].state = state;
            if (!state)
                ctx->ext[i].kind = NULL;
            return CT_OK;
        }
        if (!ctx->ext[i].kind && free_slot == CT_CONTEXT_EXTS)
            free_slot = i;
    }
    if (!state)
        return CT_OK;
    if (free_slot == CT_CONTEXT_EXTS)
        return ct_fail(ctx, CT_ERR_INTERNAL, "no free slot in the context for the %s state "
                       "(CT_CONTEXT_EXTS is %d)", kind->name, CT_CONTEXT_EXTS);
    ctx->ext[free_slot].kind = kind;
    ctx->ext[free_slot].state = state;
    return CT_OK;
}

int ct_cl_fail(struct ct_context *ctx, cl_int err, const char *what)
{
    const char *hint = "";
    if (err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES ||
        err == CL_INVALID_BUFFER_SIZE)
        hint = " HINT: the device ran out of memory or resources; try a smaller batch";
    return ct_fail(ctx, err, "%s failed on %s: %s.%s", what, ctx ? ctx->dev.name : "?",
                   ct_status_str(err), hint);
}

void ct_context_defaults(ct_context_options *o)
{
    memset(o, 0, sizeof *o);
    o->cache = CT_CACHE_AUTO;
    o->log_level = CT_LOG_WARN;
}

static int pick_device(const char *selector, ct_device_info *out)
{
    ct_device_info *devs = NULL;
    size_t count = 0, idx[2], n = 0;
    int st = ct_device_list(&devs, &count);
    if (st)
        return st;
    st = ct_device_select(devs, count, selector, idx, CT_ARRAY_LEN(idx), &n);
    if (st == CT_OK && n != 1)
        st = ct_fail(NULL, CT_ERR_INVALID_ARG,
                     "device selector '%s' names %zu devices; this command uses one. HINT: "
                     "select one, e.g. by P:D from `cltrain --devices`",
                     selector ? selector : "", n);
    if (st == CT_OK)
        *out = devs[idx[0]];
    ct_device_list_free(&devs);
    return st;
}

int ct_context_create(const ct_context_options *options, ct_context **out)
{
    ct_error_set_sink(store_error);
    CT_VALIDATE(NULL, out);
    *out = NULL;
    ct_context_options defaults;
    if (!options) {
        ct_context_defaults(&defaults);
        options = &defaults;
    }
    CT_VALIDATE(NULL, options->cache >= CT_CACHE_AUTO && options->cache <= CT_CACHE_OFF);
    CT_VALIDATE(NULL, options->kernels >= CT_KERNELS_AUTO && options->kernels <= CT_KERNELS_GPU);

    ct_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return ct_fail(NULL, CT_ERR_NO_MEMORY, "out of host memory creating a context");
    ctx->lrec.rd = ctx->lrec.wr = -1;
    /* cltrain calls the BLAS single-threaded on its own pool: OpenBLAS's
     * idle workers would spin through the first tenth of a second,
     * beside the OpenCL runtime's threads (core/blasctl.h) */
    ct_blas_quiet();
    ctx->log = options->log;
    ctx->log_user = options->log_user;
    ctx->log_level = options->log_level;

    cl_int err = CL_SUCCESS;
    int st = pick_device(options->device, &ctx->dev);
    if (st)
        goto fail;
    ctx->device = ctx->dev.cl_device;

    cl_context_properties props[] = { CL_CONTEXT_PLATFORM,
                                      (cl_context_properties)ctx->dev.cl_platform, 0 };
    ctx->cl = clCreateContext(props, 1, &ctx->device, NULL, NULL, &err);
    if (err != CL_SUCCESS) {
        st = ct_cl_fail(ctx, err, "clCreateContext");
        goto fail;
    }
    ctx->queue = clCreateCommandQueue(ctx->cl, ctx->device,
                                      options->profiling ? CL_QUEUE_PROFILING_ENABLE : 0, &err);
    if (err != CL_SUCCESS) {
        st = ct_cl_fail(ctx, err, "clCreateCommandQueue");
        goto fail;
    }

    ctx->queue_profiling = options->profiling != 0;
    ctx->transfer = clCreateCommandQueue(ctx->cl, ctx->device, 0, &err);
    if (err != CL_SUCCESS) {
        st = ct_cl_fail(ctx, err, "clCreateCommandQueue (transfers)");
        goto fail;
    }

    ctx->prelude = ct_prelude_make(&ctx->dev);
    if (!ctx->prelude) {
        st = ct_fail(ctx, CT_ERR_NO_MEMORY, "out of host memory");
        goto fail;
    }
    /* CLTRAIN_BUILD_OPTIONS: more options for every program, after the
     * caller's (compiler flags measured without a rebuild; they are part
     * of the kernel cache's key) */
    const char *eo = getenv("CLTRAIN_BUILD_OPTIONS");
    int n = snprintf(ctx->build_options, sizeof ctx->build_options, "-cl-std=CL1.2%s%s%s%s",
                     options->build_options ? " " : "",
                     options->build_options ? options->build_options : "",
                     eo && *eo ? " " : "", eo && *eo ? eo : "");
    if (n < 0 || (size_t)n >= sizeof ctx->build_options) {
        st = ct_fail(ctx, CT_ERR_INVALID_ARG, "build options too long (%d bytes)", n);
        goto fail;
    }

    const char *kdir = options->kernel_dir ? options->kernel_dir : getenv("CLTRAIN_KERNEL_DIR");
    if (kdir && *kdir) {
        char probe[4096];
        snprintf(probe, sizeof probe, "%s/.", kdir);
        FILE *f = fopen(probe, "r");
        if (!f) {
            st = ct_fail(ctx, CT_ERR_IO, "kernel directory '%s' (CLTRAIN_KERNEL_DIR) cannot be "
                         "opened. HINT: point it at a directory of .cl files, or unset it",
                         kdir);
            goto fail;
        }
        fclose(f);
        ctx->kernel_dir = ct_strdup(kdir);
    }

    st = ct_cache_setup(ctx, options->cache_dir, options->cache);
    if (st)
        goto fail;

    if ((st = ct_devclass_init(ctx, (ct_kernels)options->kernels)))
        goto fail;

    /* eagerly: the programs of cl_kernels/; their 16-bit variants wait
     * for a 16-bit product */
    for (int i = 0; i < CT_PROG_BASE_COUNT && !options->lazy_kernels; i++) {
        cl_program p;
        if ((st = ct_program_get(ctx, i, &p)) != CT_OK)
            goto fail;
    }
    atomic_fetch_add(&live_contexts, 1);
    ctx->live = 1;
    *out = ctx;
    return CT_OK;

fail:
    ct_fail_keep(NULL, st); /* the thread-local message already holds the reason */
    ct_context_free(&ctx);
    return st;
}

void ct_context_free(ct_context **pctx)
{
    if (!pctx || !*pctx)
        return;
    ct_context *ctx = *pctx;
    ct_hold_release(ctx);
    if (ctx->queue)
        clFinish(ctx->queue);
    for (size_t i = 0; i < ctx->kernel_cap; i++) {
        if (ctx->kernels[i].kernel)
            clReleaseKernel(ctx->kernels[i].kernel);
        free(ctx->kernels[i].name);
    }
    free(ctx->kernels);
    free(ctx->lrec.recs);
    free(ctx->ktime.t);
    if (ctx->ones)
        clReleaseMemObject(ctx->ones);
    if (ctx->gemm_tmp)
        clReleaseMemObject(ctx->gemm_tmp);
    for (size_t i = CT_CONTEXT_EXTS; i-- > 0;)
        if (ctx->ext[i].kind && ctx->ext[i].state)
            ctx->ext[i].kind->release(ctx->ext[i].state);
    ct_programs_release(ctx);
    if (ctx->live && atomic_fetch_sub(&live_contexts, 1) == 1)
        CLBlastClearCache();
    if (ctx->transfer) {
        clFinish(ctx->transfer);
        clReleaseCommandQueue(ctx->transfer);
    }
    if (ctx->queue)
        clReleaseCommandQueue(ctx->queue);
    if (ctx->cl)
        clReleaseContext(ctx->cl);
    free(ctx->prelude);
    free(ctx->cache_dir);
    free(ctx->kernel_dir);
    free(ctx);
    *pctx = NULL;
}

const char *ct_context_last_error(const ct_context *ctx)
{
    return ctx ? ctx->last_error : "";
}

const ct_device_info *ct_context_device(const ct_context *ctx)
{
    return ctx ? &ctx->dev : NULL;
}

cl_context ct_context_cl(const ct_context *ctx)
{
    return ctx ? ctx->cl : NULL;
}

cl_command_queue ct_context_queue(const ct_context *ctx)
{
    return ctx ? ctx->queue : NULL;
}

const char *ct_context_cache_dir(const ct_context *ctx)
{
    return ctx ? ctx->cache_dir : NULL;
}

int ct_event_wait(ct_context *ctx, cl_event ev, const char *what)
{
    if (!ev)
        return CT_OK;
    cl_int state = CL_QUEUED;
    cl_int err = clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof state, &state, NULL);
    if (err == CL_SUCCESS && state == CL_COMPLETE)
        return CT_OK;
    ct_count_blocking(ctx);
    err = clWaitForEvents(1, &ev);
    return err == CL_SUCCESS ? CT_OK : ct_cl_fail(ctx, err, what);
}

void ct_context_counters(const ct_context *ctx, ct_counters *counters)
{
    if (counters)
        *counters = ctx ? ctx->count : (ct_counters){ 0, 0, 0, 0 };
}

int ct_context_finish(ct_context *ctx)
{
    CT_VALIDATE(ctx, ctx);
    ct_count_blocking(ctx);
    /* a marker waited for in place of clFinish (the queue is in order, so
     * it completes after everything before it): Mesa 22.3's rusticl returned
     * from clFinish before commands that waited on another queue's event
     * (the transfer queue's batch upload) had run; waiting for a marker
     * behind them does not. clFinish only where the marker is refused. */
    cl_event mark = NULL;
    cl_int err = clEnqueueMarkerWithWaitList(ctx->queue, 0, NULL, &mark);
    if (err == CL_SUCCESS) {
        err = clWaitForEvents(1, &mark);
        clReleaseEvent(mark);
        return err == CL_SUCCESS ? CT_OK : ct_cl_fail(ctx, err, "clWaitForEvents (the queue's end)");
    }
    err = clFinish(ctx->queue);
    return err == CL_SUCCESS ? CT_OK : ct_cl_fail(ctx, err, "clFinish");
}

int ct_context_set_act16(struct ct_context *ctx, int act16)
{
    static const char *const fmt[] = { "fp32", "bf16", "fp16" }; /* ct_precision's names */
    CT_VALIDATE(ctx, ctx && act16 >= CT_PRECISION_FP32 && act16 <= CT_PRECISION_FP16);
    if (act16 && ctx->cls.kernels != CT_KERNELS_GPU)
        return ct_fail(ctx, CT_ERR_UNSUPPORTED, "16-bit activation storage (%s) runs on the GPU "
                       "class's kernels; this context has the %s class: HINT: CLTRAIN_KERNELS=gpu",
                       fmt[act16], ct_kernels_str(ctx->cls.kernels));
    if (act16 && ctx->cls.gemm == CT_GEMM_HOST)
        return ct_fail(ctx, CT_ERR_UNSUPPORTED, "16-bit activation storage (%s) needs the device's own "
                       "products (they read 16-bit operands); this context's run on the host BLAS: "
                       "HINT: CLTRAIN_GEMM=clblast", fmt[act16]);
    if (act16 && act16 != ctx->precision)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "16-bit activation storage (%s) goes with products "
                       "in the same format; the context's precision is %s", fmt[act16],
                       ctx->precision >= 0 && ctx->precision <= 2 ? fmt[ctx->precision] : "?");
    ctx->act16 = act16;
    return CT_OK;
}

int ct_context_build_all(ct_context *ctx)
{
    CT_VALIDATE(ctx, ctx);
    for (int i = 0; i < CT_PROG_COUNT; i++) {
        cl_program p;
        int st = ct_program_get(ctx, i, &p);
        if (st)
            return st;
    }
    return CT_OK;
}

int ct_context_program_info(const ct_context *ctx, size_t index, ct_program_info *info)
{
    CT_VALIDATE(NULL, ctx && info && index < CT_PROG_COUNT);
    *info = ctx->pinfo[index];
    info->name = ct_program_names[index];
    return CT_OK;
}

int ct_buffer_create(ct_context *ctx, size_t bytes, cl_mem *buffer)
{
    CT_VALIDATE(ctx, ctx && buffer && bytes > 0);
    *buffer = NULL;
    if (bytes > ctx->dev.max_alloc_bytes)
        return ct_fail(ctx, CL_INVALID_BUFFER_SIZE,
                       "a buffer of %zu bytes exceeds the largest allocation %s allows "
                       "(%llu bytes). HINT: use a smaller batch or model",
                       bytes, ctx->dev.name, (unsigned long long)ctx->dev.max_alloc_bytes);
    cl_int err = CL_SUCCESS;
    *buffer = clCreateBuffer(ctx->cl, CL_MEM_READ_WRITE, bytes, NULL, &err);
    if (err != CL_SUCCESS) {
        *buffer = NULL;
        char what[96];
        snprintf(what, sizeof what, "allocating a buffer of %zu bytes", bytes);
        return ct_cl_fail(ctx, err, what);
    }
    return CT_OK;
}

void ct_buffer_release(cl_mem *buffer)
{
    if (buffer && *buffer) {
        clReleaseMemObject(*buffer);
        *buffer = NULL;
    }
}

void ct_hold_register(ct_context *ctx, cl_mem mem)
{
    if (!ctx->cls.host_pool || !mem || ctx->nheld == CT_HELD_MAX || ct_hold_index(ctx, mem) >= 0)
        return;
    size_t bytes = 0;
    if (clGetMemObjectInfo(mem, CL_MEM_SIZE, sizeof bytes, &bytes, NULL) != CL_SUCCESS || !bytes)
        return;
    ctx->held[ctx->nheld].mem = mem;
    ctx->held[ctx->nheld].bytes = bytes;
    ctx->held[ctx->nheld].ptr = NULL;
    ctx->nheld++;
}

int ct_hold_index(const ct_context *ctx, cl_mem mem)
{
    for (int i = 0; i < ctx->nheld; i++)
        if (ctx->held[i].mem == mem)
            return i;
    return -1;
}

static int hold_unmap(ct_context *ctx, int i)
{
    if (!ctx->held[i].ptr)
        return CT_OK;
    cl_int err = clEnqueueUnmapMemObject(ctx->queue, ctx->held[i].mem, ctx->held[i].ptr, 0, NULL, NULL);
    ctx->held[i].ptr = NULL;
    ctx->nheld_mapped--;
    return err == CL_SUCCESS ? CT_OK : ct_cl_fail(ctx, err, "unmapping a held buffer");
}

int ct_hold_release(ct_context *ctx)
{
    int st = CT_OK;
    for (int i = 0; i < ctx->nheld; i++) {
        int s2 = hold_unmap(ctx, i);
        st = st ? st : s2;
    }
    return st;
}

int ct_hold_forget(ct_context *ctx, cl_mem mem)
{
    int i = mem ? ct_hold_index(ctx, mem) : -1;
    if (i < 0)
        return CT_OK;
    int st = hold_unmap(ctx, i);
    ctx->held[i] = ctx->held[--ctx->nheld];
    return st;
}

int ct_buffer_write(ct_context *ctx, cl_mem buffer, size_t offset, size_t bytes, const void *src)
{
    CT_VALIDATE(ctx, ctx && buffer && (src || !bytes));
    if (!bytes)
        return CT_OK;
    int st = ct_hold_sync(ctx);
    if (st)
        return st;
    ct_count_blocking(ctx);
    ct_count_h2d(ctx, bytes);
    cl_int err = clEnqueueWriteBuffer(ctx->queue, buffer, CL_TRUE, offset, bytes, src, 0, NULL, NULL);
    return err == CL_SUCCESS ? CT_OK : ct_cl_fail(ctx, err, "clEnqueueWriteBuffer");
}

int ct_buffer_read(ct_context *ctx, cl_mem buffer, size_t offset, size_t bytes, void *dst)
{
    CT_VALIDATE(ctx, ctx && buffer && (dst || !bytes));
    if (!bytes)
        return CT_OK;
    int st = ct_hold_sync(ctx);
    if (st)
        return st;
    ct_count_blocking(ctx);
    ctx->count.d2h_bytes += bytes;
    cl_int err = clEnqueueReadBuffer(ctx->queue, buffer, CL_TRUE, offset, bytes, dst, 0, NULL, NULL);
    return err == CL_SUCCESS ? CT_OK : ct_cl_fail(ctx, err, "clEnqueueReadBuffer");
}
