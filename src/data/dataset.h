/*
 * dataset.h - the dataset as the readers build it and the loader reads it,
 * and the readers themselves. Samples are stored as loaded (u8 images or
 * float tables) and normalized to float only when decoded, so a dataset
 * costs its file size in memory, not four times that.
 */
#ifndef CT_DATA_DATASET_H
#define CT_DATA_DATASET_H

#include <stddef.h>
#include <stdint.h>

#include <zlib.h>

#include "cltrain/data.h"

typedef enum ct_storage {
    CT_STORE_U8 = 0,  /* images, 0..255 */
    CT_STORE_F32 = 1, /* table features */
    CT_STORE_TOKENS = 2, /* text: int32 token ids */
    CT_STORE_FILES = 3, /* image folders: image files decoded to u8 on demand */
} ct_storage;

struct ct_dataset {
    char *name;
    size_t n;
    int c, h, w;
    int classes;
    ct_storage storage;
    uint8_t *u8;      // (N, C, H, W) when storage is CT_STORE_U8
    float *f32;       // (N, C, H, W) when storage is CT_STORE_F32
    int32_t *labels;  // (N), or (N, H, W) with per-pixel labels
    int pixel_labels; /* 1: a label per pixel (segmentation), H W per sample */
    float *mean;      // (C)
    float *std;       // (C)
    /* text (storage CT_STORE_TOKENS, shape (T, 1, 1); no normalization) */
    int seq;          /* T, ids per sample; 0 for images and tables */
    int lm;           /* 1: language-model windows with a label per token */
    int32_t *tokens;  // lm: (N T + 1) a token stream: sample k's ids are [kT, kT + T), its
                      // labels (next tokens) [kT + 1, kT + T + 1); else (N, T) padded samples
    struct ct_tokenizer *tok;
    char **class_names; // (classes) classification text and image folders; NULL otherwise
    /* image folders (storage CT_STORE_FILES): files decoded when a sample is read */
    char **files;       // (nfiles) paths; samples are the first n
    size_t nfiles;
    int skip_bad;       /* bad=skip: the loader leaves out files that do not decode */
    size_t stats_n;     /* images the normalization statistics sample; 0: all */
    uint64_t stats_seed; /* ... drawn by this seed */
    int threads;        /* threads decoding that sample; 0: one per core */
    /* image folders, csv normalize=standard: normalize with the training
     * split's mean and std (ct_dataset_compute_norm on it, set on both) */
    int norm_from_train;
    /* regression (csv target=): float targets instead of labels (labels
     * NULL, classes 0) */
    int ntargets;       /* K; 0 for labelled data */
    float *targets;     // (N, K)
    char **target_names; // (K) the header's names, or "column N"
};

/* An empty dataset of shape (c, h, w) with mean 0 / std 1; the storage
 * arrays are left NULL for the reader to fill. */
int ct_dataset_new(const char *name, int c, int h, int w, ct_storage storage, ct_dataset **out);
size_t ct_dataset_sample_size(const ct_dataset *ds);
/* Sample `index` normalized into x (C, H, W), with the CIFAR-style
 * augmentation: a crop at offset (dy, dx) in [0, 2*pad] of the image padded
 * by `pad` on each side (padding holds the value a stored 0 normalizes to),
 * then a horizontal mirror if `flip`. pad 0 and flip 0 is the plain sample. */
int ct_dataset_decode(const ct_dataset *ds, size_t index, int pad, int dy, int dx, int flip,
                      float *x /* (C, H, W) */);

/* What a reader may take from the model that reads the data: its input
 * (C, H, W), to which image folders convert and resize (0: not known). */
typedef struct ct_data_hints {
    int c, h, w;
    /* 1: an image folder's training split opens without its normalization
     * statistics (which decode a sample of its files): the caller computes
     * them (ct_dataset_compute_norm) or takes a checkpoint's */
    int defer_norm;
} ct_data_hints;

/* ct_dataset_open_text with hints (NULL: none). */
int ct_dataset_open_hinted(const char *spec, int split, const ct_text_options *o,
                           const ct_data_hints *hints, ct_dataset **out);

/* ---- reading files through zlib: gzip or plain, told apart by content ---- */

typedef struct ct_gzin {
    gzFile f;
    const char *path;
    uint64_t pos; /* decompressed bytes read so far */
} ct_gzin;

int ct_gzin_open(ct_gzin *in, const char *path);
/* Reads up to n bytes; *got < n only at the end of the data. */
int ct_gzin_read(ct_gzin *in, void *buf, size_t n, size_t *got);
/* Reads up to `limit` bytes into a buffer that grows as data arrives (so a
 * lying header cannot make it allocate more than the file holds), with one
 * spare byte after the data for a terminating NUL. */
int ct_gzin_read_alloc(ct_gzin *in, size_t limit, uint8_t **out, size_t *got);
/* Reads to the end, counting the bytes. */
int ct_gzin_count_rest(ct_gzin *in, uint64_t *count);
void ct_gzin_close(ct_gzin *in);

/* ---- readers ---- */

/* IDX u8 images (N, H, W) + labels (N) from two files. classes > 0 bounds
 * the labels; classes 0 takes the largest label + 1. */
int ct_idx_load(const char *images_path, const char *labels_path, int classes, const char *name,
                ct_dataset **out);
/* The IDX pair of a split in dir: 0 and both paths (malloc'd) set, or
 * CT_ERR_IO naming what is missing. */
int ct_idx_find(const char *dir, int split, char **images_path, char **labels_path);

/* CIFAR-10 binary batches of a split from dir (or dir/cifar-10-batches-bin). */
int ct_cifar10_load(const char *dir, int split, ct_dataset **out);

typedef struct ct_csv_options {
    const char *label;  /* column name or 0-based index; NULL: column 0 */
    int header;         /* -1 auto-detect, 0 none, 1 present */
    int classes;        /* > 0 bounds the labels; 0: largest label + 1 */
    const char *target; /* regression: target columns, comma-separated names or 0-based
                           indices (no label column then); NULL: a label column */
    /* shape=, split=, seed=, normalize= */
    int shape[3];       /* (C, H, W) of each row's features; 0: (F, 1, 1) */
    double split;       /* the test fraction in (0, 1) of a stratified split, or 0 */
    uint64_t seed;      /* of the split's shuffle */
    int part;           /* with split: the rows of CT_SPLIT_TRAIN or CT_SPLIT_TEST */
    int standardize;    /* normalize=standard */
} ct_csv_options;

int ct_csv_load(const char *path, const ct_csv_options *opt, ct_dataset **out);

/* What a text spec says (spec.c parses it, the readers below load it). */
typedef struct ct_text_spec {
    const char *spec;      /* the whole spec, for messages */
    const char *path;      /* FILE or DIR */
    int tokens;            /* CT_TOKENS_BYTE or CT_TOKENS_WORD */
    int tokens_given;      /* tokens= was in the spec */
    size_t vocab;          /* words of a word vocabulary */
    int seq;               /* T */
    const char *test;      /* test=FILE, or NULL */
    double split;          /* the test fraction in (0, 1), or 0 */
    uint64_t seed;         /* of the split's shuffle */
    const char *text_col;  /* csv: the text column (name or 0-based index) */
    const char *label_col; /* csv: the label column; NULL: column 0 */
    int header;            /* csv: -1 auto, 0 none, 1 present */
    int classes;           /* csv: > 0 bounds integer labels */
    const ct_text_options *given; /* tokenizer and class names from elsewhere, or NULL */
} ct_text_spec;

/* text:FILE language-model windows. */
int ct_text_load(const ct_text_spec *s, int split, ct_dataset **out);
/* textdir:DIR, a file per sample. */
int ct_textdir_load(const ct_text_spec *s, int split, ct_dataset **out);
/* csv:FILE:text=COL, a row per sample. */
int ct_csvtext_load(const ct_text_spec *s, int split, ct_dataset **out);

/* One text classification sample: a file to read, or text in memory. */
typedef struct ct_text_item {
    const char *file;  /* textdir: the file to read; csv: the CSV file, for messages */
    const char *text;  /* csv: the field's text (len bytes); NULL: read file */
    size_t len;
    size_t line;       /* csv: the line the row starts on */
    int32_t label;
} ct_text_item;

/* The classification dataset of `items`: the tokenizer given, or byte
 * tokens, or a word vocabulary counted over vocab_items (the training
 * split); each sample's first T ids, padded. Takes class_names (classes
 * strings) in every case. */
int ct_text_classify(const ct_text_spec *s, const char *name, const ct_text_item *vocab_items,
                     size_t nvocab, const ct_text_item *items, size_t n, char **class_names,
                     int classes, ct_dataset **out);
/* Frees n strings and the array. */
void ct_free_strings(char **v, size_t n);
/* Marks the test samples of a stratified split: for each class, the
 * fraction `split` (rounded) of its samples, drawn by `seed`. labels (n) in
 * [0, classes); is_test (n) out. */
int ct_text_split(const int32_t *labels, size_t n, int classes, double split, uint64_t seed,
                  uint8_t *is_test);

/* imagefolder:DIR (src/data/imagefolder.c). */
typedef struct ct_imagefolder_spec {
    const char *spec;      /* the whole spec, for messages */
    const char *path;      /* DIR */
    double split;          /* the test fraction in (0, 1), or 0 */
    uint64_t seed;         /* of the split's shuffle */
    int c, h, w;           /* the samples' shape; 0: the model's, else the first image's */
    int skip_bad;          /* bad=skip: the loader leaves out files that do not decode */
    size_t stats;          /* stats=N: images sampled for the mean and std; 0: all */
    const char *index;     /* index=FILE, or NULL */
    const char *const *classes; /* class names given (a checkpoint's), or NULL */
    int nclasses;
} ct_imagefolder_spec;

/* Lists the folder (or takes index=FILE's list, checked against it);
 * decodes no file but, when s leaves the shape open, the first. */
int ct_imagefolder_load(const ct_imagefolder_spec *s, int split, ct_dataset **out);
/* An image folder's per-channel mean and std (as ct_dataset_compute_norm)
 * from ds->stats_n of its first ds->n files drawn by ds->stats_seed (all
 * when 0 or more), decoded on `threads` threads (0: one per core); a file
 * that fails is an error, or with bad=skip left out. *used and *failed
 * (either may be NULL) count the files that decoded and those that did
 * not. The result does not depend on the thread count. */
int ct_imagefolder_stats(const ct_dataset *ds, int threads, float *mean /* (C) */, float *sd /* (C) */,
                         size_t *used, size_t *failed);

/* n samples of (c, h, w) random bytes with labels in [0, classes). */
int ct_synthetic_create(int c, int h, int w, int classes, size_t n, uint64_t seed, int split,
                        ct_dataset **out);

#endif /* CT_DATA_DATASET_H */
