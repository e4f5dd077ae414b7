/*
 * cli_verify.c - `cltrain verify`: whether a device computes the ops of
 * the given models right (ct_verify: the kernel cache's verdicts, or the
 * checks run now), as text or JSON; and the line `train` prints when it
 * checked a device before training.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli.h"

static void utc(int64_t t, char *out, size_t cap)
{
    time_t w = (time_t)t;
    struct tm tmv;
    if (!t || !gmtime_r(&w, &tmv) || !strftime(out, cap, "%Y-%m-%d %H:%M UTC", &tmv))
        snprintf(out, cap, "-");
}

void verify_line(void *user, ct_context *ctx, const ct_verify_result *r)
{
    (void)user;
    if (!r->checked[0])
        return; /* every verdict read back: nothing new to say */
    const ct_device_info *d = ct_context_device(ctx);
    fprintf(stderr, "verified kernels on %u:%u %s (%s class): %s checked in %.2f s%s\n", d->platform_index,
            d->device_index, d->name, ct_kernels_str(ct_context_kernels(ctx)), r->checked, r->seconds,
            r->kept ? ", the verdicts kept in the kernel cache" : " (the kernel cache is off)");
}

int cmd_verify(const cli_args *a)
{
    static const char *const fallback[] = { "cnn" };
    const char *const *models = a->nmodels ? a->models : fallback;
    int nm = a->nmodels ? a->nmodels : 1;
    ct_context *ctx = open_context(a->device, OPEN_LAZY);
    if (!ctx)
        return 1;
    const ct_device_info *d = ct_context_device(ctx);
    int failed = 0;
    if (a->json)
        printf("[");
    for (int k = 0; k < nm; k++) {
        ct_verify_result r;
        int st = ct_verify(ctx, models[k], a->verify_mode, &r);
        char since[40];
        utc(r.cached_since, since, sizeof since);
        if (a->json) {
            printf("%s\n  {\"model\": ", k ? "," : "");
            json_string(models[k]);
            printf(", \"device\": \"%u:%u\", \"device_name\": ", d->platform_index, d->device_index);
            json_string(d->name);
            printf(", \"driver\": ");
            json_string(d->driver_version);
            printf(", \"class\": \"%s\", \"ok\": %s, \"checked\": ", ct_kernels_str(ct_context_kernels(ctx)),
                   st ? "false" : "true");
            json_string(r.checked);
            printf(", \"cached\": ");
            json_string(r.cached);
            printf(", \"cached_since\": %lld, \"failed\": ", (long long)r.cached_since);
            json_string(r.failed);
            printf(", \"seconds\": %.3f, \"error\": ", r.seconds);
            if (st)
                json_string(ct_context_last_error(ctx));
            else
                printf("null");
            printf("}");
        } else if (!st) {
            printf("%s on %u:%u %s (driver %s, %s class): ok", models[k], d->platform_index, d->device_index,
                   d->name, d->driver_version, ct_kernels_str(ct_context_kernels(ctx)));
            if (r.checked[0])
                printf("; checked now: %s (%.2f s)", r.checked, r.seconds);
            if (r.cached[0])
                printf("; verified before (since %s): %s", since, r.cached);
            printf("\n");
        } else {
            printf("%s on %u:%u %s: FAILED\n", models[k], d->platform_index, d->device_index, d->name);
            fprintf(stderr, "cltrain: %s\n", ct_context_last_error(ctx));
        }
        failed += st != 0;
    }
    if (a->json)
        printf("\n]\n");
    ct_context_free(&ctx);
    return failed ? 1 : 0;
}
