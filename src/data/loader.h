/*
 * loader.h - mini-batches for training: a seeded shuffle per epoch, an
 * optional CIFAR-style augmentation (random crop of the image padded by
 * `crop_pad`, random horizontal flip), sharding across data-parallel ranks,
 * and a prefetch thread that decodes batch b+1 into a second staging buffer
 * while the caller works on batch b. Text datasets give (T, N) blocks of
 * token ids (see ct_batch); a language model's epoch is every window of
 * its file once, in shuffled order.
 *
 * Determinism: the order of an epoch depends on (seed, epoch) only, and a
 * sample's augmentation on (seed, epoch, dataset index) only, so prefetching
 * or not, the batch size and the rank count never change what a sample looks
 * like, and every platform yields the same batches.
 *
 * Sharding: the epoch's order (all N samples) is dealt out round-robin:
 * rank r takes positions r, r + world, r + 2 world, ... Shards are disjoint
 * and cover the dataset; their sizes differ by at most one unless
 * even_shards drops the last N mod world positions so every rank takes the
 * same number of steps. With shard_block B > 1 the positions are dealt in
 * blocks of B: rank r takes blocks r, r + world, ... With B the per-rank
 * batch, rank r's batch k is the r-th slice of rows k*world*B .. of the
 * order, so the ranks' batches k together are exactly the batch k that one
 * process with batch world*B would draw (even_shards then drops the last
 * N mod (world*B) positions).
 */
#ifndef CT_DATA_LOADER_H
#define CT_DATA_LOADER_H

#include <stddef.h>
#include <stdint.h>

#include "cltrain/data.h"

typedef struct ct_loader ct_loader;

typedef struct ct_loader_options {
    size_t batch;      /* samples per batch, >= 1 */
    uint64_t seed;
    int shuffle;       /* 0: dataset order every epoch */
    int drop_last;     /* 1: drop the last batch if it is partial */
    int crop_pad;      /* > 0: random crop with this padding (4 for CIFAR) */
    int flip;          /* 1: mirror each sample with probability 1/2 */
    int prefetch;      /* 1: decode ahead on a background thread */
    int rank, world;   /* this rank's shard; world 0 or 1: the whole dataset */
    int even_shards;   /* 1: equal shard sizes (drops up to world-1 samples) */
    size_t shard_block; /* positions dealt per turn; 0 or 1: one */
    int threads;       /* image folders: threads decoding each batch's files
                          (> 1: a pool, the prefetch thread or caller one of
                          them); 0 or 1: one. The batches are the same for
                          every count */
    /* Test hook: decoding batch number test_fail_batch (counted from 1 in
     * each epoch) fails with CT_ERR_INTERNAL, to exercise error propagation
     * from the prefetch thread. 0 in real use. */
    size_t test_fail_batch;
} ct_loader_options;

/* One batch; its arrays stay valid until the next ct_loader_next,
 * ct_loader_start_epoch or ct_loader_free on the loader.
 *
 * Text datasets give token ids instead of x, laid out time-major as the
 * embedding and the LSTM read them, (T, N): sample i's token t is
 * tokens[t * stride + i], with stride the loader's batch size, so a full
 * batch is the (T, N) block a net of batch N takes. Language-model data
 * has its targets in y the same way; classification data has y (n). In a
 * partial last batch, columns n .. stride-1 hold the padding id (0), in y
 * too for language-model data: drop_last, or masking, keeps them out of
 * a loss. Regression data has float targets in t instead of labels. */
typedef struct ct_batch {
    size_t n;             /* samples in this batch; 0 at the end of the epoch */
    size_t number;        /* which batch of the epoch, from 0 */
    const float *x;       // (n, C, H, W) normalized, augmented; NULL for text
    const int32_t *y;     // (n) labels, (n, label_per) per pixel; language-model data: (T, stride) next-token ids
    size_t label_per;     /* labels per sample of image data: 1, or H W with a label per pixel */
    const size_t *index;  // (n) dataset index of each sample
    const int32_t *tokens; // (T, stride) token ids, text only (else NULL)
    size_t seq;           /* T; 0 for image and table data */
    size_t stride;        /* columns of tokens (the loader's batch); 0 for image and table data */
    /* regression data (csv target=): y is NULL, and the targets are */
    const float *t;       // (n, ntargets); NULL for labelled data
    size_t ntargets;      /* K; 0 for labelled data */
} ct_batch;

/* Options with batch 64, seed 0, shuffle on, prefetch on, the rest off. */
void ct_loader_defaults(ct_loader_options *o);
/* The loader keeps a pointer to ds, which must outlive it. */
int ct_loader_create(const ct_dataset *ds, const ct_loader_options *o, ct_loader **out);
void ct_loader_free(ct_loader **l);

/* Begins an epoch (any number: epochs need not come in order); discards
 * what an unfinished epoch had prefetched. */
int ct_loader_start_epoch(ct_loader *l, uint64_t epoch);
/* The next batch of the epoch in b (b->n == 0 after the last). A decoding
 * error comes back here, with its message in ct_last_error(). */
int ct_loader_next(ct_loader *l, ct_batch *b);

/* Samples and batches this rank sees per epoch. */
size_t ct_loader_samples(const ct_loader *l);
size_t ct_loader_batches(const ct_loader *l);

/* Files skipped (an image folder's bad=skip: they did not decode) in the
 * batches delivered so far this epoch; *first (unless first is NULL) the
 * first one's message, "" when none. */
size_t ct_loader_skipped(const ct_loader *l, const char **first);

/* This rank's sample order for the current epoch (ct_loader_samples entries). */
const size_t *ct_loader_order(const ct_loader *l);

#endif /* CT_DATA_LOADER_H */
