/*
 * tune_file.c - reading and writing tuned choices (tune_file.h). The reader
 * checks every field's type and range and names the first that does not
 * check out (device entry, field, shape index); unknown fields are ignored,
 * so later versions can add some.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "ops/tune_file.h"

static const char *const pick_names[] = { "rule", "clblast", "own", "avx512", "blas" };
static const char *const clblast_kernels[3] = { "Xgemm", "XgemmDirect", "GemmRoutine" };
static const char *const conv_names[4] = { "", "fwd", "dx", "dw" };
/* by ct_gemm_cl_tiles: narrow for convolutions only, huge and vec for
 * products only ("reg" is never stored: its devices take any tiles as it) */
static const char *const tile_names[6] = { "big", "small", "narrow", "huge", "reg", "vec" };

static int tiles_valid(int i, int conv)
{
    return conv ? i <= 2 : i == 0 || i == 1 || i == 3 || i == 5;
}

const char *ct_tune_pick_str(ct_tune_pick p)
{
    return (unsigned)p < sizeof pick_names / sizeof *pick_names ? pick_names[p] : "?";
}

void ct_tune_device_free(ct_tune_device *d)
{
    free(d->models);
    free(d->gemm);
    memset(d, 0, sizeof *d);
}

void ct_tune_file_free(ct_tune_file *f)
{
    for (size_t i = 0; i < f->n; i++)
        ct_tune_device_free(&f->dev[i]);
    free(f->dev);
    f->dev = NULL;
    f->n = 0;
}

int ct_tune_device_copy(ct_tune_device *dst, const ct_tune_device *src)
{
    *dst = *src;
    dst->models = NULL, dst->gemm = NULL;
    if (src->nmodels && !(dst->models = malloc(src->nmodels * sizeof *dst->models)))
        return CT_ERR_NO_MEMORY;
    if (src->ngemm && !(dst->gemm = malloc(src->ngemm * sizeof *dst->gemm))) {
        free(dst->models);
        dst->models = NULL;
        return CT_ERR_NO_MEMORY;
    }
    if (src->nmodels)
        memcpy(dst->models, src->models, src->nmodels * sizeof *dst->models);
    if (src->ngemm)
        memcpy(dst->gemm, src->gemm, src->ngemm * sizeof *dst->gemm);
    return CT_OK;
}

const ct_tune_gemm *ct_tune_device_find(const ct_tune_device *d, int conv, int ta, int tb, size_t m, size_t n,
                                        size_t k)
{
    for (size_t i = 0; i < d->ngemm; i++) {
        const ct_tune_gemm *g = &d->gemm[i];
        if (g->m == m && g->n == n && g->k == k && g->ta == !!ta && g->tb == !!tb && g->conv == conv)
            return g;
    }
    return NULL;
}

int ct_tune_device_put(ct_tune_device *d, const ct_tune_gemm *g)
{
    ct_tune_gemm *old = (ct_tune_gemm *)ct_tune_device_find(d, g->conv, g->ta, g->tb, g->m, g->n, g->k);
    if (old) {
        *old = *g;
        return CT_OK;
    }
    if (d->ngemm >= CT_TUNE_MAX_GEMM)
        return CT_ERR_INVALID_ARG;
    ct_tune_gemm *p = realloc(d->gemm, (d->ngemm + 1) * sizeof *p);
    if (!p)
        return CT_ERR_NO_MEMORY;
    d->gemm = p;
    d->gemm[d->ngemm++] = *g;
    return CT_OK;
}

int ct_tune_device_has_model(const ct_tune_device *d, const char *model)
{
    for (size_t i = 0; i < d->nmodels; i++)
        if (!strcmp(d->models[i], model))
            return 1;
    return 0;
}

int ct_tune_device_add_model(ct_tune_device *d, const char *model)
{
    if (ct_tune_device_has_model(d, model))
        return CT_OK;
    if (d->nmodels >= CT_TUNE_MAX_MODELS || strlen(model) >= sizeof *d->models)
        return CT_ERR_INVALID_ARG;
    char(*p)[96] = realloc(d->models, (d->nmodels + 1) * sizeof *p);
    if (!p)
        return CT_ERR_NO_MEMORY;
    d->models = p;
    snprintf(d->models[d->nmodels++], sizeof *d->models, "%s", model);
    return CT_OK;
}

int ct_tune_device_merge(ct_tune_device *dst, const ct_tune_device *src)
{
    int st = CT_OK;
    for (size_t i = 0; i < src->ngemm && !st; i++)
        st = ct_tune_device_put(dst, &src->gemm[i]);
    for (size_t i = 0; i < src->nmodels && !st; i++)
        st = ct_tune_device_add_model(dst, src->models[i]);
    if (!st && src->nclblast) {
        memcpy(dst->clblast, src->clblast, sizeof dst->clblast);
        dst->nclblast = src->nclblast;
        dst->clblast_checked = src->clblast_checked;
    }
    if (src->tuned > dst->tuned)
        dst->tuned = src->tuned;
    return st;
}

/* --- reading --- */

typedef struct reader {
    char *err;
    size_t cap;
    int failed;
} reader;

CT_PRINTF(2, 3) static int bad(reader *r, const char *fmt, ...)
{
    if (!r->failed) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->err, r->cap, fmt, ap);
        va_end(ap);
    }
    r->failed = 1;
    return CT_ERR_CORRUPT;
}

/* obj[key] as a string into out (required unless opt) */
static int get_str(reader *r, const cJSON *obj, const char *key, char *out, size_t cap, int opt,
                   const char *where)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    out[0] = '\0';
    if (!v && opt)
        return CT_OK;
    if (!cJSON_IsString(v) || !v->valuestring)
        return bad(r, "%s: \"%s\" is missing or not a string", where, key);
    if (strlen(v->valuestring) >= cap)
        return bad(r, "%s: \"%s\" is longer than %zu characters", where, key, cap - 1);
    snprintf(out, cap, "%s", v->valuestring);
    return CT_OK;
}

/* obj[key] as a whole number in [lo, hi] */
static int get_int(reader *r, const cJSON *obj, const char *key, double lo, double hi, int opt, double *out,
                   const char *where)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v && opt)
        return CT_OK;
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble != floor(v->valuedouble) ||
        v->valuedouble < lo || v->valuedouble > hi)
        return bad(r, "%s: \"%s\" is missing or not a whole number from %.0f to %.0f", where, key, lo, hi);
    *out = v->valuedouble;
    return CT_OK;
}

static int get_ms(reader *r, const cJSON *obj, const char *key, double *out, const char *where)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    *out = 0;
    if (!v)
        return CT_OK;
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0 || v->valuedouble > 1e9)
        return bad(r, "%s: \"%s\" is not a time in ms", where, key);
    *out = v->valuedouble;
    return CT_OK;
}

static int get_bool(reader *r, const cJSON *obj, const char *key, int *out, const char *where)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    *out = 0;
    if (!v)
        return CT_OK;
    if (!cJSON_IsBool(v))
        return bad(r, "%s: \"%s\" is not true or false", where, key);
    *out = cJSON_IsTrue(v);
    return CT_OK;
}

static int read_gemm(reader *r, const cJSON *o, ct_tune_gemm *g, const char *where)
{
    memset(g, 0, sizeof *g);
    if (!cJSON_IsObject(o))
        return bad(r, "%s: not an object", where);
    double v[6] = { 0 };
    static const char *const keys[5] = { "ta", "tb", "m", "n", "k" };
    for (int i = 0; i < 5; i++)
        if (get_int(r, o, keys[i], i < 2 ? 0 : 1, i < 2 ? 1 : 2147483647.0, 0, &v[i], where))
            return CT_ERR_CORRUPT;
    g->ta = (int)v[0], g->tb = (int)v[1];
    char conv[8];
    if (get_str(r, o, "conv", conv, sizeof conv, 1, where))
        return CT_ERR_CORRUPT;
    for (int i = 1; i < 4 && conv[0]; i++)
        if (!strcmp(conv, conv_names[i]))
            g->conv = i;
    if (conv[0] && !g->conv)
        return bad(r, "%s: \"conv\" is \"%s\", not fwd, dx or dw", where, conv);
    if (g->conv) {
        const cJSON *gv = cJSON_GetObjectItemCaseSensitive(o, "geom");
        if (!cJSON_IsArray(gv) || cJSON_GetArraySize(gv) != 15)
            return bad(r, "%s: a convolution's \"geom\" is missing or not 15 numbers", where);
        int i = 0;
        const cJSON *e;
        cJSON_ArrayForEach(e, gv) {
            int lo = i == 9 || i == 10 ? 0 : 1; /* pads may be 0 */
            if (!cJSON_IsNumber(e) || e->valuedouble != floor(e->valuedouble) || e->valuedouble < lo ||
                e->valuedouble > 1048576)
                return bad(r, "%s: \"geom\"[%d] is not a whole number from %d to 1048576", where, i, lo);
            g->geom[i++] = (int)e->valuedouble;
        }
    }
    g->m = (uint32_t)v[2], g->n = (uint32_t)v[3], g->k = (uint32_t)v[4];
    char pick[16];
    if (get_str(r, o, "pick", pick, sizeof pick, 0, where))
        return CT_ERR_CORRUPT;
    g->pick = CT_PICK_NONE;
    for (int i = 1; i < (int)(sizeof pick_names / sizeof *pick_names); i++)
        if (!strcmp(pick, pick_names[i]))
            g->pick = (ct_tune_pick)i;
    if (g->pick == CT_PICK_NONE)
        return bad(r, "%s: \"pick\" is \"%s\", not clblast, own, avx512 or blas", where, pick);
    if (g->conv && g->pick != CT_PICK_OWN)
        return bad(r, "%s: a convolution's pick is \"%s\", not own", where, pick);
    if (g->pick == CT_PICK_OWN) {
        char tiles[8];
        if (get_str(r, o, "tiles", tiles, sizeof tiles, 0, where) ||
            get_int(r, o, "splits", 1, 4096, 0, &v[5], where))
            return CT_ERR_CORRUPT;
        g->tiles = -1;
        for (int i = 0; i < 6; i++)
            if (!strcmp(tiles, tile_names[i]) && tiles_valid(i, g->conv))
                g->tiles = i;
        if (g->tiles < 0)
            return bad(r, "%s: \"tiles\" is \"%s\", not big, small or %s", where, tiles,
                       g->conv ? "narrow" : "huge or vec");
        g->splits = (uint32_t)v[5];
    }
    if (get_ms(r, o, "ms", &g->ms, where) || get_ms(r, o, "default_ms", &g->default_ms, where) ||
        get_bool(r, o, "checked", &g->checked, where))
        return CT_ERR_CORRUPT;
    return CT_OK;
}

static int read_clblast(reader *r, const cJSON *o, ct_tune_device *d, const char *where)
{
    if (!cJSON_IsObject(o))
        return bad(r, "%s: \"clblast\" is not an object", where);
    d->nclblast = 0;
    for (int k = 0; k < 3; k++) {
        const cJSON *kv = cJSON_GetObjectItemCaseSensitive(o, clblast_kernels[k]);
        if (!kv)
            continue;
        if (!cJSON_IsObject(kv))
            return bad(r, "%s: clblast.%s is not an object", where, clblast_kernels[k]);
        ct_tune_params *p = &d->clblast[d->nclblast++];
        memset(p, 0, sizeof *p);
        snprintf(p->kernel, sizeof p->kernel, "%s", clblast_kernels[k]);
        const cJSON *e;
        cJSON_ArrayForEach(e, kv) {
            if (p->n >= CT_TUNE_MAX_PARAMS)
                return bad(r, "%s: clblast.%s has more than %d parameters", where, p->kernel, CT_TUNE_MAX_PARAMS);
            if (!e->string || !*e->string || strlen(e->string) >= sizeof p->names[0])
                return bad(r, "%s: clblast.%s has a parameter without a usable name", where, p->kernel);
            for (const char *c = e->string; *c; c++)
                if (!((*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_'))
                    return bad(r, "%s: clblast.%s: parameter name \"%s\" is not upper-case letters, digits and _",
                               where, p->kernel, e->string);
            if (!cJSON_IsNumber(e) || e->valuedouble < 0 || e->valuedouble > 1048576 ||
                e->valuedouble != floor(e->valuedouble))
                return bad(r, "%s: clblast.%s.%s is not a whole number from 0 to 1048576", where, p->kernel,
                           e->string);
            snprintf(p->names[p->n], sizeof p->names[0], "%s", e->string);
            p->values[p->n++] = (uint32_t)e->valuedouble;
        }
        if (!p->n)
            return bad(r, "%s: clblast.%s has no parameters", where, p->kernel);
    }
    return CT_OK;
}

static int read_device(reader *r, const cJSON *o, ct_tune_device *d, size_t idx)
{
    char where[64];
    snprintf(where, sizeof where, "devices[%zu]", idx);
    if (!cJSON_IsObject(o))
        return bad(r, "%s: not an object", where);
    double when = 0;
    if (get_str(r, o, "device", d->device, sizeof d->device, 0, where) ||
        get_str(r, o, "driver", d->driver, sizeof d->driver, 0, where) ||
        get_str(r, o, "platform", d->platform, sizeof d->platform, 0, where) ||
        get_str(r, o, "class", d->cls, sizeof d->cls, 0, where) ||
        get_str(r, o, "host_blas", d->host_blas, sizeof d->host_blas, 1, where) ||
        get_int(r, o, "tuned", 0, 1e12, 1, &when, where))
        return CT_ERR_CORRUPT;
    if (strcmp(d->cls, "cpu") && strcmp(d->cls, "gpu"))
        return bad(r, "%s: \"class\" is \"%s\", not cpu or gpu", where, d->cls);
    d->tuned = (int64_t)when;
    const cJSON *models = cJSON_GetObjectItemCaseSensitive(o, "models");
    if (models) {
        if (!cJSON_IsArray(models))
            return bad(r, "%s: \"models\" is not an array", where);
        const cJSON *e;
        cJSON_ArrayForEach(e, models) {
            if (!cJSON_IsString(e) || !e->valuestring || strlen(e->valuestring) >= sizeof *d->models)
                return bad(r, "%s: \"models\" holds something other than a short string", where);
            int st = ct_tune_device_add_model(d, e->valuestring);
            if (st)
                return st == CT_ERR_NO_MEMORY ? st : bad(r, "%s: more than %d models", where, CT_TUNE_MAX_MODELS);
        }
    }
    const cJSON *cb = cJSON_GetObjectItemCaseSensitive(o, "clblast");
    if (cb && read_clblast(r, cb, d, where))
        return CT_ERR_CORRUPT;
    if (get_bool(r, o, "clblast_checked", &d->clblast_checked, where))
        return CT_ERR_CORRUPT;
    const cJSON *gemm = cJSON_GetObjectItemCaseSensitive(o, "gemm");
    if (gemm) {
        if (!cJSON_IsArray(gemm))
            return bad(r, "%s: \"gemm\" is not an array", where);
        size_t i = 0;
        const cJSON *e;
        cJSON_ArrayForEach(e, gemm) {
            char w[96];
            snprintf(w, sizeof w, "%s.gemm[%zu]", where, i++);
            ct_tune_gemm g;
            if (read_gemm(r, e, &g, w))
                return CT_ERR_CORRUPT;
            if (ct_tune_device_find(d, g.conv, g.ta, g.tb, g.m, g.n, g.k))
                return bad(r, "%s: the shape %s%s %ux%ux%u%s%s is listed twice", w, g.ta ? "T" : "N",
                           g.tb ? "T" : "N", g.m, g.n, g.k, g.conv ? " conv " : "", conv_names[g.conv]);
            int st = ct_tune_device_put(d, &g);
            if (st)
                return st == CT_ERR_NO_MEMORY ? st : bad(r, "%s: more than %d shapes", where, CT_TUNE_MAX_GEMM);
        }
    }
    const cJSON *vd = cJSON_GetObjectItemCaseSensitive(o, "verdicts");
    if (vd) {
        if (!cJSON_IsObject(vd))
            return bad(r, "%s: \"verdicts\" is not an object", where);
        const cJSON *passed = cJSON_GetObjectItemCaseSensitive(vd, "passed");
        if (!cJSON_IsArray(passed))
            return bad(r, "%s: verdicts.passed is missing or not an array", where);
        const cJSON *e;
        cJSON_ArrayForEach(e, passed) {
            size_t used = strlen(d->verdicts_passed);
            if (!cJSON_IsString(e) || !e->valuestring || !*e->valuestring || strchr(e->valuestring, ',') ||
                used + strlen(e->valuestring) + 3 > sizeof d->verdicts_passed)
                return bad(r, "%s: verdicts.passed holds something other than a short family name", where);
            if (used)
                memcpy(d->verdicts_passed + used, ", ", 2), used += 2;
            memcpy(d->verdicts_passed + used, e->valuestring, strlen(e->valuestring) + 1);
        }
        double since = 0;
        if (get_str(r, vd, "failed", d->verdicts_failed, sizeof d->verdicts_failed, 1, where) ||
            get_int(r, vd, "since", 0, 1e12, 1, &since, where))
            return CT_ERR_CORRUPT;
        d->verdicts_since = (int64_t)since;
        d->has_verdicts = 1;
    }
    return CT_OK;
}

int ct_tune_file_parse(const char *text, size_t n, ct_tune_file *out, char *err, size_t errcap)
{
    memset(out, 0, sizeof *out);
    reader r = { err, errcap, 0 };
    if (errcap)
        err[0] = '\0';
    if (n > (64u << 20))
        return bad(&r, "larger than 64 MiB");
    cJSON *root = cJSON_ParseWithLength(text, n);
    if (!root) {
        const char *at = cJSON_GetErrorPtr();
        size_t off = at && at >= text && at <= text + n ? (size_t)(at - text) : 0;
        size_t line = 1;
        for (size_t i = 0; i < off; i++)
            line += text[i] == '\n';
        return bad(&r, "not JSON (near line %zu, byte %zu)", line, off);
    }
    int st = CT_OK;
    char fmt[32];
    double ver = 0;
    const cJSON *devs = cJSON_GetObjectItemCaseSensitive(root, "devices");
    if (!cJSON_IsObject(root) || get_str(&r, root, "format", fmt, sizeof fmt, 0, "the file"))
        st = bad(&r, "not a cltrain tune file (no \"format\")");
    else if (strcmp(fmt, CT_TUNE_FORMAT))
        st = bad(&r, "\"format\" is \"%s\", not \"%s\"", fmt, CT_TUNE_FORMAT);
    else if (get_int(&r, root, "version", 1, 1e6, 0, &ver, "the file"))
        st = CT_ERR_CORRUPT;
    else if (ver != CT_TUNE_VERSION)
        st = bad(&r, "version %.0f; this cltrain reads version %d", ver, CT_TUNE_VERSION);
    else if (!cJSON_IsArray(devs))
        st = bad(&r, "\"devices\" is missing or not an array");
    else if (cJSON_GetArraySize(devs) > CT_TUNE_MAX_DEVICES)
        st = bad(&r, "more than %d devices", CT_TUNE_MAX_DEVICES);
    if (!st) {
        size_t count = (size_t)cJSON_GetArraySize(devs);
        out->dev = calloc(count ? count : 1, sizeof *out->dev);
        if (!out->dev)
            st = CT_ERR_NO_MEMORY;
        const cJSON *e;
        size_t i = 0;
        cJSON_ArrayForEach(e, devs) {
            if (st)
                break;
            st = read_device(&r, e, &out->dev[i], i);
            i++;
            out->n = i;
        }
    }
    cJSON_Delete(root);
    if (st)
        ct_tune_file_free(out);
    if (st == CT_ERR_NO_MEMORY && errcap)
        snprintf(err, errcap, "out of host memory");
    return st;
}

/* --- writing --- */

static cJSON *device_json(const ct_tune_device *d)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    int ok = cJSON_AddStringToObject(o, "device", d->device) && cJSON_AddStringToObject(o, "driver", d->driver) &&
             cJSON_AddStringToObject(o, "platform", d->platform) && cJSON_AddStringToObject(o, "class", d->cls) &&
             cJSON_AddStringToObject(o, "host_blas", d->host_blas) &&
             cJSON_AddNumberToObject(o, "tuned", (double)d->tuned);
    cJSON *models = ok ? cJSON_AddArrayToObject(o, "models") : NULL;
    ok = models != NULL;
    for (size_t i = 0; ok && i < d->nmodels; i++) {
        cJSON *s = cJSON_CreateString(d->models[i]);
        ok = s && cJSON_AddItemToArray(models, s);
    }
    if (ok && d->nclblast) {
        cJSON *cb = cJSON_AddObjectToObject(o, "clblast");
        ok = cb != NULL;
        for (int k = 0; ok && k < d->nclblast; k++) {
            cJSON *kv = cJSON_AddObjectToObject(cb, d->clblast[k].kernel);
            ok = kv != NULL;
            for (int i = 0; ok && i < d->clblast[k].n; i++)
                ok = cJSON_AddNumberToObject(kv, d->clblast[k].names[i], d->clblast[k].values[i]) != NULL;
        }
        ok = ok && cJSON_AddBoolToObject(o, "clblast_checked", d->clblast_checked);
    }
    cJSON *gemm = ok ? cJSON_AddArrayToObject(o, "gemm") : NULL;
    ok = gemm != NULL;
    for (size_t i = 0; ok && i < d->ngemm; i++) {
        const ct_tune_gemm *g = &d->gemm[i];
        cJSON *e = cJSON_CreateObject();
        ok = e && cJSON_AddItemToArray(gemm, e);
        ok = ok && cJSON_AddNumberToObject(e, "ta", g->ta) && cJSON_AddNumberToObject(e, "tb", g->tb) &&
             cJSON_AddNumberToObject(e, "m", g->m) && cJSON_AddNumberToObject(e, "n", g->n) &&
             cJSON_AddNumberToObject(e, "k", g->k) && cJSON_AddStringToObject(e, "pick", ct_tune_pick_str(g->pick));
        if (ok && g->conv) {
            cJSON *gv = cJSON_CreateIntArray(g->geom, 15);
            ok = cJSON_AddStringToObject(e, "conv", conv_names[g->conv & 3]) && gv && cJSON_AddItemToObject(e, "geom", gv);
        }
        if (ok && g->pick == CT_PICK_OWN)
            ok = cJSON_AddStringToObject(e, "tiles", tile_names[(unsigned)g->tiles % 6]) &&
                 cJSON_AddNumberToObject(e, "splits", g->splits);
        ok = ok && cJSON_AddNumberToObject(e, "ms", round(g->ms * 1e4) / 1e4) &&
             cJSON_AddNumberToObject(e, "default_ms", round(g->default_ms * 1e4) / 1e4) &&
             cJSON_AddBoolToObject(e, "checked", g->checked);
    }
    if (ok && d->has_verdicts) {
        cJSON *vd = cJSON_AddObjectToObject(o, "verdicts");
        cJSON *passed = vd ? cJSON_AddArrayToObject(vd, "passed") : NULL;
        ok = passed != NULL;
        char list[sizeof d->verdicts_passed];
        snprintf(list, sizeof list, "%s", d->verdicts_passed);
        for (char *save = NULL, *t = strtok_r(list, ", ", &save); ok && t; t = strtok_r(NULL, ", ", &save)) {
            cJSON *s = cJSON_CreateString(t);
            ok = s && cJSON_AddItemToArray(passed, s);
        }
        ok = ok && cJSON_AddStringToObject(vd, "failed", d->verdicts_failed) &&
             cJSON_AddNumberToObject(vd, "since", (double)d->verdicts_since);
    }
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

char *ct_tune_file_format(const ct_tune_file *f)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *devs = NULL;
    int ok = root && cJSON_AddStringToObject(root, "format", CT_TUNE_FORMAT) &&
             cJSON_AddNumberToObject(root, "version", CT_TUNE_VERSION) &&
             (devs = cJSON_AddArrayToObject(root, "devices"));
    for (size_t i = 0; ok && i < f->n; i++) {
        cJSON *d = device_json(&f->dev[i]);
        ok = d && cJSON_AddItemToArray(devs, d);
        if (d && !ok)
            cJSON_Delete(d);
    }
    char *text = ok ? cJSON_Print(root) : NULL;
    cJSON_Delete(root);
    return text;
}
