/*
 * npy.h - NumPy's .npy arrays and .npz archives (src/data/npy.c), parsed
 * from memory, and the dataset built from them (npy: and npz: specs).
 */
#ifndef CT_DATA_NPY_H
#define CT_DATA_NPY_H

#include <stddef.h>
#include <stdint.h>

#define CT_NPY_MAX_DIMS 8

/* An array as the file holds it: `count` elements of `itemsize` bytes of
 * kind 'f' (float), 'i' (signed), 'u' (unsigned) or 'b' (bool), little-
 * endian, C order; data points into the parsed buffer. */
typedef struct ct_npy {
    int ndim;
    uint64_t shape[CT_NPY_MAX_DIMS];
    char kind;
    int itemsize;
    size_t count;
    const uint8_t *data;
} ct_npy;

/* Parses a whole .npy file held in buf (n bytes); path names it in
 * messages. CT_ERR_CORRUPT with the byte offset for anything malformed,
 * unsupported dtypes and orders, or a size that is not the header's. */
int ct_npy_parse(const uint8_t *buf, size_t n, const char *path, ct_npy *a);
/* Element i as a double (halves, integers and bools converted exactly). */
double ct_npy_get(const ct_npy *a, size_t i);
/* The member `member`.npy of the ZIP archive zip (n bytes), decompressed
 * and CRC-checked into *out (malloc'd, *outn bytes). A damaged archive is
 * CT_ERR_CORRUPT; a missing member CT_ERR_INVALID_ARG naming the members
 * present. */
int ct_npz_member(const uint8_t *zip, size_t n, const char *path, const char *member, uint8_t **out,
                  size_t *outn);

/* npy:X.npy,Y.npy[...] and npz:FILE[...] (src/data/npydata.c) */
typedef struct ct_npy_spec {
    const char *spec;             /* the whole spec, for messages */
    int npz;                      /* members of one archive, x_path */
    const char *x_path, *y_path;  /* npy: the two files; npz: the archive (y_path unused) */
    const char *x_member, *y_member; /* npz: the arrays' names; NULL: x_train and y_train (x_test
                                        and y_test for the test split) if there, else x and y */
    const char *test_x, *test_y;     /* test=: npy files, or (test_y NULL) an archive */
    double split;                 /* a test fraction of a seeded, stratified split, or 0 */
    uint64_t seed;
    int classes;                  /* > 0 bounds the labels */
    int standardize;              /* normalize=standard (uint8 images always are) */
} ct_npy_spec;

struct ct_dataset;
/* The split's dataset (CT_SPLIT_TRAIN or CT_SPLIT_TEST). */
int ct_npy_load(const ct_npy_spec *o, int split, struct ct_dataset **out);

#endif /* CT_DATA_NPY_H */
