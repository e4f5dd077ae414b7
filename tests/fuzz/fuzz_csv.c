/*
 * fuzz_csv - CSV tables (src/data/csv.c). Input layout: byte 0 picks the
 * header mode (auto, none, present) and whether labels are bounded to 10
 * classes; a first line starting with "#label=" names the label column
 * (name or index), or one starting with "#target=" the regression target
 * columns (comma-separated names or indices), and is not part of the file;
 * the rest is the file.
 */
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "data/dataset.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 1 << 20)
        return 0;
    ct_csv_options opt = { NULL, (int)(data[0] % 3) - 1, (data[0] & 4) ? 10 : 0, NULL };
    data++;
    size--;
    char label[64];
    size_t key = size >= 7 && !memcmp(data, "#label=", 7) ? 7
                 : size >= 8 && !memcmp(data, "#target=", 8) ? 8 : 0;
    if (key) {
        const uint8_t *nl = memchr(data, '\n', size);
        size_t len = (nl ? (size_t)(nl - data) : size) - key;
        if (len >= sizeof label)
            len = sizeof label - 1;
        memcpy(label, data + key, len);
        label[len] = '\0';
        if (key == 7)
            opt.label = label;
        else if (label[0]) /* as spec.c passes it: never empty */
            opt.target = label;
        size_t skip = nl ? (size_t)(nl - data) + 1 : size;
        data += skip;
        size -= skip;
    }
    char path[4200];
    snprintf(path, sizeof path, "%s", fuzz_path("table.csv"));
    if (fuzz_write(path, data, size, 0))
        abort();
    ct_dataset *ds = NULL;
    if (ct_csv_load(path, &opt, &ds) == CT_OK) {
        FUZZ_CHECK(ds->n > 0 && ds->c * ds->h * ds->w > 0, "bad dataset shape");
        for (size_t i = 0; !ds->ntargets && i < ds->n; i++)
            FUZZ_CHECK(ds->labels[i] >= 0 && ds->labels[i] < ds->classes, "label %d of %d classes",
                       ds->labels[i], ds->classes);
        FUZZ_CHECK(!ds->ntargets || (!ds->labels && !ds->classes && ds->targets &&
                                     ds->target_names && ds->target_names[ds->ntargets - 1]),
                   "regression data of %d targets", ds->ntargets);
        for (size_t i = 0; i < ds->n * (size_t)ds->ntargets; i++)
            FUZZ_CHECK(isfinite(ds->targets[i]), "target %zu not finite", i);
        float *x = malloc(ct_dataset_sample_size(ds) * sizeof *x);
        if (x)
            ct_dataset_decode(ds, ds->n - 1, 0, 0, 0, 0, x);
        free(x);
    }
    ct_dataset_free(&ds);
    unlink(path);
    return 0;
}
