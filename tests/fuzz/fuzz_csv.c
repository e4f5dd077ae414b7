/*
 * fuzz_csv - CSV tables (src/data/csv.c). Input layout: byte 0 picks the
 * header mode (auto, none, present) and whether labels are bounded to 10
 * classes; a first line starting with "#label=" names the label column
 * (name or index), or one starting with "#target=" the regression target
 * columns (comma-separated names or indices), and is not part of the file;
 * the rest is the file. A first line starting with "#opts=" before those
 * gives spec options (shape=, normalize=, split=, seed=, target=, ...; not
 * test= nor text=) and opens both splits of "csv:FILE" + the options
 * through the spec parser.
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
    ct_csv_options opt = { .header = (int)(data[0] % 3) - 1, .classes = (data[0] & 4) ? 10 : 0 };
    data++;
    size--;
    char label[64], opts[256] = "";
    if (size >= 6 && !memcmp(data, "#opts=", 6)) {
        const uint8_t *nl = memchr(data, '\n', size);
        size_t len = (nl ? (size_t)(nl - data) : size) - 6;
        if (len >= sizeof opts)
            len = sizeof opts - 1;
        memcpy(opts, data + 6, len);
        opts[len] = '\0';
        if (strlen(opts) != len || strstr(opts, "test=") || strstr(opts, "text="))
            return 0;
        size_t skip = nl ? (size_t)(nl - data) + 1 : size;
        data += skip;
        size -= skip;
    }
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
    if (opts[0]) {
        char spec[4600];
        snprintf(spec, sizeof spec, "csv:%s:%s", path, opts);
        for (int split = 0; split < 2; split++) {
            if (ct_dataset_open(spec, split, &ds) == CT_OK) {
                FUZZ_CHECK(ds->n > 0 && ds->c * ds->h * ds->w > 0, "bad dataset shape");
                float *x = malloc(ct_dataset_sample_size(ds) * sizeof *x);
                for (size_t i = 0; x && i < ds->n; i++) {
                    FUZZ_CHECK(!ds->labels || (ds->labels[i] >= 0 && ds->labels[i] < ds->classes),
                               "label %d of %d", ds->labels[i], ds->classes);
                    FUZZ_CHECK(ct_dataset_decode(ds, i, 0, 0, 0, 0, x) == CT_OK, "decode");
                }
                free(x);
            }
            ct_dataset_free(&ds);
        }
        unlink(path);
        return 0;
    }
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
