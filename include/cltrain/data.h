/*
 * cltrain/data.h - training data: image and table datasets loaded whole into
 * host memory, with per-channel normalization to float.
 *
 * A dataset spec names the source:
 *   fashion-mnist[:DIR]    Fashion-MNIST IDX files (plain or .gz); DIR
 *                          defaults to /usr/share/datasets/fashion-mnist, where
 *                          Debian's dataset-fashion-mnist package puts them
 *   mnist:DIR              MNIST IDX files in DIR
 *   idx:DIR[:classes=K]    any IDX u8 images + labels in DIR; also a bare DIR
 *                          (K defaults to the largest label + 1)
 *   cifar10:DIR            CIFAR-10 binary batches (data_batch_1..5.bin,
 *                          test_batch.bin) in DIR or DIR/cifar-10-batches-bin
 *   csv:FILE[:label=COL][:header=auto|yes|no][:classes=K][:test=FILE2]
 *                          a table of numbers with one integer label column:
 *                          COL is a header name or a 0-based index (default
 *                          0); the test split reads FILE2
 *   synthetic:C,H,W:K:N[:seed=S][:ntest=M]
 *                          N random u8 samples of shape (C, H, W) (or F for
 *                          plain features) with random labels in [0, K),
 *                          the same for the same seed; the test split has M
 *                          samples (default N) from another stream
 * IDX file names follow the MNIST release: train-images-idx3-ubyte,
 * train-labels-idx1-ubyte, t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte,
 * each optionally with .gz. Paths in a spec cannot contain ':'.
 *
 * Every reader validates the whole file: a wrong magic, a truncated file,
 * bytes after the declared records, counts that disagree, a label out of
 * range or a malformed CSV field is CT_ERR_CORRUPT with a message naming the
 * file and the record (or line:column); a missing file is CT_ERR_IO.
 */
#ifndef CLTRAIN_DATA_H
#define CLTRAIN_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "cltrain/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ct_dataset ct_dataset;

typedef enum ct_split {
    CT_SPLIT_TRAIN = 0,
    CT_SPLIT_TEST = 1,
} ct_split;

/* Loads one split of the dataset `spec` names (see above). *out is NULL on
 * failure; the message is in ct_last_error(). */
CT_API int ct_dataset_open(const char *spec, int split, ct_dataset **out);
CT_API void ct_dataset_free(ct_dataset **ds);

/* What was loaded, e.g. "fashion-mnist train (/usr/share/.../train-images-idx3-ubyte.gz)". */
CT_API const char *ct_dataset_name(const ct_dataset *ds);
CT_API size_t ct_dataset_count(const ct_dataset *ds);
/* The shape of one sample, (C, H, W); a table of F features is (F, 1, 1).
 * NULL pointers are skipped. */
CT_API void ct_dataset_shape(const ct_dataset *ds, int *c, int *h, int *w);
CT_API int ct_dataset_classes(const ct_dataset *ds);

/* Normalization maps a stored value v of channel c to
 *   (v * scale - mean[c]) / std[c],  scale = 1/255 for u8 images, 1 for tables.
 * Each dataset starts with its customary constants (Fashion-MNIST 0.2860 /
 * 0.3530, MNIST 0.1307 / 0.3081, CIFAR-10 (0.4914, 0.4822, 0.4465) /
 * (0.2470, 0.2435, 0.2616)); others with mean 0, std 1. `channels` must
 * equal C, or be 1 to apply one pair to every channel. */
CT_API int ct_dataset_set_norm(ct_dataset *ds, const float *mean /* (channels) */,
                               const float *std /* (channels) */, int channels);
/* channels must equal C. */
CT_API int ct_dataset_get_norm(const ct_dataset *ds, float *mean /* (C) */, float *std /* (C) */,
                               int channels);
/* The per-channel mean and (population) standard deviation of v * scale
 * over the whole dataset; a constant channel gets std 1. Compute it on the
 * training split and set it on both splits. channels must equal C. */
CT_API int ct_dataset_compute_norm(const ct_dataset *ds, float *mean /* (C) */, float *std /* (C) */,
                                   int channels);

/* Sample `index`, normalized: x (C, H, W), *label in [0, classes). */
CT_API int ct_dataset_sample(const ct_dataset *ds, size_t index, float *x /* (C, H, W) */,
                             int32_t *label);

#ifdef __cplusplus
}
#endif

#endif /* CLTRAIN_DATA_H */
