/*
 * fuzz_safetensors - the strict safetensors reader (src/io/safetensors.c):
 * header length, JSON header, offsets, shapes and dtypes. Whatever parses
 * must describe tensors that lie inside the file and convert cleanly.
 */
#include <string.h>

#include "fuzz.h"
#include "io/safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 20)
        return 0;
    uint8_t *bytes = malloc(size ? size : 1);
    if (!bytes)
        return 0;
    if (size)
        memcpy(bytes, data, size);
    ct_st_file *f = NULL;
    if (ct_st_parse(bytes, size, "fuzz.safetensors", &f) == 0) {
        for (size_t i = 0; i < f->count; i++) {
            const ct_st_tensor *t = &f->tensors[i];
            FUZZ_CHECK(t->data >= f->bytes && t->nbytes <= f->size &&
                       (size_t)(t->data - f->bytes) <= f->size - t->nbytes,
                       "tensor '%s' lies outside the file", t->name);
            FUZZ_CHECK(ct_st_find(f, t->name) != NULL, "tensor '%s' cannot be found", t->name);
            double *v = malloc((t->numel ? t->numel : 1) * sizeof *v);
            if (v)
                ct_st_to_double(t, v);
            free(v);
        }
        for (size_t i = 0; i < f->meta_count; i++)
            FUZZ_CHECK(ct_st_meta(f, f->meta_keys[i]) != NULL, "metadata '%s' cannot be found",
                       f->meta_keys[i]);
    }
    ct_st_free(&f);
    return 0;
}
