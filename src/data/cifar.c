/*
 * cifar.c - the CIFAR-10 binary release: files of 3073-byte records, one
 * label byte (0..9) then 32x32 pixels as three planes (R, G, B), which is
 * already the (C, H, W) layout the loader wants. The training split is
 * data_batch_1..5.bin concatenated, the test split test_batch.bin.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/error.h"
#include "data/dataset.h"

#define PIXELS 3072u
#define RECORD (PIXELS + 1u)
/* The whole release is 50000 + 10000 records; a file this large is not it. */
#define MAX_FILE_BYTES ((size_t)1 << 34)

static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Appends the records of one batch file to ds. */
static int append_file(ct_dataset *ds, const char *path)
{
    ct_gzin in;
    uint8_t *buf = NULL;
    size_t size = 0;
    uint64_t extra = 0;
    int st = ct_gzin_open(&in, path);
    if (st)
        return st;
    if ((st = ct_gzin_read_alloc(&in, MAX_FILE_BYTES, &buf, &size)) ||
        (st = ct_gzin_count_rest(&in, &extra)))
        goto done;
    if (extra) {
        st = ct_fail(NULL, CT_ERR_CORRUPT, "%s: larger than %zu bytes: not a CIFAR-10 batch", path,
                     MAX_FILE_BYTES);
        goto done;
    }
    if (size == 0) {
        st = ct_fail(NULL, CT_ERR_CORRUPT, "%s: empty file, want records of %u bytes", path, RECORD);
        goto done;
    }
    if (size % RECORD) {
        size_t whole = size / RECORD;
        st = ct_fail(NULL, CT_ERR_CORRUPT,
                     "%s: %zu bytes is not a multiple of the %u-byte record: record %zu (from byte "
                     "offset %zu) has only %zu bytes%s",
                     path, size, RECORD, whole, whole * RECORD, size - whole * RECORD,
                     size % (RECORD + 1) == 0 ? "; HINT: 3074-byte records are CIFAR-100, which "
                                                "cifar10: does not read"
                                              : "; HINT: the file is truncated: download it again");
        goto done;
    }
    size_t n = size / RECORD;
    for (size_t i = 0; i < n; i++)
        if (buf[i * RECORD] > 9) {
            st = ct_fail(NULL, CT_ERR_CORRUPT,
                         "%s: record %zu (byte offset %zu): label %u > 9", path, i, i * RECORD,
                         (unsigned)buf[i * RECORD]);
            goto done;
        }
    if (n > SIZE_MAX / PIXELS - ds->n) {
        st = ct_fail(NULL, CT_ERR_NO_MEMORY, "%s: too many records", path);
        goto done;
    }
    uint8_t *pix = realloc(ds->u8, (ds->n + n) * PIXELS);
    if (!pix) {
        st = ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory reading %s", path);
        goto done;
    }
    ds->u8 = pix;
    int32_t *lab = realloc(ds->labels, (ds->n + n) * sizeof *lab);
    if (!lab) {
        st = ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory reading %s", path);
        goto done;
    }
    ds->labels = lab;
    for (size_t i = 0; i < n; i++) {
        lab[ds->n + i] = buf[i * RECORD];
        memcpy(pix + (ds->n + i) * PIXELS, buf + i * RECORD + 1, PIXELS);
    }
    ds->n += n;
done:
    ct_gzin_close(&in);
    free(buf);
    return st;
}

int ct_cifar10_load(const char *dir, int split, ct_dataset **out)
{
    char base[4096], path[4200], name[4300];
    ct_dataset *ds = NULL;
    *out = NULL;
    /* the release unpacks to cifar-10-batches-bin/: accept its parent too */
    snprintf(base, sizeof base, "%s", dir);
    snprintf(path, sizeof path, "%s/%s", dir,
             split == CT_SPLIT_TEST ? "test_batch.bin" : "data_batch_1.bin");
    if (!is_file(path)) {
        snprintf(path, sizeof path, "%s/cifar-10-batches-bin/%s", dir,
                 split == CT_SPLIT_TEST ? "test_batch.bin" : "data_batch_1.bin");
        if (is_file(path))
            snprintf(base, sizeof base, "%s/cifar-10-batches-bin", dir);
    }
    snprintf(name, sizeof name, "cifar10 %s (%s)", split == CT_SPLIT_TEST ? "test" : "train", base);
    int st = ct_dataset_new(name, 3, 32, 32, CT_STORE_U8, &ds);
    if (st)
        return st;
    ds->classes = 10;
    int files = split == CT_SPLIT_TEST ? 1 : 5;
    for (int f = 1; f <= files && !st; f++) {
        if (split == CT_SPLIT_TEST)
            snprintf(path, sizeof path, "%s/test_batch.bin", base);
        else
            snprintf(path, sizeof path, "%s/data_batch_%d.bin", base, f);
        if (!is_file(path))
            st = ct_fail(NULL, CT_ERR_IO,
                         "%s: no such file; HINT: cifar10:DIR wants the CIFAR-10 binary version "
                         "(data_batch_1..5.bin, test_batch.bin) in DIR or DIR/cifar-10-batches-bin",
                         path);
        else
            st = append_file(ds, path);
    }
    if (st) {
        ct_dataset_free(&ds);
        return st;
    }
    *out = ds;
    return CT_OK;
}
