/*
 * safetensors.c - a strict reader of safetensors files (cJSON parses the
 * header). Nothing in a file is trusted: every length, offset and shape is
 * checked against the others before a tensor is handed out.
 */
#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "core/util.h"
#include "io/safetensors.h"

#define MAX_HEADER (100u << 20)

static const struct {
    const char *name;
    size_t size;
} dtypes[] = {
    [CT_ST_F32] = { "F32", 4 }, [CT_ST_F64] = { "F64", 8 }, [CT_ST_I64] = { "I64", 8 },
    [CT_ST_I32] = { "I32", 4 }, [CT_ST_U8] = { "U8", 1 },   [CT_ST_F16] = { "F16", 2 },
    [CT_ST_BF16] = { "BF16", 2 },
};

const char *ct_st_dtype_name(ct_st_dtype dtype)
{
    return (unsigned)dtype < CT_ARRAY_LEN(dtypes) ? dtypes[dtype].name : "?";
}

void ct_st_free(ct_st_file **pf)
{
    if (!pf || !*pf)
        return;
    ct_st_file *f = *pf;
    for (size_t i = 0; i < f->count; i++)
        free(f->tensors[i].name);
    for (size_t i = 0; i < f->meta_count; i++) {
        free(f->meta_keys[i]);
        free(f->meta_values[i]);
    }
    free(f->tensors);
    free(f->meta_keys);
    free(f->meta_values);
    free(f->bytes);
    free(f);
    *pf = NULL;
}

static int as_u64(const cJSON *n, uint64_t *out)
{
    if (!cJSON_IsNumber(n))
        return 0;
    double v = n->valuedouble;
    if (!(v >= 0) || v > 9007199254740992.0 || floor(v) != v)
        return 0;
    *out = (uint64_t)v;
    return 1;
}

static int cmp_begin(const void *a, const void *b)
{
    const ct_st_tensor *x = a, *y = b;
    return (x->data > y->data) - (x->data < y->data);
}

int ct_st_parse(uint8_t *bytes, size_t size, const char *name, ct_st_file **out)
{
    *out = NULL;
    ct_st_file *f = calloc(1, sizeof *f);
    if (!f) {
        free(bytes);
        return ct_fail(NULL, CT_ERR_NO_MEMORY, "%s: out of host memory", name);
    }
    f->bytes = bytes;
    f->size = size;
    int st = CT_OK;
    cJSON *root = NULL;
    ct_st_tensor *sorted = NULL;

    if (size < 8) {
        st = ct_fail(NULL, CT_ERR_CORRUPT, "%s: %zu bytes is too short for a safetensors file "
                     "(it starts with an 8-byte header length)", name, size);
        goto fail;
    }
    uint64_t hlen = 0;
    for (int i = 0; i < 8; i++)
        hlen |= (uint64_t)bytes[i] << (8 * i);
    if (hlen > MAX_HEADER || hlen > size - 8) {
        st = ct_fail(NULL, CT_ERR_CORRUPT, "%s: header length %llu does not fit in the file "
                     "(%zu bytes): truncated or not a safetensors file", name,
                     (unsigned long long)hlen, size);
        goto fail;
    }
    const uint8_t *data = bytes + 8 + hlen;
    size_t data_size = size - 8 - (size_t)hlen;
    root = cJSON_ParseWithLength((const char *)bytes + 8, (size_t)hlen);
    if (!root || !cJSON_IsObject(root)) {
        const char *at = cJSON_GetErrorPtr();
        long col = at ? (long)(at - (const char *)bytes - 8) : -1;
        st = ct_fail(NULL, CT_ERR_CORRUPT, "%s: the JSON header is malformed%s%ld", name,
                     col >= 0 ? " near byte " : "", col >= 0 ? col + 8 : 0L);
        goto fail;
    }
    size_t n = 0;
    int seen_meta = 0;
    for (cJSON *it = root->child; it; it = it->next)
        n++;
    f->tensors = calloc(n ? n : 1, sizeof *f->tensors);
    f->meta_keys = calloc(n ? n : 1, sizeof(char *));
    f->meta_values = calloc(n ? n : 1, sizeof(char *));
    if (!f->tensors || !f->meta_keys || !f->meta_values) {
        st = ct_fail(NULL, CT_ERR_NO_MEMORY, "%s: out of host memory", name);
        goto fail;
    }
    for (cJSON *it = root->child; it; it = it->next) {
        if (!strcmp(it->string, "__metadata__")) {
            if (!cJSON_IsObject(it)) {
                st = ct_fail(NULL, CT_ERR_CORRUPT, "%s: __metadata__ is not an object", name);
                goto fail;
            }
            /* JSON allows repeated keys; a second block would be read over the first */
            if (f->meta_count || seen_meta) {
                st = ct_fail(NULL, CT_ERR_CORRUPT, "%s: the header has __metadata__ twice", name);
                goto fail;
            }
            seen_meta = 1;
            size_t nm = 0;
            for (cJSON *m = it->child; m; m = m->next)
                nm++;
            free(f->meta_keys);
            free(f->meta_values);
            f->meta_keys = calloc(nm ? nm : 1, sizeof(char *));
            f->meta_values = calloc(nm ? nm : 1, sizeof(char *));
            if (!f->meta_keys || !f->meta_values) {
                st = ct_fail(NULL, CT_ERR_NO_MEMORY, "%s: out of host memory", name);
                goto fail;
            }
            for (cJSON *m = it->child; m; m = m->next) {
                if (!cJSON_IsString(m)) {
                    st = ct_fail(NULL, CT_ERR_CORRUPT, "%s: metadata '%s' is not a string", name,
                                 m->string);
                    goto fail;
                }
                for (size_t j = 0; j < f->meta_count; j++)
                    if (!strcmp(f->meta_keys[j], m->string)) {
                        st = ct_fail(NULL, CT_ERR_CORRUPT, "%s: metadata '%s' appears twice", name,
                                     m->string);
                        goto fail;
                    }
                f->meta_keys[f->meta_count] = ct_strdup(m->string);
                f->meta_values[f->meta_count] = ct_strdup(m->valuestring);
                f->meta_count++;
                if (!f->meta_keys[f->meta_count - 1] || !f->meta_values[f->meta_count - 1]) {
                    st = ct_fail(NULL, CT_ERR_NO_MEMORY, "%s: out of host memory", name);
                    goto fail;
                }
            }
            continue;
        }
        ct_st_tensor *t = &f->tensors[f->count];
        const char *tn = it->string;
        cJSON *dt = cJSON_GetObjectItemCaseSensitive(it, "dtype");
        cJSON *shape = cJSON_GetObjectItemCaseSensitive(it, "shape");
        cJSON *offs = cJSON_GetObjectItemCaseSensitive(it, "data_offsets");
        if (!cJSON_IsObject(it) || !cJSON_IsString(dt) || !cJSON_IsArray(shape) ||
            !cJSON_IsArray(offs) || cJSON_GetArraySize(offs) != 2) {
            st = ct_fail(NULL, CT_ERR_CORRUPT, "%s: tensor '%s' needs \"dtype\", \"shape\" and "
                         "a two-element \"data_offsets\"", name, tn);
            goto fail;
        }
        int dtype = -1;
        for (size_t d = 0; d < CT_ARRAY_LEN(dtypes); d++)
            if (!strcmp(dt->valuestring, dtypes[d].name))
                dtype = (int)d;
        if (dtype < 0) {
            st = ct_fail(NULL, CT_ERR_CORRUPT, "%s: tensor '%s' has dtype '%s', which cltrain "
                         "does not read (F32, F64, I64, I32, U8, F16, BF16)", name, tn,
                         dt->valuestring);
            goto fail;
        }
        int nd = cJSON_GetArraySize(shape);
        if (nd > CT_ST_MAX_DIMS) {
            st = ct_fail(NULL, CT_ERR_CORRUPT, "%s: tensor '%s' has %d dimensions (at most %d)",
                         name, tn, nd, CT_ST_MAX_DIMS);
            goto fail;
        }
        uint64_t numel = 1, b0 = 0, b1 = 0;
        for (int d = 0; d < nd; d++) {
            uint64_t v = 0;
            if (!as_u64(cJSON_GetArrayItem(shape, d), &v) || (v && numel > UINT64_MAX / 2 / v)) {
                st = ct_fail(NULL, CT_ERR_CORRUPT, "%s: tensor '%s': dimension %d of its shape is "
                             "not a valid size", name, tn, d);
                goto fail;
            }
            t->shape[d] = (int64_t)v;
            numel *= v;
        }
        if (!as_u64(cJSON_GetArrayItem(offs, 0), &b0) || !as_u64(cJSON_GetArrayItem(offs, 1), &b1) ||
            b0 > b1 || b1 > data_size) {
            st = ct_fail(NULL, CT_ERR_CORRUPT, "%s: tensor '%s' has data_offsets [%llu, %llu] "
                         "outside the %zu data bytes: truncated or corrupt file", name, tn,
                         (unsigned long long)b0, (unsigned long long)b1, data_size);
            goto fail;
        }
        if (numel > UINT64_MAX / 8 || b1 - b0 != numel * dtypes[dtype].size) {
            st = ct_fail(NULL, CT_ERR_CORRUPT, "%s: tensor '%s' has %llu bytes but its shape and "
                         "dtype %s need %llu", name, tn, (unsigned long long)(b1 - b0),
                         dt->valuestring, (unsigned long long)(numel * dtypes[dtype].size));
            goto fail;
        }
        for (size_t j = 0; j < f->count; j++)
            if (!strcmp(f->tensors[j].name, tn)) {
                st = ct_fail(NULL, CT_ERR_CORRUPT, "%s: tensor '%s' appears twice", name, tn);
                goto fail;
            }
        t->name = ct_strdup(tn);
        if (!t->name) {
            st = ct_fail(NULL, CT_ERR_NO_MEMORY, "%s: out of host memory", name);
            goto fail;
        }
        t->dtype = (ct_st_dtype)dtype;
        t->ndim = nd;
        t->numel = (size_t)numel;
        t->nbytes = (size_t)(b1 - b0);
        t->data = data + b0;
        f->count++;
    }
    /* tensors must not overlap */
    sorted = malloc((f->count ? f->count : 1) * sizeof *sorted);
    if (!sorted) {
        st = ct_fail(NULL, CT_ERR_NO_MEMORY, "%s: out of host memory", name);
        goto fail;
    }
    memcpy(sorted, f->tensors, f->count * sizeof *sorted);
    qsort(sorted, f->count, sizeof *sorted, cmp_begin);
    for (size_t i = 1; i < f->count; i++)
        if (sorted[i - 1].data + sorted[i - 1].nbytes > sorted[i].data) {
            st = ct_fail(NULL, CT_ERR_CORRUPT, "%s: the data of tensors '%s' and '%s' overlap",
                         name, sorted[i - 1].name, sorted[i].name);
            goto fail;
        }
    free(sorted);
    cJSON_Delete(root);
    *out = f;
    return CT_OK;

fail:
    free(sorted);
    cJSON_Delete(root);
    ct_st_free(&f);
    return st;
}

int ct_st_read(const char *path, ct_st_file **out)
{
    *out = NULL;
    size_t size = 0;
    char *bytes = ct_read_file(path, &size);
    if (!bytes)
        return ct_fail(NULL, CT_ERR_IO, "cannot read %s: %s", path, strerror(errno));
    return ct_st_parse((uint8_t *)bytes, size, path, out);
}

const ct_st_tensor *ct_st_find(const ct_st_file *f, const char *name)
{
    for (size_t i = 0; i < f->count; i++)
        if (!strcmp(f->tensors[i].name, name))
            return &f->tensors[i];
    return NULL;
}

const char *ct_st_meta(const ct_st_file *f, const char *key)
{
    for (size_t i = 0; i < f->meta_count; i++)
        if (!strcmp(f->meta_keys[i], key))
            return f->meta_values[i];
    return NULL;
}

static uint64_t le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

int ct_st_to_double(const ct_st_tensor *t, double *out)
{
    for (size_t i = 0; i < t->numel; i++) {
        switch (t->dtype) {
        case CT_ST_F32: {
            uint32_t u = (uint32_t)le(t->data + 4 * i, 4);
            float f;
            memcpy(&f, &u, 4);
            out[i] = f;
            break;
        }
        case CT_ST_F64: {
            uint64_t u = le(t->data + 8 * i, 8);
            double d;
            memcpy(&d, &u, 8);
            out[i] = d;
            break;
        }
        case CT_ST_I64: out[i] = (double)(int64_t)le(t->data + 8 * i, 8); break;
        case CT_ST_I32: out[i] = (double)(int32_t)(uint32_t)le(t->data + 4 * i, 4); break;
        case CT_ST_U8: out[i] = t->data[i]; break;
        default:
            return ct_fail(NULL, CT_ERR_UNSUPPORTED, "tensor '%s': converting %s is not supported",
                           t->name, ct_st_dtype_name(t->dtype));
        }
    }
    return CT_OK;
}

/* ---- writing ---- */

static int write_full(FILE *f, const void *p, size_t n)
{
    return fwrite(p, 1, n, f) == n ? 0 : -1;
}

int ct_st_write(const char *path, const ct_st_out *tensors, size_t count, const char *const *meta_keys,
                const char *const *meta_values, size_t nmeta)
{
    cJSON *root = cJSON_CreateObject();
    char *header = NULL;
    int st = CT_OK;
    if (!root)
        return ct_fail(NULL, CT_ERR_NO_MEMORY, "out of host memory writing %s", path);
    if (nmeta) {
        cJSON *meta = cJSON_AddObjectToObject(root, "__metadata__");
        for (size_t i = 0; meta && i < nmeta; i++)
            if (!cJSON_AddStringToObject(meta, meta_keys[i], meta_values[i]))
                meta = NULL;
        if (!meta) {
            st = ct_fail(NULL, CT_ERR_NO_MEMORY, "out of host memory writing %s", path);
            goto done;
        }
    }
    uint64_t off = 0;
    for (size_t i = 0; i < count; i++) {
        const ct_st_out *t = &tensors[i];
        uint64_t numel = 1;
        cJSON *o = cJSON_AddObjectToObject(root, t->name);
        cJSON *shape = o ? cJSON_AddArrayToObject(o, "shape") : NULL;
        cJSON *offs = o ? cJSON_AddArrayToObject(o, "data_offsets") : NULL;
        if (!o || !shape || !offs || !cJSON_AddStringToObject(o, "dtype", t->i64 ? "I64" : "F32")) {
            st = ct_fail(NULL, CT_ERR_NO_MEMORY, "out of host memory writing %s", path);
            goto done;
        }
        for (int d = 0; d < t->ndim; d++) {
            cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)t->shape[d]));
            numel *= (uint64_t)t->shape[d];
        }
        cJSON_AddItemToArray(offs, cJSON_CreateNumber((double)off));
        off += numel * (t->i64 ? 8 : 4);
        cJSON_AddItemToArray(offs, cJSON_CreateNumber((double)off));
    }
    header = cJSON_PrintUnformatted(root);
    if (!header) {
        st = ct_fail(NULL, CT_ERR_NO_MEMORY, "out of host memory writing %s", path);
        goto done;
    }
    size_t hlen = strlen(header), padded = (hlen + 7) & ~(size_t)7; /* 8-byte aligned data */
    ct_atomic_file af;
    if ((st = ct_atomic_open(&af, path)))
        goto done;
    FILE *f = af.f;
    uint8_t len8[8];
    for (int i = 0; i < 8; i++)
        len8[i] = (uint8_t)((uint64_t)padded >> (8 * i));
    int bad = write_full(f, len8, 8) || write_full(f, header, hlen) ||
              write_full(f, "        ", padded - hlen);
    for (size_t i = 0; !bad && i < count; i++) {
        uint64_t numel = 1;
        for (int d = 0; d < tensors[i].ndim; d++)
            numel *= (uint64_t)tensors[i].shape[d];
        /* little-endian float32 (or int64) on disk */
        uint8_t buf[8192];
        size_t size = tensors[i].i64 ? 8 : 4;
        for (uint64_t e = 0; !bad && e < numel;) {
            size_t chunk = numel - e > 1024 ? 1024 : (size_t)(numel - e);
            for (size_t j = 0; j < chunk; j++) {
                uint64_t u = 0;
                if (tensors[i].i64) {
                    memcpy(&u, &tensors[i].i64[e + j], 8);
                } else {
                    uint32_t u32;
                    memcpy(&u32, &tensors[i].data[e + j], 4);
                    u = u32;
                }
                for (size_t b = 0; b < size; b++)
                    buf[size * j + b] = (uint8_t)(u >> (8 * b));
            }
            bad = write_full(f, buf, size * chunk);
            e += chunk;
        }
    }
    /* on a failed write, commit removes the temporary: the previous file stays */
    st = ct_atomic_commit(&af, bad ? (errno ? errno : EIO) : 0);
done:
    cJSON_free(header);
    cJSON_Delete(root);
    return st;
}
