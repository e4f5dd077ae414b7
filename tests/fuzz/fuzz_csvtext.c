/*
 * fuzz_csvtext - CSV text classification files (src/data/csvtext.c: quoted
 * fields with commas, newlines and doubled quotes). Input layout: byte 0
 * picks word tokens (bit 0), columns by header name instead of index
 * (bit 1), a split (bit 2) and seq (bits 4-5: 1, 3, 8, 40); the rest is
 * the file, read with text=1:label=0 or text=text:label=label.
 */
#include <string.h>
#include <unistd.h>

#include "data/dataset.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const int seqs[4] = { 1, 3, 8, 40 };
    if (size < 1 || size > 1 << 18)
        return 0;
    unsigned mode = data[0];
    char path[4200], spec[4400];
    snprintf(path, sizeof path, "%s", fuzz_path("text.csv"));
    if (fuzz_write(path, data + 1, size - 1, 0))
        abort();
    snprintf(spec, sizeof spec, "csv:%s:%s:seq=%d%s%s", path,
             mode & 2 ? "text=text:label=label" : "text=1:label=0", seqs[(mode >> 4) & 3],
             mode & 1 ? ":tokens=word" : "", mode & 4 ? ":split=0.5" : "");
    for (int split = 0; split < 2; split++) {
        ct_dataset *ds = NULL;
        if (ct_dataset_open(spec, split, &ds) == CT_OK) {
            size_t n = ct_dataset_count(ds), V = ct_tokenizer_size(ct_dataset_tokenizer(ds));
            int T = ct_dataset_seq(ds), K = ct_dataset_classes(ds);
            FUZZ_CHECK(n > 0 && T == seqs[(mode >> 4) & 3] && K >= 1, "bad dataset shape");
            for (int k = 0; k < K; k++)
                FUZZ_CHECK(ct_dataset_class_name(ds, k), "class %d has no name", k);
            int32_t ids[40], label;
            for (size_t i = 0; i < n; i++) {
                FUZZ_CHECK(ct_dataset_sample_tokens(ds, i, ids, &label) == CT_OK, "sample %zu", i);
                FUZZ_CHECK(label >= 0 && label < K, "label %d of %d", label, K);
                FUZZ_CHECK(ids[0] != CT_TOKEN_PAD, "sample %zu starts with padding", i);
                for (int t = 0; t < T; t++)
                    FUZZ_CHECK(ids[t] >= 0 && (size_t)ids[t] < V, "id %d of %zu", ids[t], V);
            }
        }
        ct_dataset_free(&ds);
    }
    unlink(path);
    return 0;
}
