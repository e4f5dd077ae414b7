/*
 * fuzz_imagefolder - image folders (src/data/imagefolder.c), built in a
 * scratch folder from the input as fuzz_textdir builds its trees. Layout:
 * byte 0 picks bad=skip (bit 0), one folder split by split=0.5 instead of
 * train/ and test/ (bit 1), grey or RGB samples (bit 2) and the size
 * (bits 4-5: the first image's, 4x4, 1x9, 17x3); then records of
 * [h][len hi][len lo][len bytes], each a file of class c<h & 3> (under
 * test/ when h & 4) named by h >> 3 (.png for even names, .jpg for odd,
 * name 31 a hidden file, which is no sample), holding the bytes; bit 3
 * opens the training split without its normalization statistics. A
 * dataset that opens must have named classes and labels below their
 * count; its samples decode or fail as damaged, and every one decodes in a
 * training split that opened with its statistics under bad=error (they
 * decode every file of so small a folder).
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
        snprintf(f, sizeof f, ".hidden.png");
    else
        snprintf(f, sizeof f, "f%02d.%s", name, name & 1 ? "jpg" : "png");
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
    static const char *const sizes[4] = { "", ":size=4x4", ":size=1x9", ":size=17x3" };
    if (size < 1 || size > 1 << 18)
        return 0;
    unsigned mode = data[0];
    int flat = (mode >> 1) & 1;
    char root[4200], p[4400], spec[4600];
    snprintf(root, sizeof root, "%s", fuzz_path("images"));
    remove_tree(root);
    if (mkdir(root, 0700))
        abort();
    size_t at = 1;
    for (int files = 0; files < 32 && at + 3 <= size; files++) {
        unsigned h = data[at];
        size_t len = (size_t)data[at + 1] << 8 | data[at + 2];
        at += 3;
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
    snprintf(spec, sizeof spec, "imagefolder:%s%s%s%s", root, sizes[(mode >> 4) & 3],
             mode & 1 ? ":bad=skip" : "", flat ? ":split=0.5" : "");
    /* bit 3: the training split opens without its statistics (as cltrain opens it) */
    ct_data_hints hints = { mode & 4 ? 3 : 1, 0, 0, (mode >> 3) & 1 };
    if ((mode >> 4) & 3)
        hints.h = hints.w = 1; /* size= wins over the model's size */
    for (int split = 0; split < 2; split++) {
        ct_dataset *ds = NULL;
        if (ct_dataset_open_hinted(spec, split, NULL, &hints, &ds) == CT_OK) {
            size_t n = ct_dataset_count(ds);
            int K = ct_dataset_classes(ds), c, h, w;
            ct_dataset_shape(ds, &c, &h, &w);
            FUZZ_CHECK(n > 0 && K >= 1 && c == hints.c && h > 0 && w > 0, "bad dataset shape");
            for (int k = 0; k < K; k++)
                FUZZ_CHECK(ct_dataset_class_name(ds, k), "class %d has no name", k);
            float *x = malloc((size_t)c * (size_t)h * (size_t)w * sizeof *x);
            int32_t label;
            /* a training split opened with its statistics under bad=error
             * decoded every file (they sample all of so few) */
            int all_good = split == 0 && !(mode & 1) && !hints.defer_norm;
            for (size_t i = 0; x && i < n; i++) {
                int st = ct_dataset_sample(ds, i, x, &label);
                FUZZ_CHECK(st == CT_OK || (!all_good && (st == CT_ERR_CORRUPT || st == CT_ERR_UNSUPPORTED)),
                           "sample %zu: %s", i, ct_last_error());
                FUZZ_CHECK(st || (label >= 0 && label < K), "label %d of %d", label, K);
            }
            free(x);
        }
        ct_dataset_free(&ds);
    }
    remove_tree(root);
    return 0;
}
