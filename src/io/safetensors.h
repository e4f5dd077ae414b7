/*
 * safetensors.h - reading safetensors files: an 8-byte little-endian header
 * length, a JSON header {name: {dtype, shape, data_offsets}, "__metadata__":
 * {str: str}}, then the raw little-endian tensor bytes.
 *
 * Every malformed input (truncated file, bad JSON, offsets out of range or
 * overlapping, a shape that disagrees with the byte count, an unknown dtype)
 * is CT_ERR_CORRUPT with a message naming the file and what is wrong.
 */
#ifndef CT_IO_SAFETENSORS_H
#define CT_IO_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#define CT_ST_MAX_DIMS 8

typedef enum ct_st_dtype {
    CT_ST_F32 = 0,
    CT_ST_F64,
    CT_ST_I64,
    CT_ST_I32,
    CT_ST_U8,
    CT_ST_F16,
    CT_ST_BF16,
} ct_st_dtype;

typedef struct ct_st_tensor {
    char *name;
    ct_st_dtype dtype;
    int ndim;                       /* 0 for a scalar */
    int64_t shape[CT_ST_MAX_DIMS];
    size_t numel;
    size_t nbytes;
    const uint8_t *data;            /* into the file's bytes; not aligned */
} ct_st_tensor;

typedef struct ct_st_file {
    uint8_t *bytes;
    size_t size;
    ct_st_tensor *tensors;
    size_t count;
    char **meta_keys;
    char **meta_values;
    size_t meta_count;
} ct_st_file;

/* Reads and validates a whole file. */
int ct_st_read(const char *path, ct_st_file **out);
/* Parses bytes already in memory (takes ownership of `bytes` on success
 * and failure alike); `name` appears in error messages. */
int ct_st_parse(uint8_t *bytes, size_t size, const char *name, ct_st_file **out);
void ct_st_free(ct_st_file **file);

const ct_st_tensor *ct_st_find(const ct_st_file *file, const char *name);
const char *ct_st_meta(const ct_st_file *file, const char *key);
const char *ct_st_dtype_name(ct_st_dtype dtype);
/* Converts F32/F64/I64/I32/U8 elements to double (out has numel entries). */
int ct_st_to_double(const ct_st_tensor *t, double *out);

/* ---- writing ---- */

typedef struct ct_st_out {
    const char *name;
    int ndim;
    int64_t shape[CT_ST_MAX_DIMS];
    const float *data;  /* F32, numel elements, host memory */
    const int64_t *i64; /* instead of data: I64 elements (PyTorch's step counts) */
} ct_st_out;

/* Writes an F32 (and I64) safetensors file atomically: to `path`.tmp.<pid>, fsync,
 * rename over `path`, fsync of the directory. On any failure (a full disk,
 * a write error) the temporary file is removed and `path` is untouched.
 * meta_keys/meta_values: `nmeta` strings for __metadata__. */
int ct_st_write(const char *path, const ct_st_out *tensors, size_t count, const char *const *meta_keys,
                const char *const *meta_values, size_t nmeta);

#endif /* CT_IO_SAFETENSORS_H */
