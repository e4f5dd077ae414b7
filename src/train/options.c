/*
 * options.c - the training options: their defaults (ct_train_defaults,
 * cltrain/train.h) and the checks of what a run is given before it opens
 * anything (options.h).
 */
#include <math.h>
#include <string.h>

#include "train/options.h"
#include "train/scaler.h"

void ct_train_defaults(ct_train_options *o)
{
    memset(o, 0, sizeof *o);
    o->model = "cnn";
    o->data = "fashion-mnist";
    o->epochs = 5;
    o->batch = 64;
    o->optimizer = "adam";
    o->lr = 0; /* by optimizer */
    o->momentum = 0.9f;
    o->schedule = "cosine";
    o->step_epochs = 1;
    o->gamma = 0.1f;
    o->seed = 1;
    o->check_finite = 100;
    o->augment = -1;
    o->progress_interval = 0.5;
    o->tensorboard_every = 10;
    o->precision = -1;
}

int ct_train_options_check(ct_context *ctx, const ct_train_options *o)
{
    if (o->epochs < 1 || o->epochs > 100000)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "epochs must be in [1, 100000], not %d", o->epochs);
    if (o->batch < 1)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "the batch must be at least 1, not %d", o->batch);
    if (o->accumulate < 0 || o->accumulate > CT_TRAIN_ACCUMULATE_MAX)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "accumulate must be in [1, %d] micro-batches per step, not "
                       "%d", CT_TRAIN_ACCUMULATE_MAX, o->accumulate);
    if (o->init && o->resume)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "--init %s and --resume %s: a resumed run continues its own "
                       "weights. HINT: --init starts a new run from other weights; drop one", o->init, o->resume);
    if (o->loss_scale != 0 && (o->loss_scale < 1 || o->loss_scale > CT_SCALER_MAX ||
                               frexpf(o->loss_scale, &(int){ 0 }) != 0.5f))
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "the loss scale must be a power of two in [1, 2^24], not %g",
                       (double)o->loss_scale);
    return CT_OK;
}
