/*
 * fuzz_imgindex - image folder index files (ct_imgindex_parse in
 * src/data/imgindex.c). The input is the file. An index that parses holds
 * one or two splits, each with at least one class, labels below the class
 * count in class order, and formats back to exactly the input (one
 * spelling per index: no leading zeros, no "-0", the digest over the rest).
 */
#include <string.h>

#include "core/error.h"
#include "data/imgindex.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 20)
        return 0;
    ct_imgindex ix;
    if (ct_imgindex_parse((const char *)data, size, "fuzz.index", &ix) != CT_OK)
        return 0;
    FUZZ_CHECK(ix.nsplits >= 1 && ix.nsplits <= CT_IMGINDEX_MAX_SPLITS, "%d splits", ix.nsplits);
    for (int i = 0; i < ix.nsplits; i++) {
        const ct_imgsplit *s = &ix.split[i];
        FUZZ_CHECK(s->dir && s->nclasses >= 1, "split %d: no name or classes", i);
        FUZZ_CHECK(ct_imgindex_find(&ix, s->dir) == s, "split %s twice", s->dir);
        for (size_t k = 0; k < s->nfiles; k++) {
            FUZZ_CHECK(s->files[k].label >= 0 && (size_t)s->files[k].label < s->nclasses, "label %d of %zu",
                       s->files[k].label, s->nclasses);
            FUZZ_CHECK(!k || s->files[k].label >= s->files[k - 1].label, "file %zu out of class order", k);
        }
    }
    char *text = NULL;
    size_t len = 0;
    FUZZ_CHECK(ct_imgindex_format(&ix, &text, &len) == CT_OK, "format: %s", ct_last_error());
    FUZZ_CHECK(len == size && !memcmp(text, data, size), "formats to other bytes (%zu, not %zu)", len, size);
    free(text);
    ct_imgindex_free(&ix);
    return 0;
}
