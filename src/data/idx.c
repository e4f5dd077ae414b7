/*
 * idx.c - the IDX format of the MNIST release (and Fashion-MNIST's): a
 * big-endian header (magic 0x00000803 + N, H, W for u8 images, 0x00000801
 * + N for u8 labels) and the raw bytes, read through zlib so .gz and plain
 * files both work. The header is only a claim: the data must hold exactly
 * the bytes it promises, no fewer and no more.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "core/util.h"
#include "data/dataset.h"

#define IDX_IMAGES 0x00000803u
#define IDX_LABELS 0x00000801u
/* Larger single images than this are a damaged header, not a dataset. */
#define MAX_IMAGE_BYTES (1u << 26)

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static const char *magic_hint(uint32_t magic)
{
    if (magic == IDX_IMAGES)
        return " (it is an IDX image file: are the image and label files swapped?)";
    if (magic == IDX_LABELS)
        return " (it is an IDX label file: are the image and label files swapped?)";
    if ((magic & 0xffff0000u) == 0 && (magic >> 8 & 0xff) != 0x08)
        return " (an IDX file of another element type; only unsigned bytes (0x08) are read)";
    if ((magic & 0xffff0000u) != 0)
        return " (not an IDX file)";
    return "";
}

/* Reads the header and the records it declares; fails on any mismatch.
 * dims gets the ndim big-endian sizes, *data (malloc'd) the payload. */
static int read_idx(const char *path, uint32_t want_magic, int ndim, uint32_t *dims, uint8_t **data,
                    size_t *record)
{
    ct_gzin in;
    uint8_t head[16];
    size_t hlen = 4 + 4 * (size_t)ndim, got = 0;
    const char *what = want_magic == IDX_IMAGES ? "image" : "label";
    int st = ct_gzin_open(&in, path);
    *data = NULL;
    if (st)
        return st;
    if ((st = ct_gzin_read(&in, head, hlen, &got)))
        goto done;
    if (got < 4) {
        st = ct_fail(NULL, CT_ERR_CORRUPT,
                     "%s: truncated: %zu bytes, too short for an IDX header (%zu bytes)", path, got,
                     hlen);
        goto done;
    }
    uint32_t magic = be32(head);
    if (magic != want_magic) {
        st = ct_fail(NULL, CT_ERR_CORRUPT,
                     "%s: byte offset 0: magic 0x%08x, want 0x%08x for an IDX %s file%s", path,
                     (unsigned)magic, (unsigned)want_magic, what, magic_hint(magic));
        goto done;
    }
    if (got < hlen) {
        st = ct_fail(NULL, CT_ERR_CORRUPT,
                     "%s: truncated header: %zu bytes, want %zu (magic + %d sizes)", path, got, hlen,
                     ndim);
        goto done;
    }
    uint64_t rec = 1;
    for (int d = 0; d < ndim; d++) {
        dims[d] = be32(head + 4 + 4 * d);
        if (dims[d] == 0) {
            st = ct_fail(NULL, CT_ERR_CORRUPT, "%s: byte offset %d: size %d of the header is 0", path,
                         4 + 4 * d, d);
            goto done;
        }
        if (d > 0)
            rec *= dims[d];
    }
    if (rec > MAX_IMAGE_BYTES) {
        st = ct_fail(NULL, CT_ERR_CORRUPT,
                     "%s: the header declares %s records of %llu bytes, too large to be real", path,
                     what, (unsigned long long)rec);
        goto done;
    }
    uint64_t want = (uint64_t)dims[0] * rec;
    if (want > SIZE_MAX - 1) {
        st = ct_fail(NULL, CT_ERR_CORRUPT, "%s: the header declares %llu bytes of data", path,
                     (unsigned long long)want);
        goto done;
    }
    if ((st = ct_gzin_read_alloc(&in, (size_t)want, data, &got)))
        goto done;
    if (got < want) {
        size_t k = got / rec;
        st = ct_fail(NULL, CT_ERR_CORRUPT,
                     "%s: truncated: the header declares %u %ss of %llu bytes but the data ends "
                     "after %zu bytes (byte offset %zu), in %s record %zu (%zu of its %llu bytes "
                     "present)",
                     path, (unsigned)dims[0], what, (unsigned long long)rec, got, got + hlen, what, k,
                     got - k * (size_t)rec, (unsigned long long)rec);
        goto done;
    }
    uint64_t extra = 0;
    if ((st = ct_gzin_count_rest(&in, &extra)))
        goto done;
    if (extra) {
        st = ct_fail(NULL, CT_ERR_CORRUPT,
                     "%s: trailing garbage: %llu bytes after the %u %s records the header declares "
                     "(from byte offset %llu, where record %u would start)",
                     path, (unsigned long long)extra, (unsigned)dims[0], what,
                     (unsigned long long)(want + hlen), (unsigned)dims[0]);
        goto done;
    }
    *record = (size_t)rec;
done:
    ct_gzin_close(&in);
    if (st) {
        free(*data);
        *data = NULL;
    }
    return st;
}

int ct_idx_load(const char *images_path, const char *labels_path, int classes, const char *name,
                ct_dataset **out)
{
    uint32_t idims[3] = { 0 }, ldims[1] = { 0 };
    uint8_t *pix = NULL, *lab = NULL;
    size_t irec = 0, lrec = 0;
    ct_dataset *ds = NULL;
    *out = NULL;
    int st = read_idx(images_path, IDX_IMAGES, 3, idims, &pix, &irec);
    if (st)
        return st;
    if ((st = read_idx(labels_path, IDX_LABELS, 1, ldims, &lab, &lrec)))
        goto done;
    if (idims[0] != ldims[0]) {
        st = ct_fail(NULL, CT_ERR_CORRUPT,
                     "%s holds %u images but %s holds %u labels; HINT: the two files must come "
                     "from the same split of the same dataset",
                     images_path, (unsigned)idims[0], labels_path, (unsigned)ldims[0]);
        goto done;
    }
    int top = 0;
    for (size_t i = 0; i < ldims[0]; i++) {
        if (classes > 0 && lab[i] >= classes) {
            st = ct_fail(NULL, CT_ERR_CORRUPT,
                         "%s: label record %zu (byte offset %zu): label %u out of range for %d "
                         "classes",
                         labels_path, i, i + 8, (unsigned)lab[i], classes);
            goto done;
        }
        if (lab[i] > top)
            top = lab[i];
    }
    if ((st = ct_dataset_new(name, 1, (int)idims[1], (int)idims[2], CT_STORE_U8, &ds)))
        goto done;
    ds->labels = malloc((size_t)ldims[0] * sizeof *ds->labels);
    if (!ds->labels) {
        st = ct_fail(NULL, CT_ERR_NO_MEMORY, "out of memory for %u labels", (unsigned)ldims[0]);
        goto done;
    }
    for (size_t i = 0; i < ldims[0]; i++)
        ds->labels[i] = lab[i];
    ds->n = idims[0];
    ds->classes = classes > 0 ? classes : top + 1;
    ds->u8 = pix;
    pix = NULL;
    *out = ds;
    ds = NULL;
done:
    free(pix);
    free(lab);
    ct_dataset_free(&ds);
    return st;
}

/* The first of the usual names of one IDX file that exists in dir. */
static char *find_one(const char *dir, const char *prefix, const char *kind)
{
    static const char *const suffixes[] = { "", ".gz" };
    for (size_t i = 0; i < CT_ARRAY_LEN(suffixes); i++) {
        size_t len = strlen(dir) + strlen(prefix) + strlen(kind) + 16;
        char *p = malloc(len);
        if (!p)
            return NULL;
        snprintf(p, len, "%s/%s-%s-ubyte%s", dir, prefix, kind, suffixes[i]);
        if (access(p, F_OK) == 0)
            return p;
        free(p);
    }
    return NULL;
}

int ct_idx_find(const char *dir, int split, char **images_path, char **labels_path)
{
    const char *prefix = split == CT_SPLIT_TEST ? "t10k" : "train";
    *images_path = find_one(dir, prefix, "images-idx3");
    *labels_path = find_one(dir, prefix, "labels-idx1");
    if (*images_path && *labels_path)
        return CT_OK;
    int st = ct_fail(NULL, CT_ERR_IO,
                     "no %s-%s-ubyte(.gz) in %s; HINT: the directory must hold the IDX files of "
                     "the MNIST release (train-images-idx3-ubyte, train-labels-idx1-ubyte, "
                     "t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte, each optionally .gz)",
                     prefix, *images_path ? "labels-idx1" : "images-idx3", dir);
    free(*images_path);
    free(*labels_path);
    *images_path = *labels_path = NULL;
    return st;
}
