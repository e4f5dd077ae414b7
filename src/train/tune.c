/*
 * tune.c - the tuner (cltrain/tune.h): the GEMM shapes each model's
 * training step runs (one recorded bench step), the candidates for each,
 * measured and checked (train/tune_measure.h), most costly shapes first,
 * each winner written to the cache as soon as it is known (so a stopped run
 * resumes); then CLBlast's parameters (train/tune_clblast.c) on the shapes
 * CLBlast runs or nearly wins.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cltrain/bench.h"
#include "cltrain/tune.h"
#include "ops/gemm_cl.h"
#include "ops/tune_use.h"
#include "train/tune_internal.h"

void ct_tune_defaults(ct_tune_options *o)
{
    memset(o, 0, sizeof *o);
    o->budget = 60;
    o->clblast = 1;
    o->seed = 1;
}

int tn_progress(tuner *t, const char *phase, int done, int total, const char *line)
{
    if (t->o->progress) {
        ct_tune_progress p = { t->model, phase, done, total, ct_now() - t->t0, line };
        if (t->o->progress(t->o->user, &p))
            t->stop = 1;
    }
    if (t->stop)
        t->res->stopped = 1;
    return t->stop;
}

void tn_shape_str(const tm_shape *s, char *out, size_t cap)
{
    static const char *const conv[4] = { "", "conv fwd ", "conv dx ", "conv dw " };
    if (s->conv)
        snprintf(out, cap, "%s%zux%zux%zu", conv[s->conv & 3], s->m, s->n, s->k);
    else
        snprintf(out, cap, "%s%s %zux%zux%zu", s->ta ? "T" : "N", s->tb ? "T" : "N", s->m, s->n, s->k);
}

void tn_choice_str(const tm_choice *c, char *out, size_t cap)
{
    static const char *const tiles[6] = { "big", "small", "narrow", "huge", "reg", "vec" };
    if (c->pick == CT_PICK_OWN)
        snprintf(out, cap, "own %s/%zu", tiles[(unsigned)c->tiles % 6], c->splits);
    else
        snprintf(out, cap, "%s", ct_tune_pick_str((ct_tune_pick)c->pick));
}

/* What the built-in rule runs for a shape, as an explicit choice */
static tm_choice rule_choice(ct_context *ctx, const tm_shape *s)
{
    if (s->conv)
        return (tm_choice){ CT_PICK_OWN, s->rule_tiles, s->rule_splits ? s->rule_splits : 1 };
    if (ctx->cls.gemm == CT_GEMM_HOST) {
        int own = ctx->cls.host_pool && !strcmp(ct_host_gemm_str(), "avx512") && s->m >= 256 && s->n >= 64 &&
                  s->k >= 16;
        return (tm_choice){ own ? CT_PICK_AVX512 : CT_PICK_BLAS, 0, 1 };
    }
    if (!ct_gemm_cl_choose(ctx, s->m, s->n, s->k, s->ta, s->tb))
        return (tm_choice){ CT_PICK_CLBLAST, 0, 1 };
    ct_gemm_cl_plan p = ct_gemm_cl_plan_for(ctx, s->m, s->n, s->k, s->ta, s->tb);
    return (tm_choice){ CT_PICK_OWN, p.tiles == CT_GEMM_CL_REG ? CT_GEMM_CL_BIG : (int)p.tiles, p.splits };
}

static int same_choice(const tm_choice *a, const tm_choice *b)
{
    return a->pick == b->pick && (a->pick != CT_PICK_OWN || (a->tiles == b->tiles && a->splits == b->splits));
}

/* The models' products, each shape once with its count per step */
static int add_shapes(tuner *t, const char *model, int batch)
{
    ct_bench_options bo;
    ct_bench_defaults(&bo);
    bo.model = model;
    bo.batch = batch;
    bo.record = 1;
    ct_bench_result br;
    int st = ct_bench_run(t->ctx, &bo, &br);
    if (st)
        return st;
    int host = t->ctx->cls.gemm == CT_GEMM_HOST;
    /* the context's own records: they hold the convolutions' geometry too */
    const ct_launch_rec *recs = t->ctx->lrec.recs;
    size_t nrec = t->ctx->lrec.n;
    for (size_t i = 0; i < nrec && !st; i++) {
        const ct_launch_rec *l = &recs[i];
        /* kernels; batches of products (picks apply to single ones) */
        if (l->kernel || !l->m || !l->n || !l->k || (l->batch > 1 && !host))
            continue;
        size_t j = 0;
        while (j < t->n && !(t->shapes[j].conv == l->conv && t->shapes[j].ta == l->ta && t->shapes[j].tb == l->tb &&
                             t->shapes[j].m == l->m && t->shapes[j].n == l->n && t->shapes[j].k == l->k))
            j++;
        if (j == t->n) {
            tm_shape *p = realloc(t->shapes, (t->n + 1) * sizeof *p);
            if (!p) {
                st = ct_fail(t->ctx, CT_ERR_NO_MEMORY, "out of host memory");
                break;
            }
            t->shapes = p;
            tm_shape sh = { l->ta, l->tb, l->m, l->n, l->k, 0, l->conv, { 0 }, l->tiles, l->k_splits };
            memcpy(sh.geom, l->conv_geom, sizeof sh.geom);
            t->shapes[t->n++] = sh;
        }
        t->shapes[j].count += (double)(l->batch ? l->batch : 1);
    }
    ct_bench_result_free(&br);
    return st;
}

static int by_work(const void *pa, const void *pb)
{
    const tm_shape *a = pa, *b = pb;
    double wa = a->count * (double)a->m * (double)a->n * (double)a->k;
    double wb = b->count * (double)b->m * (double)b->n * (double)b->k;
    return wa < wb ? 1 : wa > wb ? -1 : 0;
}

/* Measures c on shape s; keeps it in *best when it is faster */
static int try_choice(tuner *t, const tm_shape *s, tm_bufs *b, const tm_choice *c, tm_choice *best,
                      double *best_ms, double *ms, tn_shape_result *r)
{
    int ok = 0;
    char why[512];
    /* a candidate three times slower than the best in its first run is not timed further */
    int st = tm_measure(t->ctx, s, b, c, t->min_seconds, *best_ms > 0 ? 3 * *best_ms : 0, ms, &ok, why, sizeof why);
    if (st)
        return st;
    if (!ok) {
        char cs[64], ss[64], line[768];
        tn_choice_str(c, cs, sizeof cs);
        tn_shape_str(s, ss, sizeof ss);
        snprintf(line, sizeof line, "%s: %s rejected: %s", ss, cs, why);
        t->res->rejected++;
        *ms = -1;
        tn_progress(t, "gemm", -1, -1, line);
        return CT_OK;
    }
    if (*best_ms < 0 || *ms < *best_ms)
        *best = *c, *best_ms = *ms;
    if (c->pick != CT_PICK_CLBLAST && (r->alt_ms < 0 || *ms < r->alt_ms))
        r->alt = *c, r->alt_ms = *ms;
    return CT_OK;
}

/* Own SGEMM at one tile size: k-slices doubled while it gets faster (one
 * slower step allowed), from the rule's count down to 1 as well */
static int walk_splits(tuner *t, const tm_shape *s, tm_bufs *b, int tiles, tm_choice *best, double *best_ms,
                       tn_shape_result *r)
{
    size_t most = s->k / 256;
    size_t cap = t->ctx->dev.type == CT_DEVICE_CPU ? 64 : 512;
    most = most > cap ? cap : most < 1 ? 1 : most;
    double prev = -1;
    int worse = 0;
    for (size_t sp = 1; sp <= most && !t->stop; sp *= 2) {
        tm_choice c = { CT_PICK_OWN, tiles, sp };
        double ms;
        int st = try_choice(t, s, b, &c, best, best_ms, &ms, r);
        if (st)
            return st;
        if (ms < 0)
            return CT_OK;
        /* far slower than the best though C fills the device: slices will not save this tile size */
        if (sp == 1 && *best_ms > 0 && ms > 3 * *best_ms &&
            ct_gemm_cl_slices(t->ctx, (ct_gemm_cl_tiles)tiles, s->m, s->n, s->k) <= 1)
            return CT_OK;
        if (prev > 0 && ms >= prev && ++worse >= 2)
            break;
        prev = ms;
        if (ct_now() > t->shape_deadline)
            break;
    }
    return CT_OK;
}

/* One shape: every candidate, the fastest kept */
static int tune_shape(tuner *t, const tm_shape *s, tn_shape_result *r)
{
    ct_context *ctx = t->ctx;
    tm_bufs b;
    int st = tm_alloc(ctx, s, t->o->seed + (uint64_t)s->m * 31 + (uint64_t)s->k, &b);
    if (st)
        return st;
    tm_choice rule = rule_choice(ctx, s), best = rule;
    double best_ms = -1, rule_ms = -1, ms;
    r->clblast_ms = -1, r->alt_ms = -1;
    if ((st = try_choice(t, s, &b, &rule, &best, &best_ms, &rule_ms, r)))
        goto done;
    if (rule_ms < 0)
        best_ms = -1; /* the rule failed its check: any candidate that passes wins */
    if (s->conv) {
        /* the convolution's tiles (big, small, narrow); k-slices for its weight gradient */
        for (int tiles = 0; tiles < 3 && !st && !t->stop; tiles++) {
            tm_choice c = { CT_PICK_OWN, tiles, 1 };
            if (s->conv == 3)
                st = walk_splits(t, s, &b, tiles, &best, &best_ms, r);
            else if (!same_choice(&c, &rule))
                st = try_choice(t, s, &b, &c, &best, &best_ms, &ms, r);
        }
    } else if (ctx->cls.gemm == CT_GEMM_HOST) {
        tm_choice alt = { rule.pick == CT_PICK_AVX512 ? CT_PICK_BLAS : CT_PICK_AVX512, 0, 1 };
        if (alt.pick == CT_PICK_BLAS || (ctx->cls.host_pool && !strcmp(ct_host_gemm_str(), "avx512")))
            st = try_choice(t, s, &b, &alt, &best, &best_ms, &ms, r);
    } else {
        tm_choice cb = { CT_PICK_CLBLAST, 0, 1 };
        if (rule.pick == CT_PICK_CLBLAST)
            r->clblast_ms = rule_ms;
        else if (!(st = try_choice(t, s, &b, &cb, &best, &best_ms, &ms, r)))
            r->clblast_ms = ms;
        /* big, small, on GPUs huge, on pocl the float16 register tiles */
        for (int tiles = 0; tiles <= CT_GEMM_CL_VEC && !st && !t->stop; tiles++)
            if (tiles != CT_GEMM_CL_NARROW && tiles != CT_GEMM_CL_REG &&
                (tiles != CT_GEMM_CL_HUGE || ct_gemm_cl_has_huge(ctx)) &&
                (tiles != CT_GEMM_CL_VEC || ct_gemm_cl_vec_device(ctx)))
                st = walk_splits(t, s, &b, tiles, &best, &best_ms, r);
    }
    if (st)
        goto done;
    /* the rule ran first: once more, so a cold start does not count against it */
    if (rule_ms > 0 && !same_choice(&best, &rule)) {
        double again;
        tm_choice keep = best;
        double keep_ms = best_ms;
        if ((st = try_choice(t, s, &b, &rule, &best, &best_ms, &again, r)))
            goto done;
        if (again > 0 && again < rule_ms)
            rule_ms = again;
        best = keep, best_ms = keep_ms;
    }
    /* noise: the rule keeps the shape unless beaten by 3 % */
    if (rule_ms > 0 && best_ms > 0.97 * rule_ms)
        best = rule, best_ms = rule_ms;
    r->best = best;
    r->best_ms = best_ms;
    r->rule_ms = rule_ms;
    r->changed = !same_choice(&best, &rule);
done:
    tm_free(&b);
    return st;
}

/* Writes one shape's winner to the cache's table (and t->table) */
int tn_keep(tuner *t, const tm_shape *s, const tm_choice *c, double ms, double rule_ms)
{
    ct_tune_gemm g = { s->conv, s->ta, s->tb, (uint32_t)s->m, (uint32_t)s->n, (uint32_t)s->k, { 0 },
                       (ct_tune_pick)c->pick, c->tiles, (uint32_t)c->splits, ms, rule_ms, 1 };
    memcpy(g.geom, s->geom, sizeof g.geom);
    ct_tune_device one;
    ct_tune_identity(t->ctx, &one);
    one.gemm = &g;
    one.ngemm = 1;
    int st = ct_tune_device_put(&t->table, &g);
    if (st)
        return ct_fail(t->ctx, st, "tune: %s", st == CT_ERR_NO_MEMORY ? "out of host memory" : "too many shapes");
    return ct_tune_write(t->ctx, &one, 0);
}

static int tune_model(tuner *t, const char *model)
{
    ct_context *ctx = t->ctx;
    int batch = t->o->batch > 0 ? t->o->batch : ct_bench_seed_batch(model);
    if (batch <= 0)
        batch = 64;
    t->model = model;
    tn_progress(t, "shapes", 0, 1, "recording one training step's products");
    size_t first = t->n;
    int st = add_shapes(t, model, batch);
    if (st)
        return st;
    if (t->n > CT_TUNE_MAX_GEMM)
        return ct_fail(ctx, CT_ERR_UNSUPPORTED, "tune: the models run more than %d shapes", CT_TUNE_MAX_GEMM);
    qsort(t->shapes + first, t->n - first, sizeof *t->shapes, by_work);
    double model_deadline = t->t0 + 0.97 * t->o->budget * (double)(t->model_index + 1) * (t->clblast_phase ? 0.6 : 1.0);
    for (size_t i = first; i < t->n && !t->stop; i++) {
        const tm_shape *s = &t->shapes[i];
        if (ct_now() > t->deadline) { /* the budget is spent: the rest next time */
            t->res->stopped = 1;
            break;
        }
        char ss[64], line[512];
        tn_shape_str(s, ss, sizeof ss);
        const ct_tune_gemm *old = ct_tune_device_find(&t->table, s->conv, s->ta, s->tb, s->m, s->n, s->k);
        if (old && old->checked && !t->o->retune) {
            t->res->skipped++;
            t->res->default_ms += s->count * old->default_ms;
            t->res->tuned_ms += s->count * old->ms;
            tm_choice was = { old->pick, old->tiles, old->splits };
            int cl = old->pick == CT_PICK_CLBLAST;
            t->results[i] = (tn_shape_result){ was, old->ms, old->default_ms, cl ? old->ms : -1, was,
                                               cl ? -1 : old->ms, 0, 0 };
            snprintf(line, sizeof line, "%s x%.0f: tuned before (%s)", ss, s->count, ct_tune_pick_str(old->pick));
            tn_progress(t, "gemm", (int)(i - first + 1), (int)(t->n - first), line);
            continue;
        }
        /* what is left of the model's share, spread over its shapes left */
        double left = model_deadline - ct_now();
        t->shape_deadline = ct_now() + (left > 0 ? left : 0) / (double)(t->n - i);
        tn_shape_result r;
        memset(&r, 0, sizeof r);
        if ((st = tune_shape(t, s, &r)))
            return st;
        if (r.best_ms < 0) {
            snprintf(line, sizeof line, "%s: no candidate passed the check; the built-in rule stays", ss);
            tn_progress(t, "gemm", (int)(i - first + 1), (int)(t->n - first), line);
            continue;
        }
        t->results[i] = r;
        t->results[i].measured = 1;
        if ((st = tn_keep(t, s, &r.best, r.best_ms, r.rule_ms)))
            return st;
        t->res->measured++;
        t->res->changed += r.changed;
        t->res->default_ms += s->count * (r.rule_ms > 0 ? r.rule_ms : r.best_ms);
        t->res->tuned_ms += s->count * r.best_ms;
        char cs[64];
        tn_choice_str(&r.best, cs, sizeof cs);
        snprintf(line, sizeof line, "%s x%.0f: %s %.3f ms (rule %.3f ms, %.2fx)", ss, s->count, cs, r.best_ms,
                 r.rule_ms, r.rule_ms > 0 ? r.rule_ms / r.best_ms : 0.0);
        tn_progress(t, "gemm", (int)(i - first + 1), (int)(t->n - first), line);
    }
    if (!t->stop && !t->res->stopped) {
        char name[96];
        snprintf(name, sizeof name, "%.80s@%d", model, batch);
        ct_tune_device one;
        ct_tune_identity(ctx, &one);
        if ((st = ct_tune_device_add_model(&one, name)) || (st = ct_tune_write(ctx, &one, 0))) {
            ct_tune_device_free(&one);
            return st;
        }
        ct_tune_device_free(&one);
    }
    t->model = NULL;
    return CT_OK;
}

int ct_tune(ct_context *ctx, const ct_tune_options *o, ct_tune_result *res)
{
    CT_VALIDATE(ctx, ctx && o && res && o->nmodels > 0 && o->models && o->budget > 0);
    memset(res, 0, sizeof *res);
    if (!ctx->cache_dir)
        return ct_fail(ctx, CT_ERR_UNSUPPORTED, "tune: the kernel cache is off, so tuned choices cannot be kept. "
                       "HINT: set CLTRAIN_CACHE_DIR to a writable directory (and not CLTRAIN_CACHE=off)");
    tuner t;
    memset(&t, 0, sizeof t);
    t.ctx = ctx, t.o = o, t.res = res;
    t.t0 = ct_now();
    /* 3 % kept back: a shape or parameter set under way when time runs out finishes */
    t.deadline = t.t0 + 0.97 * o->budget * o->nmodels;
    t.clblast_phase = o->clblast && ctx->cls.gemm == CT_GEMM_CLBLAST;
    /* time per candidate: enough rounds to see past timer noise, bounded by the budget */
    t.min_seconds = o->budget >= 30 ? 0.06 : 0.03;
    int found = 0;
    int st = ct_tune_read(ctx, &t.table, &found);
    if (!st && !found)
        ct_tune_identity(ctx, &t.table);
    /* measure with the built-in rules, not what was tuned before */
    ctx->tune_bypass++;
    t.results = calloc(CT_TUNE_MAX_GEMM, sizeof *t.results);
    if (!st && !t.results)
        st = ct_fail(ctx, CT_ERR_NO_MEMORY, "out of host memory");
    for (int i = 0; i < o->nmodels && !st && !t.stop; i++) {
        t.model_index = i;
        st = tune_model(&t, o->models[i]);
    }
    res->shapes = (int)t.n;
    if (!st && t.clblast_phase && !t.stop)
        st = tn_clblast(&t);
    ctx->tune_bypass--;
    ct_tune_forget(ctx);
    res->seconds = ct_now() - t.t0;
    t.model = NULL;
    if (!st)
        tn_progress(&t, "done", 1, 1, "done");
    ct_tune_device_free(&t.table);
    free(t.shapes);
    free(t.results);
    return st;
}
