/*
 * cli_tune.c - `cltrain tune`: tune the matrix products of the given models
 * on a device (ct_tune), showing progress on stderr; Ctrl-C stops it with
 * what was measured kept, so the next run resumes. --export and --import
 * write and read the shareable file. Also train --tune's step before
 * training.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
    (void)sig;
    interrupted = 1;
}

static int show(void *user, const ct_tune_progress *p)
{
    (void)user;
    if (p->line && strcmp(p->phase, "done"))
        fprintf(stderr, "tune [%6.1f s] %s%s%s: %s\n", p->seconds, p->model ? p->model : "",
                p->model ? " " : "", p->phase, p->line);
    return interrupted;
}

static void result_text(const ct_context *ctx, const ct_tune_result *r)
{
    const ct_device_info *d = ct_context_device(ctx);
    printf("tuned on %u:%u %s (driver %s, %s class) in %.1f s: %d shapes, %d measured now, %d tuned before, "
           "%d picked other than the built-in rule, %d candidates rejected by the check",
           d->platform_index, d->device_index, d->name, d->driver_version, ct_kernels_str(ct_context_kernels(ctx)),
           r->seconds, r->shapes, r->measured, r->skipped, r->changed, r->rejected);
    if (r->clblast_sets)
        printf("; CLBlast: %d parameter sets tried, %s", r->clblast_sets,
               r->clblast_kept ? "one kept" : "its own parameters kept");
    printf("\n");
    if (r->default_ms > 0)
        printf("products per step: %.2f ms by the built-in rules, %.2f ms tuned (%.2fx)\n", r->default_ms,
               r->tuned_ms, r->default_ms / r->tuned_ms);
    if (r->stopped)
        printf("stopped early (budget or Ctrl-C): what was measured is kept; run it again to go on\n");
}

static void result_json(const ct_context *ctx, const ct_tune_result *r, int st)
{
    const ct_device_info *d = ct_context_device(ctx);
    printf("{\"device\": \"%u:%u\", \"device_name\": ", d->platform_index, d->device_index);
    json_string(d->name);
    printf(", \"driver\": ");
    json_string(d->driver_version);
    printf(", \"class\": \"%s\", \"ok\": %s, \"shapes\": %d, \"measured\": %d, \"skipped\": %d, \"changed\": %d, "
           "\"rejected\": %d, \"clblast_sets\": %d, \"clblast_kept\": %s, \"stopped\": %s, "
           "\"default_ms\": %.4f, \"tuned_ms\": %.4f, \"seconds\": %.2f, \"error\": ",
           ct_kernels_str(ct_context_kernels(ctx)), st ? "false" : "true", r->shapes, r->measured, r->skipped,
           r->changed, r->rejected, r->clblast_sets, r->clblast_kept ? "true" : "false",
           r->stopped ? "true" : "false", r->default_ms, r->tuned_ms, r->seconds);
    if (st)
        json_string(ct_context_last_error((ct_context *)ctx));
    else
        printf("null");
    printf("}\n");
}

int tune_before_train(ct_context *ctx, const char *model, int batch)
{
    ct_tune_options o;
    ct_tune_defaults(&o);
    o.models = &model;
    o.nmodels = 1;
    o.batch = batch;
    o.progress = show;
    ct_tune_result r;
    void (*old)(int) = signal(SIGINT, on_sigint);
    int st = ct_tune(ctx, &o, &r);
    signal(SIGINT, old);
    if (st) {
        fprintf(stderr, "cltrain: %s\n", ct_context_last_error(ctx));
        return 1;
    }
    if (interrupted)
        return 130;
    fprintf(stderr, "tune: %d shapes of %s (%d measured now), products %.2f -> %.2f ms per step\n", r.shapes,
            model, r.measured, r.default_ms, r.tuned_ms);
    return 0;
}

int cmd_tune(const cli_args *a)
{
    ct_context *ctx = open_context(a->device, OPEN_LAZY);
    if (!ctx)
        return 1;
    int st;
    if (a->tune_import) {
        ct_tune_import_result r;
        st = ct_tune_import(ctx, a->tune_import, &r);
        if (!st) {
            printf("imported from %s: %d of %d device entries match this device, driver and class; %d shapes%s "
                   "taken (each checked here before first use)\n", a->tune_import, r.matched, r.devices, r.shapes,
                   r.clblast ? " and CLBlast's parameters" : "");
            if (r.message[0])
                printf("%s\n", r.message);
        }
    } else if (a->tune_export) {
        st = ct_tune_export(ctx, a->tune_export);
        if (!st)
            printf("exported the tuned choices and verdicts of %s to %s\n", ct_context_device(ctx)->name,
                   a->tune_export);
    } else {
        ct_tune_options o = a->tune;
        o.models = a->models;
        o.nmodels = a->nmodels;
        o.progress = show;
        ct_tune_result r;
        signal(SIGINT, on_sigint);
        st = ct_tune(ctx, &o, &r);
        signal(SIGINT, SIG_DFL);
        if (a->json)
            result_json(ctx, &r, st);
        else if (!st)
            result_text(ctx, &r);
    }
    if (st && !a->json)
        fprintf(stderr, "cltrain: %s\n", ct_context_last_error(ctx));
    ct_context_free(&ctx);
    return st ? 1 : interrupted ? 130 : 0;
}
