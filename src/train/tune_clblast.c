/*
 * tune_clblast.c - CLBlast's GEMM parameters for the device, searched on
 * the shapes the models run through CLBlast or nearly do (CLBlast within
 * 1.5x of the best other candidate). CLBlast keeps one parameter set per
 * device and kernel, so the search minimises the step's total: the sum over
 * those shapes of count x min(CLBlast's time with the set, the best other
 * candidate's). It starts from CLBlast's own parameters and tries
 * neighbours of the best set so far: one kernel's parameters (Xgemm,
 * XgemmDirect, or the size from which GEMM goes indirect) redrawn at random
 * from the spaces CLBlast's own tuners search, under their constraints.
 * Every set's output is checked on every shape before it can count. A set
 * that wins by more than 2 % is kept: in the table, and the shapes it makes
 * CLBlast's are picked so.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/clblast_params.h"
#include "ops/tune_use.h"
#include "train/tune_internal.h"

typedef struct pset {
    ct_tune_params p[3]; /* Xgemm, XgemmDirect, GemmRoutine */
} pset;

static const char *const kernels[3] = { "Xgemm", "XgemmDirect", "GemmRoutine" };

static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

static uint32_t pick_of(uint64_t *r, const uint32_t *v, int n)
{
    return v[next(r) % (uint64_t)n];
}

static int set_param(ct_tune_params *p, const char *name, uint32_t v)
{
    for (int i = 0; i < p->n; i++)
        if (!strcmp(p->names[i], name)) {
            p->values[i] = v;
            return 1;
        }
    return 0;
}

#define PICK(arr) pick_of(r, arr, (int)(sizeof arr / sizeof *arr))

/* A random Xgemm configuration (GEMMK 0) in the space of CLBlast's xgemm
 * tuner, within the device's work-group and local memory limits */
static int draw_xgemm(uint64_t *r, const ct_context *ctx, ct_tune_params *p)
{
    static const uint32_t wg[] = { 16, 32, 64, 128 }, kw[] = { 16, 32 }, dim[] = { 8, 16, 32 },
                          kwi[] = { 2, 8 }, vw[] = { 1, 2, 4, 8 }, bit[] = { 0, 1 };
    for (int tries = 0; tries < 10000; tries++) {
        uint32_t mwg = PICK(wg), nwg = PICK(wg), kwg = PICK(kw), mdimc = PICK(dim), ndimc = PICK(dim),
                 mdima = PICK(dim), ndimb = PICK(dim), kwi_ = PICK(kwi), vwm = PICK(vw), vwn = PICK(vw),
                 strm = PICK(bit), strn = PICK(bit), sa = PICK(bit), sb = PICK(bit);
        if (mwg % (mdimc * vwm) || nwg % (ndimc * vwn) || mwg % (mdima * vwm) || nwg % (ndimb * vwn) ||
            kwg % ((mdimc * ndimc) / mdima) || kwg % ((mdimc * ndimc) / ndimb) || kwg % kwi_ ||
            (size_t)mdimc * ndimc > ctx->dev.max_work_group_size ||
            (uint64_t)(sa * kwg * mwg + sb * kwg * nwg) * 4 * 4 > ctx->dev.local_mem_bytes * 3)
            continue;
        const char *names[] = { "MWG", "NWG", "KWG", "MDIMC", "NDIMC", "MDIMA", "NDIMB", "KWI", "VWM", "VWN",
                                "STRM", "STRN", "SA", "SB", "GEMMK", "KREG" };
        const uint32_t vals[] = { mwg, nwg, kwg, mdimc, ndimc, mdima, ndimb, kwi_, vwm, vwn, strm, strn, sa, sb, 0, 1 };
        for (size_t i = 0; i < sizeof vals / sizeof *vals; i++)
            set_param(p, names[i], vals[i]);
        return 1;
    }
    return 0;
}

/* A random XgemmDirect configuration in the space of CLBlast's tuner */
static int draw_direct(uint64_t *r, const ct_context *ctx, ct_tune_params *p)
{
    static const uint32_t wgd[] = { 8, 16, 32, 64 }, dim[] = { 8, 16, 32 }, kwid[] = { 2, 8, 16 },
                          vw[] = { 1, 2, 4, 8 }, bit[] = { 0, 1 };
    for (int tries = 0; tries < 10000; tries++) {
        uint32_t w = PICK(wgd), mdimcd = PICK(dim), ndimcd = PICK(dim), mdimad = PICK(dim), ndimbd = PICK(dim),
                 k = PICK(kwid), vwmd = PICK(vw), vwnd = PICK(vw), pada = PICK(bit), padb = PICK(bit);
        if (w % (mdimcd * vwmd) || w % (ndimcd * vwnd) || w % (mdimad * vwmd) || w % (ndimbd * vwnd) ||
            w % ((mdimcd * ndimcd) / mdimad) || w % ((mdimcd * ndimcd) / ndimbd) || w % k ||
            (size_t)mdimcd * ndimcd > ctx->dev.max_work_group_size ||
            (uint64_t)(w * (w + pada) + w * (w + padb)) * 4 * 4 > ctx->dev.local_mem_bytes * 3)
            continue;
        const char *names[] = { "WGD", "MDIMCD", "NDIMCD", "MDIMAD", "NDIMBD", "KWID", "VWMD", "VWND", "PADA",
                                "PADB" };
        const uint32_t vals[] = { w, mdimcd, ndimcd, mdimad, ndimbd, k, vwmd, vwnd, pada, padb };
        for (size_t i = 0; i < sizeof vals / sizeof *vals; i++)
            set_param(p, names[i], vals[i]);
        return 1;
    }
    return 0;
}

static int draw_routine(uint64_t *r, ct_tune_params *p)
{
    static const uint32_t sizes[] = { 0, 128, 256, 384, 512, 768, 1024, 1536, 2048, 4096 };
    return set_param(p, "XGEMM_MIN_INDIRECT_SIZE", PICK(sizes));
}

static int apply(ct_context *ctx, const pset *s)
{
    for (int k = 0; k < 3; k++)
        if (ct_clblast_params_set(ctx->device, &s->p[k]))
            return 0;
    return 1;
}

static int same_set(const pset *a, const pset *b)
{
    return !memcmp(a, b, sizeof *a);
}

/* The step's total under set s: count x min(CLBlast with s, the best other
 * candidate) over the shapes; ms[i] gets CLBlast's time per shape.
 * *ok = 0 when the set fails a shape's check or does not run. */
static int evaluate(tuner *t, const size_t *idx, size_t n, double *ms, double *total, int *ok)
{
    *total = 0;
    *ok = 1;
    for (size_t j = 0; j < n && *ok; j++) {
        const tm_shape *s = &t->shapes[idx[j]];
        const tn_shape_result *r = &t->results[idx[j]];
        tm_bufs b;
        int st = tm_alloc(t->ctx, s, t->o->seed + 7 * j, &b);
        if (st)
            return st;
        tm_choice c = { CT_PICK_CLBLAST, 0, 1 };
        char why[512];
        st = tm_measure(t->ctx, s, &b, &c, t->min_seconds, 0, &ms[j], ok, why, sizeof why);
        tm_free(&b);
        if (st)
            return st;
        if (!*ok) {
            char ss[64], line[768];
            tn_shape_str(s, ss, sizeof ss);
            snprintf(line, sizeof line, "a parameter set rejected on %s: %s", ss, why);
            tn_progress(t, "clblast", -1, -1, line);
            break;
        }
        double other = r->alt_ms > 0 ? r->alt_ms : ms[j];
        *total += s->count * (ms[j] < other ? ms[j] : other);
    }
    return CT_OK;
}

int tn_clblast(tuner *t)
{
    ct_context *ctx = t->ctx;
    const ct_tune_device *tab = &t->table;
    if (tab->nclblast && !t->o->retune)
        return tn_progress(t, "clblast", 1, 1, "CLBlast's parameters were tuned before (kept)"), CT_OK;
    if (ct_now() >= t->deadline) {
        t->res->stopped = 1;
        return tn_progress(t, "clblast", 1, 1, "no budget left for CLBlast's parameters (next run)"), CT_OK;
    }
    size_t *idx = malloc((t->n ? t->n : 1) * sizeof *idx);
    double *ms = malloc((t->n ? t->n : 1) * 2 * sizeof *ms);
    int st = CT_OK;
    if (!idx || !ms) {
        st = ct_fail(ctx, CT_ERR_NO_MEMORY, "out of host memory");
        goto done;
    }
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++) {
        const tn_shape_result *r = &t->results[i];
        if (r->clblast_ms > 0 && (r->best.pick == CT_PICK_CLBLAST || r->alt_ms < 0 || r->clblast_ms <= 1.5 * r->alt_ms))
            idx[n++] = i;
    }
    if (!n) {
        tn_progress(t, "clblast", 1, 1, "no shape runs through CLBlast or nearly does: its parameters are left alone");
        goto done;
    }
    pset def, best, cand;
    memset(&def, 0, sizeof def);
    for (int k = 0; k < 3; k++)
        if (ct_clblast_params_get(ctx->device, kernels[k], &def.p[k])) {
            tn_progress(t, "clblast", 1, 1, "CLBlast does not give its parameters here: left alone");
            goto done;
        }
    double best_total, total;
    int ok;
    char line[256];
    if ((st = evaluate(t, idx, n, ms, &best_total, &ok)))
        goto done;
    if (!ok) {
        tn_progress(t, "clblast", 1, 1, "CLBlast's own parameters fail the check: left alone");
        goto done;
    }
    double def_total = best_total;
    memcpy(ms + n, ms, n * sizeof *ms); /* the best set's times per shape */
    best = def;
    uint64_t rng = t->o->seed * 0x9e3779b97f4a7c15ull + 1;
    int tried = 0;
    /* until the budget is spent, or 16 sets in a row bring nothing */
    int since_best = 0;
    double last = 0; /* the last set's time: one more must fit in the budget */
    for (int draws = 0; !t->stop && ct_now() + last < t->deadline && draws < 100000 && since_best < 16; draws++) {
        cand = best;
        uint64_t which = next(&rng) % 20;
        int k = which < 9 ? 0 : which < 18 ? 1 : 2;
        int drawn = k == 0 ? draw_xgemm(&rng, ctx, &cand.p[0]) : k == 1 ? draw_direct(&rng, ctx, &cand.p[1])
                                                                        : draw_routine(&rng, &cand.p[2]);
        if (!drawn || same_set(&cand, &best))
            continue;
        tried++;
        t->res->clblast_sets++;
        if (!apply(ctx, &cand)) {
            t->res->rejected++;
            continue;
        }
        double t0 = ct_now();
        if ((st = evaluate(t, idx, n, ms, &total, &ok)))
            break;
        last = ct_now() - t0;
        if (!ok) {
            t->res->rejected++;
        } else if (total < 0.98 * best_total) {
            best = cand, best_total = total;
            memcpy(ms + n, ms, n * sizeof *ms);
            since_best = -1;
        }
        since_best++;
        snprintf(line, sizeof line, "set %d (%s): %.3f ms per step, best %.3f, CLBlast's own %.3f", tried,
                 kernels[k], ok ? total : -1.0, best_total, def_total);
        tn_progress(t, "clblast", tried, 0, line);
    }
    apply(ctx, same_set(&best, &def) ? &def : &best);
    if (st || same_set(&best, &def))
        goto done;
    /* keep the set, and make CLBlast the pick where it now wins */
    ct_tune_device upd;
    ct_tune_identity(ctx, &upd);
    memcpy(upd.clblast, best.p, sizeof best.p);
    upd.nclblast = 3;
    upd.clblast_checked = 1;
    for (size_t j = 0; j < n && !st; j++) {
        const tm_shape *s = &t->shapes[idx[j]];
        const tn_shape_result *r = &t->results[idx[j]];
        double cl = ms[n + j];
        int other = r->alt_ms > 0 && r->alt_ms < cl;
        tm_choice c = other ? r->alt : (tm_choice){ CT_PICK_CLBLAST, 0, 1 };
        st = ct_tune_device_put(&upd, &(ct_tune_gemm){ s->conv, s->ta, s->tb, (uint32_t)s->m, (uint32_t)s->n,
                                                       (uint32_t)s->k, { 0 }, (ct_tune_pick)c.pick, c.tiles,
                                                       (uint32_t)c.splits, other ? r->alt_ms : cl, r->rule_ms, 1 });
    }
    if (!st)
        st = ct_tune_write(ctx, &upd, 0);
    ct_tune_device_free(&upd);
    if (!st) {
        t->res->clblast_kept = 1;
        t->res->tuned_ms -= def_total - best_total;
        snprintf(line, sizeof line, "kept a set: %.3f ms per step on these shapes, CLBlast's own %.3f (%.2fx)",
                 best_total, def_total, def_total / best_total);
        tn_progress(t, "clblast", tried, tried, line);
    }
done:
    free(idx);
    free(ms);
    return st;
}
