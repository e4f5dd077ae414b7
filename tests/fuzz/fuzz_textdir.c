/*
 * fuzz_textdir - folders of class folders (textdir: in src/data/text.c),
 * built in a scratch folder from the input. Layout: byte 0 picks word
 * tokens (bit 0), one folder split by split=0.5 instead of train/ and
 * test/ (bit 1) and seq (bits 4-5: 1, 2, 5, 30); then records of
 * [h][len][len bytes], each a file of class c<h & 3> (under test/ when
 * h & 4) named by h >> 3 (name 31 is a hidden file, which is no sample),
 * holding the bytes. A dataset that opens must have named classes, labels
 * below their count and ids inside the vocabulary.
 */
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "data/dataset.h"
#include "fuzz.h"

static const char *const parts[3] = { "train", "test", NULL };

static void file_name(char *buf, size_t size, const char *root, int flat, int part, int cls, int name)
{
    char f[16];
    if (name == 31)
        snprintf(f, sizeof f, ".hidden");
    else
        snprintf(f, sizeof f, "f%02d.txt", name);
    if (flat)
        snprintf(buf, size, "%s/c%d/%s", root, cls, f);
    else
        snprintf(buf, size, "%s/%s/c%d/%s", root, parts[part], cls, f);
}

static void remove_tree(const char *root)
{
    char p[4400];
    for (int flat = 0; flat < 2; flat++)
        for (int part = 0; part < (flat ? 1 : 2); part++) {
            for (int c = 0; c < 4; c++) {
                for (int k = 0; k < 32; k++) {
                    file_name(p, sizeof p, root, flat, part, c, k);
                    unlink(p);
                }
                if (flat)
                    snprintf(p, sizeof p, "%s/c%d", root, c);
                else
                    snprintf(p, sizeof p, "%s/%s/c%d", root, parts[part], c);
                rmdir(p);
            }
            if (!flat) {
                snprintf(p, sizeof p, "%s/%s", root, parts[part]);
                rmdir(p);
            }
        }
    rmdir(root);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const int seqs[4] = { 1, 2, 5, 30 };
    if (size < 1 || size > 1 << 16)
        return 0;
    unsigned mode = data[0];
    int flat = (mode >> 1) & 1;
    char root[4200], p[4400], spec[4600];
    snprintf(root, sizeof root, "%s", fuzz_path("tree"));
    remove_tree(root);
    if (mkdir(root, 0700))
        abort();
    size_t at = 1;
    for (int files = 0; files < 32 && at + 2 <= size; files++) {
        unsigned h = data[at];
        size_t len = data[at + 1];
        at += 2;
        if (len > size - at)
            len = size - at;
        int cls = (int)(h & 3), part = flat ? 0 : (int)((h >> 2) & 1);
        if (!flat) {
            snprintf(p, sizeof p, "%s/%s", root, parts[part]);
            mkdir(p, 0700);
            snprintf(p, sizeof p, "%s/%s/c%d", root, parts[part], cls);
        } else {
            snprintf(p, sizeof p, "%s/c%d", root, cls);
        }
        mkdir(p, 0700);
        file_name(p, sizeof p, root, flat, part, cls, (int)(h >> 3));
        if (fuzz_write(p, data + at, len, 0))
            abort();
        at += len;
    }
    snprintf(spec, sizeof spec, "textdir:%s:seq=%d%s%s", root, seqs[(mode >> 4) & 3],
             mode & 1 ? ":tokens=word" : "", flat ? ":split=0.5" : "");
    for (int split = 0; split < 2; split++) {
        ct_dataset *ds = NULL;
        if (ct_dataset_open(spec, split, &ds) == CT_OK) {
            size_t n = ct_dataset_count(ds), V = ct_tokenizer_size(ct_dataset_tokenizer(ds));
            int T = ct_dataset_seq(ds), K = ct_dataset_classes(ds);
            FUZZ_CHECK(n > 0 && T == seqs[(mode >> 4) & 3] && K >= 2, "bad dataset shape");
            for (int k = 0; k < K; k++)
                FUZZ_CHECK(ct_dataset_class_name(ds, k), "class %d has no name", k);
            int32_t ids[30], label;
            for (size_t i = 0; i < n; i++) {
                FUZZ_CHECK(ct_dataset_sample_tokens(ds, i, ids, &label) == CT_OK, "sample %zu", i);
                FUZZ_CHECK(label >= 0 && label < K && ids[0] != CT_TOKEN_PAD, "label %d of %d", label, K);
                for (int t = 0; t < T; t++)
                    FUZZ_CHECK(ids[t] >= 0 && (size_t)ids[t] < V, "id %d of %zu", ids[t], V);
            }
        }
        ct_dataset_free(&ds);
    }
    remove_tree(root);
    return 0;
}
