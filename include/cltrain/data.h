/*
 * cltrain/data.h - training data: image, table and text datasets loaded whole
 * into host memory, with per-channel normalization to float for images and
 * tables and tokenizers for text.
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
 *   csv:FILE[:label=COL][:header=auto|yes|no][:classes=K][:shape=CxHxW]
 *       [:normalize=none|standard][:test=FILE2|:split=F][:seed=S]
 *                          a table of numbers with one integer label column:
 *                          COL is a header name or a 0-based index (default
 *                          0); the test split reads FILE2, or is a stratified
 *                          fraction F of the rows (shuffled by seed S);
 *                          shape= gives each row's features that shape
 *                          (row-major); normalize=standard: mean 0, std 1
 *                          per feature (per channel with shape=) by the
 *                          training split's statistics (set as for
 *                          imagefolder: below)
 *   csv:FILE:target=COL[,COL...][:header=auto|yes|no][:test=FILE2]
 *                          regression: the named columns are float targets
 *                          (ct_dataset_targets), the others features; no
 *                          label column
 *   imagefolder:DIR[:size=HxW][:split=F][:seed=S][:bad=error|skip]
 *       [:stats=N|all][:index=FILE]
 *                          PNG and JPEG files in class folders, as
 *                          torchvision's ImageFolder: DIR/train/CLASS/ and
 *                          DIR/test/CLASS/, or DIR/CLASS/ split by F; class
 *                          names are the sorted folder names. Opening lists
 *                          the files; images are decoded when a sample is
 *                          read, converted to the channels and resized to
 *                          the size of the model (or size=, or the first
 *                          image), normalized by the training split's
 *                          per-channel mean and std (the training split
 *                          sets its own when opened, from N of its images
 *                          drawn by S, default 10000, or all; copy them to
 *                          the test split with ct_dataset_get_norm and
 *                          ct_dataset_set_norm, as cltrain does); a file
 *                          that does not decode is an error when read, or
 *                          with bad=skip left out by the training loader;
 *                          index=FILE keeps the listing in FILE (written
 *                          when missing, else checked against the folder)
 *   synthetic:C,H,W:K:N[:seed=S][:ntest=M]
 *                          N random u8 samples of shape (C, H, W) (or F for
 *                          plain features) with random labels in [0, K),
 *                          the same for the same seed; the test split has M
 *                          samples (default N) from another stream
 *   text:FILE[:tokens=byte|word][:vocab=N][:seq=T][:test=FILE2|:split=F]
 *                          language-model data: the file's tokens cut into
 *                          windows of T (default 64) that do not overlap;
 *                          window k's inputs are tokens kT .. kT+T-1 and its
 *                          targets kT+1 .. kT+T (the last tokens that fill
 *                          no window are left out). The test split reads
 *                          FILE2, or is the last fraction F of the windows
 *   textdir:DIR[:tokens=byte|word][:vocab=N][:seq=T][:split=F][:seed=S]
 *                          text classification, one file per sample, as
 *                          Keras' text_dataset_from_directory: the class
 *                          names are the subfolders of DIR/train (and the
 *                          test split reads DIR/test), or without DIR/train
 *                          of DIR itself, split by :split=F: in each class
 *                          the fraction F of the files (after a shuffle by
 *                          seed S, default 0) is the test split
 *   csv:FILE:text=COL[:label=COL][:header=auto|yes|no][:classes=K]
 *       [:tokens=byte|word][:vocab=N][:seq=T][:test=FILE2|:split=F][:seed=S]
 *                          text classification from a CSV file (RFC 4180:
 *                          quoted fields hold commas, newlines and doubled
 *                          quotes), one row per sample; labels are integers
 *                          (the ids) or else class names (ids in byte order
 *                          of the names); split=F as for textdir. With
 *                          header=auto the first row is a header when
 *                          text= or label= names a column
 * Text classification samples hold T ids (default 128), truncated or
 * padded with the padding id. tokens=byte (the default) gives one id per
 * byte; tokens=word a vocabulary of the N (default 10000) most frequent
 * words of the training split plus <pad> and <unk> (ct_tokenizer_*).
 * IDX file names follow the MNIST release: train-images-idx3-ubyte,
 * train-labels-idx1-ubyte, t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte,
 * each optionally with .gz. Paths in a spec cannot contain ':'.
 *
 * Every reader validates the whole file (an image folder each image when
 * it is decoded): a wrong magic, a truncated file,
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
 * over the whole dataset (an image folder's: over its stats= sample, which
 * this decodes); a constant channel gets std 1. Compute it on the training
 * split and set it on both splits. channels must equal C. */
CT_API int ct_dataset_compute_norm(const ct_dataset *ds, float *mean /* (C) */, float *std /* (C) */,
                                   int channels);

/* Sample `index`, normalized: x (C, H, W), *label in [0, classes) (-1 for
 * regression data). CT_ERR_UNSUPPORTED for text datasets
 * (ct_dataset_sample_tokens). */
CT_API int ct_dataset_sample(const ct_dataset *ds, size_t index, float *x /* (C, H, W) */,
                             int32_t *label);

/* ---- regression targets ----
 * csv:FILE:target=COL[,COL...] gives each sample K float targets in place
 * of a class label (ct_dataset_classes is then 0), as a model ending in
 * the mse loss reads them. */

/* K, the targets per sample; 0 for labelled data. */
CT_API int ct_dataset_targets(const ct_dataset *ds);
/* The name of target k in [0, K): its header name, or "column N" (0-based);
 * NULL otherwise. */
CT_API const char *ct_dataset_target_name(const ct_dataset *ds, int k);
/* Sample `index`'s targets, t (K), as stored (not normalized). */
CT_API int ct_dataset_sample_targets(const ct_dataset *ds, size_t index, float *t /* (K) */);

/* ---- tokenizers ----
 * Text to token ids and back (docs/DATASETS.md has the rules). */

typedef struct ct_tokenizer ct_tokenizer;

typedef enum ct_token_kind {
    CT_TOKENS_BYTE = 0, /* one id per byte, vocabulary 256 */
    CT_TOKENS_WORD = 1, /* lower-cased words and punctuation, from a vocabulary */
} ct_token_kind;

#define CT_TOKEN_PAD 0 /* the padding id of both kinds */
#define CT_TOKEN_UNK 1 /* word tokens: a word outside the vocabulary */

CT_API int ct_tokenizer_new_byte(ct_tokenizer **out);
CT_API void ct_tokenizer_free(ct_tokenizer **tok);
/* CT_TOKENS_BYTE or CT_TOKENS_WORD. */
CT_API int ct_tokenizer_kind(const ct_tokenizer *tok);
/* The number of ids: 256, or the words + 2 (<pad> and <unk>). An
 * embedding reading these ids needs vocab >= this. */
CT_API size_t ct_tokenizer_size(const ct_tokenizer *tok);
/* The ids of text (len bytes): at most cap of them in ids; *count is how
 * many the whole text gives (more than cap when they did not fit). A NUL
 * byte is an error, and for word tokens so is text that is not UTF-8;
 * the message names the byte offset. */
CT_API int ct_tokenizer_encode(const ct_tokenizer *tok, const char *text, size_t len, int32_t *ids,
                               size_t cap, size_t *count);
/* The text of one id (not NUL-terminated for byte tokens: use *len):
 * a byte, or a word ("<pad>" and "<unk>" for the specials; byte tokens'
 * padding id is ""). NULL for an id outside the vocabulary. */
CT_API const char *ct_tokenizer_token(const ct_tokenizer *tok, int32_t id, size_t *len);
/* The text of n ids in buf (NUL-terminated when cap > 0), snprintf-style:
 * returns the length the whole text needs. Padding ids are skipped, word
 * tokens are separated by single spaces, and an id outside the vocabulary
 * becomes U+FFFD. */
CT_API size_t ct_tokenizer_decode(const ct_tokenizer *tok, const int32_t *ids, size_t n, char *buf,
                                  size_t cap);
/* The tokenizer as JSON, for checkpoint metadata:
 *   {"format":"cltrain-tokens","version":1,"tokens":"byte"}
 *   {"format":"cltrain-tokens","version":1,"tokens":"word","words":["<pad>","<unk>","the",...]}
 * snprintf-style into buf; returns the length the whole text needs. */
CT_API size_t ct_tokenizer_to_json(const ct_tokenizer *tok, char *buf, size_t cap);
/* Reads ct_tokenizer_to_json's form back, strictly: no other keys, every
 * word a token as word tokens read it, none twice. Errors are
 * CT_ERR_CORRUPT with the byte offset or word number. */
CT_API int ct_tokenizer_from_json(const char *json, size_t len, ct_tokenizer **out);

/* ---- text datasets ----
 * Text datasets hold token ids: a sample is T ids (ct_dataset_seq; its
 * shape is (T, 1, 1)), read with ct_dataset_sample_tokens; normalization
 * does not apply to them (CT_ERR_UNSUPPORTED). Language-model data has a
 * label per token, the next token's id (ct_dataset_labels_per_sample is T
 * and ct_dataset_classes the vocabulary size); classification data one
 * label per sample, with class names. */

/* Tokens per sample (T); 0 for image and table datasets. */
CT_API int ct_dataset_seq(const ct_dataset *ds);
/* 1, or T for language-model data; 0 for no dataset. */
CT_API int ct_dataset_labels_per_sample(const ct_dataset *ds);
/* The dataset's tokenizer (owned by it); NULL for image and table data. */
CT_API const ct_tokenizer *ct_dataset_tokenizer(const ct_dataset *ds);
/* The name of class k in [0, classes), or NULL: image, table and
 * language-model datasets have no class names. */
CT_API const char *ct_dataset_class_name(const ct_dataset *ds, int k);
/* Sample `index` of a text dataset: ids (T), and labels (1 or T, as
 * ct_dataset_labels_per_sample says; NULL skips them). */
CT_API int ct_dataset_sample_tokens(const ct_dataset *ds, size_t index, int32_t *ids /* (T) */,
                                    int32_t *labels /* (1) or (T) */);

/* What a text dataset takes from elsewhere, such as a checkpoint, instead
 * of building it from its training split. */
typedef struct ct_text_options {
    const ct_tokenizer *tokenizer; /* NULL: the spec's tokens= (a word vocabulary
                                      built from the training split) */
    const char *const *classes;    /* (nclasses) class names in id order; NULL:
                                      the training split's */
    int nclasses;
} ct_text_options;

/* All NULL. */
CT_API void ct_text_defaults(ct_text_options *o);
/* ct_dataset_open with a given tokenizer (copied; its kind must agree with
 * a tokens= in the spec, which is then only checked) and class names (a
 * label or folder outside them is an error naming it). The class names
 * apply to image folders too; the rest of the options do not apply to
 * image and table datasets and are ignored there. */
CT_API int ct_dataset_open_text(const char *spec, int split, const ct_text_options *o,
                                ct_dataset **out);

#ifdef __cplusplus
}
#endif

#endif /* CLTRAIN_DATA_H */
