/*
 * cltrain - the command-line tool. It uses only the public API.
 *
 * Exit codes: 0 success, 1 an error (the message says what to do), 2 a
 * usage error (a bad flag or argument).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cltrain/cltrain.h>

#include "cli.h"
#include "cli_args.h"

static int usage_error(const char *err)
{
    fprintf(stderr, "cltrain: %s\nRun `cltrain --help` for usage.\n", err);
    return 2;
}

void json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

/* The library's warnings and errors (ct_context_options.log), one line each
 * on stderr. */
static void log_line(void *user, int level, const char *message)
{
    (void)user;
    static const char *const names[] = { "error", "warning", "info", "debug" };
    fprintf(stderr, "cltrain: %s: %s\n", names[level < 0 ? 0 : level > 3 ? 3 : level], message);
}

static double mib(uint64_t bytes)
{
    return (double)bytes / (1024.0 * 1024.0);
}

static int cmd_devices(int json)
{
    ct_device_info *devs = NULL;
    size_t n = 0;
    int st = ct_device_list(&devs, &n);
    if (st) {
        fprintf(stderr, "cltrain: %s\n", ct_last_error());
        return 1;
    }
    if (json) {
        printf("[");
        for (size_t i = 0; i < n; i++) {
            const ct_device_info *d = &devs[i];
            printf("%s\n  {\"selector\": \"%u:%u\", \"type\": \"%s\", \"name\": ", i ? "," : "",
                   d->platform_index, d->device_index, ct_device_type_str(d->type));
            json_string(d->name);
            printf(", \"vendor\": ");
            json_string(d->vendor);
            printf(", \"platform\": ");
            json_string(d->platform_name);
            printf(", \"platform_version\": ");
            json_string(d->platform_version);
            printf(", \"device_version\": ");
            json_string(d->device_version);
            printf(", \"driver_version\": ");
            json_string(d->driver_version);
            printf(", \"opencl_c_version\": ");
            json_string(d->opencl_c_version);
            printf(", \"compute_units\": %u, \"max_clock_mhz\": %u, \"global_mem_bytes\": %llu, "
                   "\"max_alloc_bytes\": %llu, \"local_mem_bytes\": %llu, "
                   "\"max_work_group_size\": %zu, \"fp16\": %s, \"fp64\": %s, "
                   "\"subgroups\": %s, \"host_unified_memory\": %s",
                   d->compute_units, d->max_clock_mhz, (unsigned long long)d->global_mem_bytes,
                   (unsigned long long)d->max_alloc_bytes, (unsigned long long)d->local_mem_bytes,
                   d->max_work_group_size, d->fp16 ? "true" : "false", d->fp64 ? "true" : "false",
                   d->subgroups ? "true" : "false", d->host_unified_memory ? "true" : "false");
            ct_kernels k;
            ct_gemm_path g;
            if (ct_device_class(d, &k, &g) == CT_OK)
                printf(", \"kernels\": \"%s\", \"gemm\": \"%s\", \"host_gemm\": \"%s\", "
                       "\"host_blas\": \"%s\"}", ct_kernels_str(k), ct_gemm_path_str(g),
                       ct_host_gemm_str(), ct_host_blas_core());
            else
                printf(", \"kernels\": null, \"gemm\": null, \"host_gemm\": \"%s\", "
                       "\"host_blas\": \"%s\"}", ct_host_gemm_str(), ct_host_blas_core());
        }
        printf("%s]\n", n ? "\n" : "");
    } else if (n == 0) {
        printf("OpenCL platforms were found, but none has a device.\n");
    } else {
        for (size_t i = 0; i < n; i++) {
            const ct_device_info *d = &devs[i];
            ct_kernels k = CT_KERNELS_AUTO;
            ct_gemm_path g = CT_GEMM_AUTO;
            int class_ok = ct_device_class(d, &k, &g) == CT_OK;
            printf("%u:%u  %-3s  %s | %s | driver %s | %s | %u CU @ %u MHz | mem %.0f MiB, "
                   "max alloc %.0f MiB, local %.0f KiB | max WG %zu | fp16 %s, fp64 %s, "
                   "subgroups %s | kernels %s, GEMM %s%s%s%s%s\n",
                   d->platform_index, d->device_index, ct_device_type_str(d->type), d->name,
                   d->vendor, d->driver_version, d->opencl_c_version, d->compute_units,
                   d->max_clock_mhz, mib(d->global_mem_bytes), mib(d->max_alloc_bytes),
                   (double)d->local_mem_bytes / 1024.0, d->max_work_group_size,
                   d->fp16 ? "yes" : "no", d->fp64 ? "yes" : "no", d->subgroups ? "yes" : "no",
                   class_ok ? ct_kernels_str(k) : "?", class_ok ? ct_gemm_path_str(g) : "?",
                   class_ok && g == CT_GEMM_HOST ? " " : "",
                   class_ok && g == CT_GEMM_HOST && !strcmp(ct_host_gemm_str(), "avx512") &&
                           k == CT_KERNELS_CPU ? "avx512 + " : "",
                   class_ok && g == CT_GEMM_HOST ? "OpenBLAS " : "",
                   class_ok && g == CT_GEMM_HOST ? ct_host_blas_core() : "");
        }
    }
    ct_device_list_free(&devs);
    return 0;
}

static const char *origin_str(ct_program_origin o)
{
    switch (o) {
    case CT_PROGRAM_CACHE_HIT: return "cache hit";
    case CT_PROGRAM_COMPILED: return "compiled";
    case CT_PROGRAM_CACHE_REJECTED: return "cache rejected, compiled";
    default: return "not built";
    }
}

static int cmd_kernels(const cli_args *a)
{
    int json = a->json;
    ct_context_options o;
    ct_context_defaults(&o);
    o.device = a->device;
    o.lazy_kernels = 1;
    o.log = log_line;
    ct_context *ctx = NULL;
    if (ct_context_create(&o, &ctx)) {
        fprintf(stderr, "cltrain: %s\n", ct_last_error());
        return 1;
    }
    const ct_device_info *d = ct_context_device(ctx);
    int st = ct_context_build_all(ctx);
    size_t n = ct_program_count();
    double total = 0;
    if (json)
        printf("{\"device\": \"%u:%u\", \"cache_dir\": ", d->platform_index, d->device_index);
    else
        printf("device %u:%u %s; cache %s\n", d->platform_index, d->device_index, d->name,
               ct_context_cache_dir(ctx) ? ct_context_cache_dir(ctx) : "off");
    if (json) {
        if (ct_context_cache_dir(ctx))
            json_string(ct_context_cache_dir(ctx));
        else
            printf("null");
        printf(", \"programs\": [");
    }
    for (size_t i = 0; i < n; i++) {
        ct_program_info pi;
        ct_context_program_info(ctx, i, &pi);
        total += pi.build_seconds;
        if (json)
            printf("%s{\"name\": \"%s\", \"origin\": \"%s\", \"seconds\": %.6f, \"source_bytes\": %zu}",
                   i ? ", " : "", pi.name, origin_str(pi.origin), pi.build_seconds, pi.source_bytes);
        else
            printf("  %-16s %-26s %8.3f s  %7zu bytes%s\n", pi.name, origin_str(pi.origin),
                   pi.build_seconds, pi.source_bytes, pi.from_kernel_dir ? "  (CLTRAIN_KERNEL_DIR)" : "");
    }
    if (json)
        printf("], \"total_seconds\": %.6f, \"ok\": %s}\n", total, st ? "false" : "true");
    else
        printf("  %-16s %-26s %8.3f s\n", "total", "", total);
    if (st)
        fprintf(stderr, "cltrain: %s\n", ct_context_last_error(ctx));
    ct_context_free(&ctx);
    return st ? 1 : 0;
}

static int cmd_zoo(const cli_args *a)
{
    if (a->name) {
        const char *text = ct_zoo_text(a->name);
        if (!text) {
            fprintf(stderr, "cltrain: no model '%s' in the zoo. HINT: `cltrain zoo` lists them\n", a->name);
            return 1;
        }
        fputs(text, stdout);
        return 0;
    }
    for (const char *const *n = ct_zoo_names(); *n; n++)
        printf("%-14s %s\n", *n, ct_zoo_description(*n));
    return 0;
}

/* a column as wide as its longest entry (dotted names run long), at least w */
static int column(int w, const char *text)
{
    int n = (int)strlen(text);
    return n > w ? n : w;
}

static void print_layers(const ct_model *m)
{
    int wn = 16, wr = 20;
    for (size_t i = 0; i < ct_model_layer_count(m); i++) {
        ct_layer_info li;
        ct_model_layer_info(m, i, &li);
        wn = column(wn, li.name);
        wr = column(wr, li.inputs);
    }
    printf("%-*s %-22s %-*s %-16s %12s\n", wn, "layer", "type", wr, "reads", "output", "params");
    for (size_t i = 0; i < ct_model_layer_count(m); i++) {
        ct_layer_info li;
        ct_model_layer_info(m, i, &li);
        char shape[64];
        int at = 0;
        for (int d = 0; d < li.ndim && at < (int)sizeof shape; d++)
            at += snprintf(shape + at, sizeof shape - (size_t)at, "%s%d", d ? "x" : "", li.shape[d]);
        printf("%-*s %-22s %-*s %-16s %12zu\n", wn, li.name, li.type, wr, li.inputs, shape, li.params);
    }
    printf("total trainable parameters: %zu\n", ct_model_param_count(m));
}

static void selftest_line(void *user, const ct_selftest_result *r)
{
    (void)user;
    printf("%-4s %-12s %4d cases  max abs err %-9.3g (%.3g of tolerance)", r->passed ? "ok" : "FAIL",
           r->op, r->cases, r->max_abs_err, r->max_rel_err);
    if (r->bench_ms > 0)
        printf("  %s: %.3f ms, %.2f GFLOP/s, %.2f GB/s", r->bench_shape, r->bench_ms, r->gflops,
               r->gbytes);
    printf("\n");
    if (!r->passed)
        printf("     %s\n", r->message);
    fflush(stdout);
}

static int cmd_selftest(const cli_args *a)
{
    const ct_selftest_options so = a->selftest;
    ct_context_options o;
    ct_context_defaults(&o);
    o.device = a->device;
    o.log = log_line;
    ct_context *ctx = NULL;
    if (ct_context_create(&o, &ctx)) {
        fprintf(stderr, "cltrain: %s\n", ct_last_error());
        return 1;
    }
    const ct_device_info *d = ct_context_device(ctx);
    printf("selftest on %u:%u %s (%s, driver %s), kernels %s, GEMM %s, %s, seed %llu%s\n", d->platform_index,
           d->device_index, d->name, d->platform_name, d->driver_version,
           ct_kernels_str(ct_context_kernels(ctx)), ct_gemm_path_str(ct_gemm_get_path(ctx)),
           ct_precision_str((ct_precision)so.precision), (unsigned long long)so.seed,
           so.finite_diff ? "" : ", no finite differences");
    int st = ct_selftest_run(ctx, &so, selftest_line, NULL);
    if (st == CT_ERR_CORRUPT)
        printf("FAILED: this device computes wrong numbers in the ops marked FAIL; do not train "
               "on it with this driver. Please report the lines above.\n");
    else if (st)
        fprintf(stderr, "cltrain: %s\n", ct_context_last_error(ctx));
    else
        printf("all ops passed\n");
    ct_context_free(&ctx);
    return st ? 1 : 0;
}

static void epoch_line(void *user, const ct_epoch_report *r)
{
    if (user)
        *(ct_epoch_report *)user = *r; /* kept for the summary */
    if (r->regression) /* the loss is the mean squared error */
        printf("epoch %d/%d  train loss %.4f rmse %.4f mae %.4f  test loss %.4f rmse %.4f mae %.4f  %.1f s  "
               "%.0f samples/s  lr %.3g", r->epoch, r->epochs, r->train_loss, r->train_rmse, r->train_mae,
               r->test_loss, r->test_rmse, r->test_mae, r->seconds, r->samples_per_second, r->lr);
    else
        printf("epoch %d/%d  train loss %.4f acc %.2f%%  test loss %.4f acc %.2f%%  %.1f s  %.0f samples/s  lr %.3g",
               r->epoch, r->epochs, r->train_loss, 100 * r->train_accuracy, r->test_loss,
               100 * r->test_accuracy, r->seconds, r->samples_per_second, r->lr);
    if (r->loss_scale > 0) { /* fp16 */
        printf("  loss scale %.0f", (double)r->loss_scale);
        if (r->skipped_steps)
            printf(" (%ld step%s skipped on fp16 overflow, the first %ld: halved each time)", r->skipped_steps,
                   r->skipped_steps > 1 ? "s" : "", r->first_skipped);
    }
    if (r->skipped_files >= 0) /* an image folder with bad=skip */
        printf("  skipped files %ld", r->skipped_files);
    if (r->tokens) { /* a language model: losses in nats per token */
        double nats = isnan(r->test_loss) ? r->train_loss : r->test_loss;
        printf("  ppl %.2f", exp(nats));
        if (r->byte_tokens)
            printf("  bits/byte %.3f", nats / log(2.0));
    }
    printf("\n");
    fflush(stdout);
}

/* train --dry-run: the layer table and the memory plan */
static void plan_table(void *user, const ct_plan_report *p)
{
    (void)user;
    int wn = 16, wr = 22;
    for (size_t i = 0; i < p->count; i++) {
        wn = column(wn, p->layers[i].name);
        wr = column(wr, p->layers[i].reads);
    }
    printf("%-*s %-22s %-*s %-18s %12s\n", wn, "layer", "type", wr, "reads", "output", "params");
    for (size_t i = 0; i < p->count; i++) {
        const ct_plan_layer *l = &p->layers[i];
        printf("%-*s %-22s %-*s %-18s %12zu\n", wn, l->name, l->type, wr, l->reads, l->shape, l->params);
    }
    printf("total trainable parameters: %zu\n", p->params);
    fputs(p->memory_plan, stdout);
}

/* One line on stderr, redrawn in place; cleared when the epoch's training ends. */
static void progress_bar(void *user, const ct_progress *p)
{
    (void)user;
    if (p->finished) {
        fprintf(stderr, "\r%*s\r", 110, "");
        return;
    }
    int width = 24, fill = p->total ? (int)((double)width * (double)p->done / (double)p->total) : width;
    char bar[32];
    for (int i = 0; i < width; i++)
        bar[i] = i < fill ? '=' : i == fill ? '>' : ' ';
    bar[width] = '\0';
    double eta = p->eta_seconds;
    char metric[48];
    if (p->regression)
        snprintf(metric, sizeof metric, "rmse %.4f", p->rmse);
    else
        snprintf(metric, sizeof metric, "acc %5.2f%%", 100 * p->accuracy);
    fprintf(stderr, "\repoch %d/%d [%s] %3.0f%%  loss %.4f  %s  %6.0f samples/s  ETA %2d:%02d ",
            p->epoch, p->epochs, bar, p->total ? 100.0 * (double)p->done / (double)p->total : 100.0,
            p->loss, metric, p->samples_per_second, (int)(eta / 60), (int)fmod(eta, 60));
    fflush(stderr);
}

ct_context *open_context(const char *device, int flags)
{
    ct_context_options o;
    ct_context_defaults(&o);
    o.device = device;
    o.lazy_kernels = (flags & OPEN_LAZY) != 0, o.profiling = (flags & OPEN_PROFILING) != 0;
    o.log = log_line;
    ct_context *ctx = NULL;
    if (ct_context_create(&o, &ctx)) {
        fprintf(stderr, "cltrain: %s\n", ct_last_error());
        return NULL;
    }
    return ctx;
}

/* Opens one context per device the selector names (several: data-parallel
 * replicas). Returns the count, 0 after printing an error. */
static size_t open_contexts(const char *selector, ct_context **ctxs, size_t max)
{
    ct_device_info *devs = NULL;
    size_t ndev = 0, idx[CLI_MAX_DEVICES], n = 0;
    if (ct_device_list(&devs, &ndev) || ct_device_select(devs, ndev, selector, idx, max, &n)) {
        fprintf(stderr, "cltrain: %s\n", ct_last_error());
        ct_device_list_free(&devs);
        return 0;
    }
    if (n <= 1) {
        ct_device_list_free(&devs);
        ctxs[0] = open_context(selector, OPEN_LAZY);
        return ctxs[0] ? 1 : 0;
    }
    size_t got = 0;
    for (; got < n; got++) {
        char sel[32];
        snprintf(sel, sizeof sel, "%u:%u", devs[idx[got]].platform_index, devs[idx[got]].device_index);
        if (!(ctxs[got] = open_context(sel, OPEN_LAZY)))
            break;
    }
    ct_device_list_free(&devs);
    if (got == n)
        return n;
    while (got > 0)
        ct_context_free(&ctxs[--got]);
    return 0;
}

/* train: on one device, on several (--device A,B), and as one rank of an
 * MPI job (mpirun -np N cltrain train ...): rank 0 prints and writes */
static int cmd_train(const cli_args *a)
{
    ct_train_options o = a->train;
    if (ct_mpi_init(NULL, NULL)) {
        fprintf(stderr, "cltrain: %s\n", ct_last_error());
        return 1;
    }
    int rank = ct_mpi_rank(), world = ct_mpi_size();
    char who[48] = "";
    if (world > 1)
        snprintf(who, sizeof who, "rank %d of %d: ", rank, world);
    ct_context *ctxs[CLI_MAX_DEVICES];
    size_t n = open_contexts(a->device, ctxs, CLI_MAX_DEVICES);
    if (!n || (a->nshares && (size_t)a->nshares != n)) {
        if (n)
            fprintf(stderr, "cltrain: %s--shares gives %d weights for %zu devices\n", who, a->nshares, n);
        while (n > 0)
            ct_context_free(&ctxs[--n]);
        ct_mpi_abort(1);
        ct_mpi_finalize();
        return 1;
    }
    o.model = a->model ? a->model : (o.resume ? NULL : "cnn");
    if (a->batch)
        o.batch = (int)a->batch;
    ct_epoch_report last;
    memset(&last, 0, sizeof last);
    o.on_epoch = epoch_line;
    o.on_plan = plan_table;
    o.on_verify = verify_line;
    if (a->progress > 0 || (a->progress < 0 && isatty(2)))
        o.on_progress = progress_bar;
    o.user = &last;
    if (!o.dry_run) {
        char devs[512] = "";
        for (size_t i = 0, at = 0; i < n && at < sizeof devs; i++) {
            const ct_device_info *d = ct_context_device(ctxs[i]);
            int k = snprintf(devs + at, sizeof devs - at, "%s%u:%u %s (kernels %s, GEMM %s)", i ? ", " : "",
                             d->platform_index, d->device_index, d->name,
                             ct_kernels_str(ct_context_kernels(ctxs[i])),
                             ct_gemm_path_str(ct_gemm_get_path(ctxs[i])));
            at += k > 0 ? (size_t)k : 0;
        }
        if (world > 1) /* every rank says where it runs, with its pid (mpirun's messages name pids) */
            fprintf(stderr, "cltrain: %spid %ld, device%s %s\n", who, (long)getpid(), n > 1 ? "s" : "", devs);
        if (rank == 0) {
            printf("training %s on %s, device%s %s", o.model ? o.model : o.resume, o.data, n > 1 ? "s" : "", devs);
            if (world > 1)
                printf(", %d ranks", world);
            if (o.precision > CT_PRECISION_FP32)
                printf(", %s products%s", ct_precision_str((ct_precision)o.precision),
                       o.precision == CT_PRECISION_FP16 ? " with dynamic loss scaling" : "");
            if (o.accumulate > 1)
                printf(", %d micro-batches of %d per step (batch %ld)", o.accumulate, o.batch,
                       (long)o.accumulate * o.batch);
            printf("\n");
            fflush(stdout);
        }
    }
    int st = 0;
    if (a->tune_first && !o.dry_run) {
        /* each device's products at its share of the batch (an even split) */
        int per = (int)(((size_t)o.batch + n - 1) / n);
        for (size_t i = 0; i < n && !st; i++)
            st = o.model ? tune_before_train(ctxs[i], o.model, per) : 0;
        if (!o.model)
            fprintf(stderr, "cltrain: train --tune: resuming names no model to tune; training untuned\n");
        if (st) {
            while (n > 0)
                ct_context_free(&ctxs[--n]);
            ct_mpi_abort(st);
            ct_mpi_finalize();
            return st;
        }
    }
    st = ct_train_parallel(ctxs, n, a->nshares ? a->shares : NULL, &o);
    if (!st && !o.dry_run && last.epoch && last.regression)
        printf("done: %d epochs, %ld steps; test rmse %.4f mae %.4f (loss %.4f)%s%s\n", last.epoch,
               last.step, last.test_rmse, last.test_mae, last.test_loss, o.out ? "; checkpoint " : "",
               o.out ? o.out : "");
    else if (!st && !o.dry_run && last.epoch)
        printf("done: %d epochs, %ld steps; test accuracy %.2f%% (loss %.4f)%s%s\n", last.epoch,
               last.step, 100 * last.test_accuracy, last.test_loss, o.out ? "; checkpoint " : "",
               o.out ? o.out : "");
    if (st) {
        fprintf(stderr, "cltrain: %s%s\n", who, ct_context_last_error(ctxs[0]));
        fflush(stderr);
        ct_mpi_abort(1); /* the other ranks must not wait for this one */
    }
    while (n > 0)
        ct_context_free(&ctxs[--n]);
    ct_mpi_finalize();
    return st ? 1 : 0;
}

/* generate: each token's text as it comes */
static void put_text(void *user, const char *text, size_t len)
{
    (void)user;
    fwrite(text, 1, len, stdout);
    fflush(stdout);
}

typedef struct text_lines {
    char **v;
    size_t n, cap;
} text_lines;

/* predict --text: the text itself, or with "-" each line of stdin */
static int read_texts(const char *arg, text_lines *t)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    FILE *in = strcmp(arg, "-") ? NULL : stdin;
    for (;;) {
        char *s = NULL;
        if (!in) {
            if (t->n)
                break;
            s = strdup(arg);
        } else {
            if ((len = getline(&line, &cap, in)) < 0)
                break;
            while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
                line[--len] = '\0';
            s = strdup(line);
        }
        if (t->n == t->cap) {
            size_t nc = t->cap ? 2 * t->cap : 64;
            char **v = realloc(t->v, nc * sizeof *v);
            if (!v) {
                free(s);
                s = NULL;
            } else {
                t->v = v;
                t->cap = nc;
            }
        }
        if (!s) {
            free(line);
            fprintf(stderr, "cltrain: out of memory reading the texts\n");
            return 1;
        }
        t->v[t->n++] = s;
    }
    free(line);
    if (!t->n) {
        fprintf(stderr, "cltrain: predict --text -: no lines on stdin\n");
        return 1;
    }
    return 0;
}

/* export: no device needed */
static int cmd_export(const cli_args *a)
{
    ct_export_info info;
    if (ct_export_onnx(a->model, a->weights, a->onnx, &info)) {
        fprintf(stderr, "cltrain: %s\n", ct_last_error());
        return 1;
    }
    printf("wrote %s: ONNX opset %d (IR version %d), %zu nodes, %zu initializers, %zu parameters\n", a->onnx,
           info.opset, info.ir_version, info.nodes, info.initializers, info.params);
    return 0;
}

/* a float as JSON: enough digits to read back the same float; null for NaN and infinities */
static void json_float(float v)
{
    if (isfinite(v))
        printf("%.9g", (double)v);
    else
        printf("null");
}

static void json_shape(const int *d, int n)
{
    printf("[");
    for (int i = 0; i < n; i++)
        printf("%s%d", i ? ", " : "", d[i]);
    printf("]");
}

/* predict --logits: one JSON object per sample */
static int print_outputs(ct_context *ctx, const cli_args *a)
{
    ct_outputs o; /* emptied by ct_predict_outputs, whatever it returns */
    int st = ct_predict_outputs(ctx, a->model, a->weights, a->train.data, (size_t)a->count, &o);
    for (size_t i = 0; !st && i < o.count; i++) {
        printf("{\"index\": %zu, \"label\": ", o.index[i]);
        if (o.label_n == 1)
            printf("%d", o.label[i]);
        for (size_t t = 0; o.label_n > 1 && t < o.label_n; t++)
            printf("%s%d", t ? ", " : "[", o.label[i * o.label_n + t]);
        printf("%s, \"input_shape\": ", o.label_n > 1 ? "]" : "");
        json_shape(o.input_shape, o.input_ndim);
        printf(", \"input\": [");
        for (size_t k = 0; k < o.input_n; k++) {
            if (k)
                printf(", ");
            if (o.tokens)
                printf("%d", o.ids[i * o.input_n + k]);
            else
                json_float(o.x[i * o.input_n + k]);
        }
        printf("], \"logits_shape\": ");
        json_shape(o.output_shape, o.output_ndim);
        printf(", \"logits\": [");
        for (size_t k = 0; k < o.output_n; k++) {
            if (k)
                printf(", ");
            json_float(o.y[i * o.output_n + k]);
        }
        printf("]}\n");
    }
    ct_outputs_free(&o);
    return st;
}

/* eval, predict and generate */
static int cmd_run(const cli_args *a)
{
    ct_train_options o = a->train;
    const char *weights = a->weights, *model = a->model;
    long count = a->count, top = a->top, batch = a->batch;
    if (a->cmd == CLI_TRAIN)
        return cmd_train(a);
    ct_context *ctx = open_context(a->device, OPEN_LAZY);
    if (!ctx)
        return 1;
    int st;
    if (a->cmd == CLI_EVAL) {
        ct_eval_metrics m;
        st = ct_evaluate_metrics(ctx, model, weights, o.data, (int)batch, o.train_limit, &m);
        if (!st && m.regression)
            printf("%zu samples  loss %.4f  rmse %.4f  mae %.4f  (%d target%s)\n", m.samples, m.loss, m.rmse,
                   m.mae, m.targets, m.targets == 1 ? "" : "s");
        else if (!st)
            printf("%zu samples  loss %.4f  accuracy %.2f%%\n", m.samples, m.loss, 100 * m.accuracy);
    } else if (a->cmd == CLI_GENERATE) {
        ct_generate_options g = a->generate;
        g.on_text = put_text;
        if (g.prompt) /* the continuation follows the prompt, as it is read */
            fputs(g.prompt, stdout);
        st = ct_generate(ctx, weights, &g);
        printf("\n");
    } else if (a->logits) {
        st = print_outputs(ctx, a);
    } else {
        ct_predictions p; /* emptied by ct_predict, whatever it returns */
        text_lines lines = { NULL, 0, 0 };
        if (a->text && read_texts(a->text, &lines)) {
            for (size_t i = 0; i < lines.n; i++)
                free(lines.v[i]);
            free(lines.v);
            ct_context_free(&ctx);
            return 1;
        }
        if (a->text)
            st = ct_predict_text(ctx, weights, (const char *const *)lines.v, lines.n, (int)top, &p);
        else
            st = ct_predict(ctx, model, weights, o.data, (size_t)count, (int)top, &p);
        for (size_t i = 0; !st && i < p.count && p.ntargets; i++) {
            /* regression: each target's predicted value and the data's */
            printf("sample %zu:", p.index[i]);
            for (int k = 0; k < p.ntargets; k++) {
                size_t at = i * (size_t)p.ntargets + (size_t)k;
                printf("%s %s predicted %.6g true %.6g", k ? "," : "", p.target_names[k], (double)p.predicted[at],
                       (double)p.target[at]);
            }
            printf("\n");
        }
        for (size_t i = 0; !st && i < p.count && !p.ntargets; i++) {
            if (a->text)
                printf("text %zu:", p.index[i] + 1);
            else if (p.class_names && p.label[i] >= 0 && p.label[i] < p.nclasses)
                printf("sample %zu label %s:", p.index[i], p.class_names[p.label[i]]);
            else
                printf("sample %zu label %d:", p.index[i], p.label[i]);
            for (int k = 0; k < p.top_k; k++) {
                int c = p.classes[i * (size_t)p.top_k + (size_t)k];
                if (p.class_names && c < p.nclasses)
                    printf(" %s", p.class_names[c]);
                else
                    printf(" %d", c);
                printf(" (%.4f)", p.probability[i * (size_t)p.top_k + (size_t)k]);
            }
            printf("\n");
        }
        ct_predictions_free(&p);
        for (size_t i = 0; i < lines.n; i++)
            free(lines.v[i]);
        free(lines.v);
    }
    if (st)
        fprintf(stderr, "cltrain: %s\n", ct_context_last_error(ctx));
    ct_context_free(&ctx);
    return st ? 1 : 0;
}

int main(int argc, char **argv)
{
    cli_args a;
    char err[1024];
    if (cli_parse(argc, argv, &a, err, sizeof err))
        return usage_error(err);
    switch (a.cmd) {
    case CLI_HELP:
        fputs(cli_usage_text, stdout);
        return 0;
    case CLI_VERSION:
        printf("cltrain %s\n", ct_version());
        return 0;
    case CLI_DEVICES:
        return cmd_devices(a.json);
    case CLI_KERNELS:
        return cmd_kernels(&a);
    case CLI_SELFTEST:
        return cmd_selftest(&a);
    case CLI_TRAIN:
    case CLI_EVAL:
    case CLI_PREDICT:
    case CLI_GENERATE:
        return cmd_run(&a);
    case CLI_EXPORT:
        return cmd_export(&a);
    case CLI_BENCH:
        return cmd_bench(&a);
    case CLI_ZOO:
        return cmd_zoo(&a);
    case CLI_DOCTOR:
        return cmd_doctor(&a);
    case CLI_VERIFY:
        return cmd_verify(&a);
    case CLI_TUNE:
        return cmd_tune(&a);
    case CLI_MODEL: {
        ct_model *m = NULL;
        if (ct_model_open(a.name, &m)) {
            fprintf(stderr, "cltrain: %s\n", ct_last_error());
            return 1;
        }
        print_layers(m);
        ct_model_free(&m);
        return 0;
    }
    }
    return 2;
}
