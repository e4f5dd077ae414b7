/*
 * tboard.h - a training run's TensorBoard event file (the tensorboard
 * options of ct_train_options; the file format: src/io/tfevents.h).
 *
 * Written on rank 0 only: per epoch every scalar of the epoch report (one
 * list in tboard.c), optionally a histogram of every parameter tensor, and
 * every `tensorboard_every` steps the training loss and accuracy of the
 * steps since the previous point, read from the device's running totals
 * without blocking. The file is flushed and fsynced at every epoch's end.
 *
 * Opening is checked before training starts (a directory that cannot be
 * made or written is an error then); a failure later (a full disk, a
 * device error reading the totals) is a warning through the context's log
 * naming the file and the cause, after which the run goes on without
 * TensorBoard events: losing a long training to its log disk is worse.
 */
#ifndef CT_TRAIN_TBOARD_H
#define CT_TRAIN_TBOARD_H

#include <stddef.h>

#include "cltrain/train.h"
#include "io/tfevents.h"
#include "nn/net.h"
#include "train/parallel.h"

/* points whose totals may be in flight at once; the host runs at most two
 * steps ahead of the device (the batch slots), so a full ring is rare */
#define CT_TBOARD_RING 8

typedef struct ct_tboard_point {
    long step;
    size_t rows;             /* this rank's rows trained this epoch up to the step */
} ct_tboard_point;

typedef struct ct_tboard {
    ct_tfevents *w;          /* NULL: not writing (off, not rank 0, or stopped) */
    ct_context *ctx;         /* warnings go to its log */
    long every;              /* steps between points; 0: none */
    int histograms;
    int tokens;              /* labels per sample: accuracies are per token or pixel */
    int regression;          /* the "correct" total is of absolute errors: MAE, not accuracy */
    size_t nrep;             /* replicas whose totals a point sums */
    ct_tboard_point point[CT_TBOARD_RING];
    cl_event *ev;            /* (CT_TBOARD_RING, nrep) reads of the totals */
    float *acc;              /* (CT_TBOARD_RING, nrep, 2) loss sum, correct count */
    size_t head, pending;    /* the oldest point in flight, how many are */
    double loss0, correct0;  /* the totals at the previous point (0 at an epoch's start) */
    size_t rows0;
} ct_tboard;

/* Opens the event file when o->tensorboard is set and this is rank 0
 * (lead); otherwise tb stays off. Errors go to g's first context. */
int ct_tboard_open(ct_tboard *tb, const ct_train_options *o, const ct_group *g, int lead, int tokens,
                   int regression);

/* After step `step` is enqueued, its accumulation included: every
 * tb->every steps, reads of the replicas' totals are enqueued without
 * blocking; points whose reads have completed are written. `rows`: this
 * rank's rows trained this epoch, `step`'s included. */
void ct_tboard_step(ct_tboard *tb, const ct_group *g, long step, size_t rows);

/* At an epoch's end, after its totals were read and its report made: the
 * points still in flight, the report's scalars, the histograms, a flush. */
void ct_tboard_epoch(ct_tboard *tb, const ct_group *g, ct_net *net, const ct_epoch_report *r);

/* Waits for reads in flight and closes the file (a failure: a warning). */
void ct_tboard_close(ct_tboard *tb);

#endif /* CT_TRAIN_TBOARD_H */
