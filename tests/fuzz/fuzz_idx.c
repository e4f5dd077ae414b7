/*
 * fuzz_idx - IDX image and label files (src/data/idx.c), plain and gzipped
 * (the reader tells them apart by content). Input layout: byte 0 picks
 * gzip compression of the images (bit 0) and labels (bit 1) part, bytes
 * 1-2 (little-endian) the length of the images part, then the images file,
 * then the labels file. Files that are already gzip streams stay as they
 * are, so corrupt compressed data is fuzzed too.
 */
#include <unistd.h>

#include "data/dataset.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3 || size > 1 << 20)
        return 0;
    unsigned mode = data[0];
    size_t split = (size_t)data[1] | (size_t)data[2] << 8;
    data += 3;
    size -= 3;
    if (split > size)
        split = size;
    char images[4200], labels[4200];
    snprintf(images, sizeof images, "%s", fuzz_path("images-idx3-ubyte"));
    snprintf(labels, sizeof labels, "%s", fuzz_path("labels-idx1-ubyte"));
    ct_dataset *ds = NULL;
    if (fuzz_write(images, data, split, mode & 1) ||
        fuzz_write(labels, data + split, size - split, mode & 2))
        abort();
    if (ct_idx_load(images, labels, (mode & 4) ? 10 : 0, "fuzz", &ds) == CT_OK) {
        FUZZ_CHECK(ds->n > 0 && ds->c == 1 && ds->h > 0 && ds->w > 0, "bad dataset shape");
        FUZZ_CHECK(ds->classes > 0, "no classes");
        for (size_t i = 0; i < ds->n; i++)
            FUZZ_CHECK(ds->labels[i] >= 0 && ds->labels[i] < ds->classes, "label %d out of [0, %d)",
                       ds->labels[i], ds->classes);
        size_t elems = ct_dataset_sample_size(ds);
        float *x = malloc(elems * sizeof *x);
        if (x)
            ct_dataset_decode(ds, ds->n - 1, 0, 0, 0, 1, x);
        free(x);
    }
    ct_dataset_free(&ds);
    unlink(images);
    unlink(labels);
    return 0;
}
