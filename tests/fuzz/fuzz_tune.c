/*
 * fuzz_tune - tuned-choice files (src/ops/tune_file.c): the cache's
 * "tuned-<key>.json" tables and `cltrain tune --export` files, read by
 * `tune --import` and on every context's first matrix product. A file
 * parses or is refused with a message; a parsed one holds only fields in
 * range, writes back, and what it writes parses to the same entries and
 * writes to the same text again.
 */
#include <string.h>

#include "core/error.h"
#include "fuzz.h"
#include "ops/tune_file.h"

static void check_sane(const ct_tune_file *f)
{
    FUZZ_CHECK(f->n <= CT_TUNE_MAX_DEVICES, "%zu devices", f->n);
    for (size_t i = 0; i < f->n; i++) {
        const ct_tune_device *d = &f->dev[i];
        FUZZ_CHECK(!strcmp(d->cls, "cpu") || !strcmp(d->cls, "gpu"), "class '%s'", d->cls);
        FUZZ_CHECK(d->ngemm <= CT_TUNE_MAX_GEMM && d->nmodels <= CT_TUNE_MAX_MODELS && d->nclblast <= 3,
                   "counts %zu %zu %d", d->ngemm, d->nmodels, d->nclblast);
        for (size_t j = 0; j < d->ngemm; j++) {
            const ct_tune_gemm *g = &d->gemm[j];
            FUZZ_CHECK(g->m && g->n && g->k && g->pick > CT_PICK_NONE && g->pick <= CT_PICK_BLAS,
                       "shape %ux%ux%u pick %d", g->m, g->n, g->k, (int)g->pick);
            /* tiles: big, small, and narrow (convolutions) or huge and vec (products) */
            FUZZ_CHECK(g->pick != CT_PICK_OWN ||
                           (g->splits >= 1 && (g->conv ? g->tiles >= 0 && g->tiles <= 2
                                                      : g->tiles == 0 || g->tiles == 1 || g->tiles == 3 ||
                                                            g->tiles == 5)),
                       "own with splits %u tiles %d", g->splits, g->tiles);
            FUZZ_CHECK(g->conv >= 0 && g->conv <= 3 && (!g->conv || g->pick == CT_PICK_OWN), "conv %d", g->conv);
            FUZZ_CHECK(g->ms >= 0 && g->default_ms >= 0, "negative times");
            FUZZ_CHECK(ct_tune_device_find(d, g->conv, g->ta, g->tb, g->m, g->n, g->k) == g, "a shape listed twice");
        }
        for (int k = 0; k < d->nclblast; k++)
            FUZZ_CHECK(d->clblast[k].n > 0 && d->clblast[k].n <= CT_TUNE_MAX_PARAMS, "%d parameters",
                       d->clblast[k].n);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 20)
        return 0;
    ct_tune_file f, g;
    char err[512];
    int st = ct_tune_file_parse((const char *)data, size, &f, err, sizeof err);
    if (st) {
        FUZZ_CHECK(st == CT_ERR_CORRUPT || st == CT_ERR_NO_MEMORY, "status %d", st);
        FUZZ_CHECK(err[0] && memchr(err, '\0', sizeof err), "a refusal without its reason");
        return 0;
    }
    check_sane(&f);
    char *text = ct_tune_file_format(&f);
    FUZZ_CHECK(text, "a parsed file does not write back");
    st = ct_tune_file_parse(text, strlen(text), &g, err, sizeof err);
    FUZZ_CHECK(!st, "what was written does not parse: %s", err);
    FUZZ_CHECK(g.n == f.n, "%zu devices written, %zu read back", f.n, g.n);
    for (size_t i = 0; i < f.n; i++)
        FUZZ_CHECK(g.dev[i].ngemm == f.dev[i].ngemm && g.dev[i].nmodels == f.dev[i].nmodels &&
                   g.dev[i].nclblast == f.dev[i].nclblast && !strcmp(g.dev[i].device, f.dev[i].device),
                   "device %zu changed in a round trip", i);
    char *again = ct_tune_file_format(&g);
    FUZZ_CHECK(again && !strcmp(again, text), "writing is not stable");
    free(again);
    free(text);
    ct_tune_file_free(&g);
    ct_tune_file_free(&f);
    return 0;
}
