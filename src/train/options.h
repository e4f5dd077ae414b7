/*
 * options.h - the checks of a run's training options (src/train/options.c).
 */
#ifndef CT_TRAIN_OPTIONS_H
#define CT_TRAIN_OPTIONS_H

#include "cltrain/train.h"
#include "cl/runtime.h"

/* CT_ERR_INVALID_ARG naming the first option out of its range (epochs,
 * batch, accumulate, --init with --resume, the loss scale). */
int ct_train_options_check(ct_context *ctx, const ct_train_options *o);

#endif /* CT_TRAIN_OPTIONS_H */
