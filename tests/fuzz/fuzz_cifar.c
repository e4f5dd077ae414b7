/*
 * fuzz_cifar - CIFAR-10 binary batches (src/data/cifar.c): the input is
 * test_batch.bin (plain or, as the reader accepts, gzipped).
 */
#include <unistd.h>

#include "data/dataset.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 20)
        return 0;
    char path[4200], dir[4200];
    snprintf(path, sizeof path, "%s", fuzz_path("test_batch.bin"));
    snprintf(dir, sizeof dir, "%s", fuzz_path(""));
    if (fuzz_write(path, data, size, 0))
        abort();
    ct_dataset *ds = NULL;
    if (ct_cifar10_load(dir, CT_SPLIT_TEST, &ds) == CT_OK) {
        FUZZ_CHECK(ds->n > 0 && ds->c == 3 && ds->h == 32 && ds->w == 32, "bad dataset shape");
        for (size_t i = 0; i < ds->n; i++)
            FUZZ_CHECK(ds->labels[i] >= 0 && ds->labels[i] < 10, "label %d", ds->labels[i]);
        float *x = malloc(ct_dataset_sample_size(ds) * sizeof *x);
        if (x)
            ct_dataset_decode(ds, ds->n - 1, 4, 8, 0, 1, x);
        free(x);
    }
    ct_dataset_free(&ds);
    unlink(path);
    return 0;
}
