/*
 * finite.h - the trainer's NaN/Inf check. Every `every` steps, after
 * backward and before the optimizer (so the parameters are still the ones
 * that produced the step), the loss, the gradients and the parameters are
 * counted for non-finite values on the device and one small read brings the
 * three counts back. At each epoch's end, before evaluation and the
 * checkpoint, the parameters and running statistics are checked again, so
 * no checkpoint ever holds a non-finite value. On trouble the culprit is
 * located layer by layer: the first forward output (file order) that is
 * non-finite, else the first gradient (backward order), else the first
 * parameter tensor; the error names it, the step, and the last good
 * checkpoint.
 */
#ifndef CT_TRAIN_FINITE_H
#define CT_TRAIN_FINITE_H

#include "nn/net.h"

typedef struct ct_finite {
    long every;            /* steps between checks; 0: only at epoch ends */
    cl_mem ws;             /* count slots, then the reduction workspace */
    size_t nslots;
    size_t *base;          /* per layer: its first slot (output, output gradient, then a
                              gradient and a value slot per parameter tensor) */
    long last_ok;          /* the last step a check passed (0: none yet) */
    const char *ckpt;      /* the last good checkpoint (not owned), or NULL */
    int ckpt_epoch;
    int ckpt_resumed;      /* it is the file the run resumed from */
} ct_finite;

/* Sizes the counters for a net (allocated, planned at its batch). f must
 * be zeroed before (so ct_finite_release is safe after any failure). */
int ct_finite_init(ct_finite *f, const ct_net *net, long every);
void ct_finite_release(ct_finite *f);

/* Records that `path` holds a good checkpoint of `epoch` completed epochs
 * and `step` steps (resumed: the one the run started from). `path` must
 * outlive f. */
void ct_finite_saved(ct_finite *f, const char *path, int epoch, long step, int resumed);

/* At a step (1-based, counted over the whole run) of an epoch (1-based),
 * after backward: checks when step is a multiple of the interval. seed and
 * step are the ones the step's forward and backward used (the search for
 * the culprit runs the backward again). */
int ct_finite_step(ct_finite *f, ct_net *net, uint64_t seed, long step, int epoch);

/* At an epoch's end, given its mean training loss: checks the loss, the
 * parameters and the running statistics (seed and step: the last step's). */
int ct_finite_epoch(ct_finite *f, ct_net *net, uint64_t seed, double train_loss, long step,
                    int epoch);

#endif /* CT_TRAIN_FINITE_H */
