/*
 * fuzz_text - language-model text files (text: in src/data/text.c) and the
 * loader's (T, N) batches of them. Input layout: byte 0 picks word tokens
 * (bit 0), a split (bit 1), a small vocabulary (bit 2) and seq (bits 4-6:
 * 1, 2, 3, 4, 7, 16, 64, 200); the rest is the file. Both splits are
 * opened; a dataset that opens must hold windows whose targets are the
 * next tokens, ids inside the vocabulary, and batches that match it.
 */
#include <string.h>
#include <unistd.h>

#include "data/dataset.h"
#include "data/loader.h"
#include "fuzz.h"

static void check(const ct_dataset *ds)
{
    size_t n = ct_dataset_count(ds), V = ct_tokenizer_size(ct_dataset_tokenizer(ds));
    int T = ct_dataset_seq(ds);
    FUZZ_CHECK(n > 0 && T > 0 && ct_dataset_labels_per_sample(ds) == T, "bad LM dataset shape");
    int32_t *ids = malloc((size_t)T * sizeof *ids), *y = malloc((size_t)T * sizeof *y);
    int32_t *next = malloc((size_t)T * sizeof *next);
    if (!ids || !y || !next)
        abort();
    for (size_t i = 0; i < n; i++) {
        FUZZ_CHECK(ct_dataset_sample_tokens(ds, i, ids, y) == CT_OK, "sample %zu", i);
        for (int t = 0; t < T; t++) {
            FUZZ_CHECK(ids[t] > 0 && (size_t)ids[t] < V && y[t] > 0 && (size_t)y[t] < V,
                       "id %d / %d of %zu", ids[t], y[t], V);
            if (t + 1 < T)
                FUZZ_CHECK(y[t] == ids[t + 1], "target %d of window %zu is not the next token", t, i);
        }
        if (i + 1 < n) {
            ct_dataset_sample_tokens(ds, i + 1, next, NULL);
            FUZZ_CHECK(y[T - 1] == next[0], "window %zu's last target is not window %zu's first", i, i + 1);
        }
    }
    ct_loader_options o;
    ct_loader_defaults(&o);
    o.batch = 3;
    o.prefetch = 0;
    ct_loader *l = NULL;
    FUZZ_CHECK(ct_loader_create(ds, &o, &l) == CT_OK, "loader: %s", ct_last_error());
    ct_loader_start_epoch(l, 1);
    ct_batch b;
    while (ct_loader_next(l, &b) == CT_OK && b.n) {
        FUZZ_CHECK(b.seq == (size_t)T && b.stride == 3, "batch shape");
        for (size_t i = 0; i < b.n; i++) {
            ct_dataset_sample_tokens(ds, b.index[i], ids, y);
            for (int t = 0; t < T; t++)
                FUZZ_CHECK(b.tokens[(size_t)t * 3 + i] == ids[t] && b.y[(size_t)t * 3 + i] == y[t],
                           "batch element (%d, %zu)", t, i);
        }
    }
    ct_loader_free(&l);
    free(ids);
    free(y);
    free(next);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const int seqs[8] = { 1, 2, 3, 4, 7, 16, 64, 200 };
    if (size < 1 || size > 1 << 18)
        return 0;
    unsigned mode = data[0];
    char path[4200], spec[4400];
    snprintf(path, sizeof path, "%s", fuzz_path("lm.txt"));
    if (fuzz_write(path, data + 1, size - 1, 0))
        abort();
    snprintf(spec, sizeof spec, "text:%s:seq=%d%s%s%s", path, seqs[(mode >> 4) & 7],
             mode & 1 ? ":tokens=word" : "", mode & 1 && mode & 4 ? ":vocab=3" : "",
             mode & 2 ? ":split=0.25" : "");
    for (int split = 0; split < 2; split++) {
        ct_dataset *ds = NULL;
        if (ct_dataset_open(spec, split, &ds) == CT_OK)
            check(ds);
        ct_dataset_free(&ds);
    }
    unlink(path);
    return 0;
}
