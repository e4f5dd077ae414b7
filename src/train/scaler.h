/*
 * scaler.h - dynamic loss scaling for fp16 training (--precision fp16), as
 * PyTorch's GradScaler: the loss's gradient is multiplied by the scale S
 * (2^16 at the start), so small gradients survive float16's range; after
 * each step's backward the gradients are checked, and when any is Inf or
 * NaN the step is skipped (the gradients zeroed, no update) and S halved;
 * otherwise they are divided by S before clipping and the update, and
 * after 2,000 clean steps in a row S doubles (up to 2^24). The decision
 * reads one count per step from the device (a blocking read, fp16 only).
 * A non-finite loss is not the scaler's to handle: the non-finite check
 * (--check-finite) reports it as a divergence.
 */
#ifndef CT_TRAIN_SCALER_H
#define CT_TRAIN_SCALER_H

#include "train/parallel.h"

#define CT_SCALER_START 65536.0f
#define CT_SCALER_MAX 16777216.0f
#define CT_SCALER_GROWTH_STEPS 2000

typedef struct ct_scaler {
    int on;
    float scale;
    long clean;        /* clean steps since the scale last changed */
    long skipped;      /* steps skipped since the last ct_scaler_epoch */
    long first_skip;   /* the first of them (0: none) */
    cl_mem ws;         /* the count and its reduction's workspace */
} ct_scaler;

/* scale: the resumed checkpoint's, or 0 for the start value. */
int ct_scaler_init(ct_scaler *s, ct_context *ctx, int on, float scale, size_t nparams);
void ct_scaler_release(ct_scaler *s);
/* Before a step's micro-batches: every replica's loss gradient times S / K. */
void ct_scaler_arm(const ct_scaler *s, ct_group *g, int accum);
/* After the step's gradients are complete on every replica (reduced):
 * *skip = 1 when they overflowed (zeroed on every replica, S halved), else
 * they are unscaled on every replica. */
int ct_scaler_check(ct_scaler *s, ct_group *g, long step, int *skip);
/* The epoch's skipped steps (and the first's number), then counting anew. */
long ct_scaler_epoch(ct_scaler *s, long *first);

#endif /* CT_TRAIN_SCALER_H */
