/*
 * tune_share.c - tuned choices shared as a file (cltrain/tune.h): export
 * with the device's verdicts, import of the entries made on the same
 * device, driver and class (marked unchecked), and their check on first
 * use, after which they count as measured here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cltrain/train.h"
#include "ops/clblast_params.h"
#include "ops/tune_use.h"
#include "train/tune_internal.h"

static int write_text(ct_context *ctx, const char *path, const char *text)
{
    size_t n = strlen(path) + 32;
    char *tmp = malloc(n);
    if (!tmp)
        return ct_fail(ctx, CT_ERR_NO_MEMORY, "out of host memory");
    snprintf(tmp, n, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    int ok = f && fputs(text, f) >= 0 && fputc('\n', f) != EOF && !fflush(f);
    int saved = errno;
    if (f && fclose(f))
        ok = 0, saved = errno;
    if (ok && rename(tmp, path))
        ok = 0, saved = errno;
    if (!ok)
        unlink(tmp);
    free(tmp);
    return ok ? CT_OK : ct_fail(ctx, CT_ERR_IO, "tune: cannot write %s: %s", path, strerror(saved));
}

int ct_tune_export(ct_context *ctx, const char *path)
{
    CT_VALIDATE(ctx, ctx && path && *path);
    ct_tune_device d;
    int found = 0;
    int st = ct_tune_read(ctx, &d, &found);
    if (st)
        return st;
    if (!found)
        ct_tune_identity(ctx, &d);
    ct_verify_result vr;
    int vst = ct_verify(ctx, NULL, CT_VERIFY_READ, &vr);
    if (vst && vst != CT_ERR_CORRUPT) {
        ct_tune_device_free(&d);
        return vst;
    }
    if (vr.cached[0]) {
        d.has_verdicts = 1;
        snprintf(d.verdicts_passed, sizeof d.verdicts_passed, "%s", vr.cached);
        snprintf(d.verdicts_failed, sizeof d.verdicts_failed, "%s", vr.failed);
        d.verdicts_since = vr.cached_since;
        if (vr.failed[0]) { /* the failed family is listed among those read back */
            char *at = strstr(d.verdicts_passed, vr.failed);
            if (at) {
                size_t len = strlen(vr.failed) + (at[strlen(vr.failed)] == ',' ? 2 : 0);
                memmove(at, at + len, strlen(at + len) + 1);
            }
        }
    }
    if (!found && !d.has_verdicts) {
        ct_tune_device_free(&d);
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "tune --export: nothing is tuned or verified on %s (driver %s, %s "
                       "class) yet. HINT: run `cltrain tune --model M` first", ctx->dev.name,
                       ctx->dev.driver_version, ct_kernels_str(ctx->cls.kernels));
    }
    ct_tune_file f = { &d, 1 };
    char *text = ct_tune_file_format(&f);
    st = text ? write_text(ctx, path, text) : ct_fail(ctx, CT_ERR_NO_MEMORY, "out of host memory");
    free(text);
    ct_tune_device_free(&d);
    return st;
}

static void add_msg(ct_tune_import_result *r, const char *s)
{
    size_t n = strlen(r->message), cap = sizeof r->message;
    if (n && n + 2 < cap)
        memcpy(r->message + n, "; ", 3), n += 2;
    size_t len = strlen(s);
    if (n + len >= cap)
        len = cap - 1 - n; /* cut: the message has a fixed size */
    memcpy(r->message + n, s, len);
    r->message[n + len] = '\0';
}

int ct_tune_import(ct_context *ctx, const char *path, ct_tune_import_result *r)
{
    CT_VALIDATE(ctx, ctx && path && r);
    memset(r, 0, sizeof *r);
    size_t n = 0;
    char *text = ct_read_file(path, &n);
    if (!text)
        return ct_fail(ctx, CT_ERR_IO, "tune --import: cannot read %s: %s", path, strerror(errno));
    ct_tune_file f;
    char err[512];
    int st = ct_tune_file_parse(text, n, &f, err, sizeof err);
    free(text);
    if (st)
        return ct_fail(ctx, st, "tune --import: %s: %s (nothing imported)", path, err);
    r->devices = (int)f.n;
    ct_tune_device local, take;
    int found = 0;
    if ((st = ct_tune_read(ctx, &local, &found))) {
        ct_tune_file_free(&f);
        return st;
    }
    ct_tune_identity(ctx, &take);
    for (size_t i = 0; i < f.n && !st; i++) {
        const ct_tune_device *d = &f.dev[i];
        char why[1200], line[1400];
        if (!ct_tune_matches(ctx, d, why, sizeof why)) {
            snprintf(line, sizeof line, "entry %zu ignored: %s", i, why);
            add_msg(r, line);
            continue;
        }
        r->matched++;
        for (size_t j = 0; j < d->ngemm && !st; j++) {
            const ct_tune_gemm *g = &d->gemm[j];
            const ct_tune_gemm *mine = ct_tune_device_find(&local, g->conv, g->ta, g->tb, g->m, g->n, g->k);
            if (mine && mine->checked)
                continue; /* measured here: kept */
            ct_tune_gemm u = *g;
            u.checked = 0;
            if (!(st = ct_tune_device_put(&take, &u)))
                r->shapes++;
        }
        if (d->nclblast && !local.nclblast) {
            memcpy(take.clblast, d->clblast, sizeof take.clblast);
            take.nclblast = d->nclblast;
            take.clblast_checked = 0;
            r->clblast = 1;
        }
        if (d->has_verdicts) {
            snprintf(line, sizeof line, "the file says %s passed there%s%s (verified here anyway, on first use)",
                     d->verdicts_passed[0] ? d->verdicts_passed : "nothing", d->verdicts_failed[0] ? " and failed "
                                                                                                  : "",
                     d->verdicts_failed);
            add_msg(r, line);
        }
    }
    if (st)
        st = ct_fail(ctx, st, "tune --import: %s", st == CT_ERR_NO_MEMORY ? "out of host memory" : "too many shapes");
    else if (r->shapes || r->clblast)
        st = ct_tune_write(ctx, &take, 0);
    ct_tune_device_free(&take);
    ct_tune_device_free(&local);
    ct_tune_file_free(&f);
    return st;
}

/* Checks one shape's pick here; *ms its time */
static int check_entry(ct_context *ctx, const ct_tune_gemm *g, int *ok, double *ms)
{
    tm_shape s = { g->ta, g->tb, g->m, g->n, g->k, 1, g->conv, { 0 }, 0, 0 };
    memcpy(s.geom, g->geom, sizeof s.geom);
    tm_choice c = { g->pick, g->tiles, g->splits };
    tm_bufs b;
    int st = tm_alloc(ctx, &s, 1 + g->m + g->k, &b);
    if (st == CT_ERR_INVALID_ARG || st == CT_ERR_NO_MEMORY) { /* an entry that cannot be run here */
        *ok = 0;
        ct_log(ctx, CT_LOG_WARN, "tuned choices: an imported entry cannot be checked here (%s): dropped",
               ct_context_last_error(ctx));
        return CT_OK;
    }
    if (st)
        return st;
    char why[512];
    st = tm_measure(ctx, &s, &b, &c, 0.01, 0, ms, ok, why, sizeof why);
    tm_free(&b);
    if (!st && !*ok)
        ct_log(ctx, CT_LOG_WARN, "tuned choices: the imported %s for %s%s %ux%ux%u fails its check here (%s): "
               "dropped", ct_tune_pick_str(g->pick), g->ta ? "T" : "N", g->tb ? "T" : "N", g->m, g->n, g->k, why);
    return st;
}

int ct_tune_check_imported(ct_context *ctx, int *checked, int *dropped)
{
    CT_VALIDATE(ctx, ctx);
    int nc = 0, nd = 0;
    ct_tune_device d;
    int found = 0, st = ct_tune_read(ctx, &d, &found);
    int todo = 0;
    for (size_t i = 0; found && i < d.ngemm; i++)
        todo += !d.gemm[i].checked;
    todo += found && d.nclblast && !d.clblast_checked;
    if (st || !todo)
        goto done;
    ctx->tune_bypass++;
    /* CLBlast's parameters first: every shape CLBlast runs must pass with them */
    if (d.nclblast && !d.clblast_checked) {
        ct_tune_params def[3];
        int have_def = d.nclblast <= 3;
        for (int k = 0; k < d.nclblast && have_def; k++)
            have_def = !ct_clblast_params_get(ctx->device, d.clblast[k].kernel, &def[k]);
        int ok = have_def && !ct_tune_apply_clblast(ctx, &d);
        for (size_t i = 0; i < d.ngemm && ok && !st; i++) {
            double ms;
            if (d.gemm[i].pick == CT_PICK_CLBLAST)
                st = check_entry(ctx, &d.gemm[i], &ok, &ms);
        }
        if (!ok || st) {
            for (int k = 0; k < d.nclblast && have_def; k++)
                ct_clblast_params_set(ctx->device, &def[k]);
            d.nclblast = 0;
            nd++;
        } else {
            d.clblast_checked = 1;
            nc++;
        }
    }
    size_t kept = 0;
    for (size_t i = 0; i < d.ngemm && !st; i++) {
        ct_tune_gemm *g = &d.gemm[i];
        int ok = 1;
        double ms = g->ms;
        if (!g->checked && !(st = check_entry(ctx, g, &ok, &ms)) && ok)
            g->checked = 1, g->ms = ms, nc++;
        if (!ok)
            nd++;
        if (ok)
            d.gemm[kept++] = *g;
    }
    ctx->tune_bypass--;
    if (!st) {
        d.ngemm = kept;
        st = ct_tune_write(ctx, &d, 1);
        ct_log(ctx, CT_LOG_INFO, "tuned choices: %d imported entries checked on %s, %d dropped", nc, ctx->dev.name,
               nd);
    }
done:
    ct_tune_device_free(&d);
    if (checked)
        *checked = nc;
    if (dropped)
        *dropped = nd;
    return st;
}

int ct_tune_get_status(ct_context *ctx, ct_tune_status *out)
{
    CT_VALIDATE(ctx, ctx && out);
    memset(out, 0, sizeof *out);
    char *path = ct_tune_path(ctx);
    if (path)
        snprintf(out->path, sizeof out->path, "%s", path);
    free(path);
    ct_tune_device d;
    int st = ct_tune_read(ctx, &d, &out->found);
    if (st || !out->found)
        return st;
    out->shapes = (int)d.ngemm;
    out->tuned = d.tuned;
    out->clblast = d.nclblast ? 1 + d.clblast_checked : 0;
    for (size_t i = 0; i < d.ngemm; i++) {
        const ct_tune_gemm *g = &d.gemm[i];
        out->unchecked += !g->checked;
        out->changed += g->ms < g->default_ms * 0.97;
        out->default_ms += g->default_ms;
        out->tuned_ms += g->ms;
    }
    for (size_t i = 0; i < d.nmodels; i++) {
        size_t n = strlen(out->models);
        if (n + strlen(d.models[i]) + 3 < sizeof out->models)
            snprintf(out->models + n, sizeof out->models - n, "%s%s", n ? ", " : "", d.models[i]);
    }
    ct_tune_device_free(&d);
    return CT_OK;
}
