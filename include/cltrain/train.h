/*
 * cltrain/train.h - training, evaluation and prediction on one device.
 *
 * A run takes a model (zoo name or file), a dataset spec (cltrain/data.h),
 * an optimizer with a learning-rate schedule, and writes a safetensors
 * checkpoint after every epoch (atomically: temp file, fsync, rename). The
 * same seed on the same device gives the same losses bit for bit, and
 * --resume from a checkpoint continues exactly as an uninterrupted run.
 */
#ifndef CLTRAIN_TRAIN_H
#define CLTRAIN_TRAIN_H

#include <stddef.h>
#include <stdint.h>

#include "cltrain/common.h"
#include "cltrain/context.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ct_epoch_report {
    int epoch;             /* 1-based */
    int epochs;
    long step;             /* optimizer steps so far */
    double train_loss;     /* mean over the epoch's samples */
    double train_accuracy; /* fraction in [0, 1] */
    double test_loss;      /* NaN without a test split */
    double test_accuracy;
    double seconds;        /* wall time of the epoch's training (not the evaluation) */
    double samples_per_second;
    float lr;              /* the rate of the epoch's last step */
} ct_epoch_report;

typedef void (*ct_epoch_fn)(void *user, const ct_epoch_report *report);

typedef struct ct_train_options {
    const char *model;       /* zoo name or model file; default "cnn" */
    const char *data;        /* dataset spec; default "fashion-mnist" */
    int epochs;              /* default 5 */
    int batch;               /* default 64 */
    const char *optimizer;   /* "sgd", "adam" (default) or "adamw" */
    float lr;                /* default 1e-3 (adam, adamw), 0.05 (sgd) */
    float momentum;          /* sgd; default 0.9 */
    int nesterov;            /* sgd */
    float weight_decay;      /* default 0 */
    const char *schedule;    /* "constant", "step" or "cosine" (default) */
    long warmup;             /* linear warm-up steps; default 0 */
    int step_epochs;         /* step schedule: multiply by gamma every N epochs (default 1) */
    float gamma;             /* step schedule factor; default 0.1 */
    float clip;              /* clip gradients to this global L2 norm; 0: off */
    long check_finite;       /* check loss, gradients and parameters for NaN/Inf every N
                                steps (default 100); 0: only at each epoch's end, which
                                is always checked before its checkpoint is written */
    int bn_groups;           /* batch norm over this many equal parts of each (replica's)
                                batch, "ghost" batch norm; 0 or 1: the whole batch. One
                                device with bn_groups N computes what N data-parallel
                                replicas (cltrain/parallel.h) compute */
    uint64_t seed;           /* default 1 */
    const char *out;         /* checkpoint written after every epoch; NULL: none */
    const char *resume;      /* continue from this checkpoint */
    const char *log;         /* append one JSON line per epoch (and per log_every steps) */
    long log_every;
    size_t train_limit;      /* use only the first N training samples; 0: all */
    size_t test_limit;
    int augment;             /* -1 auto (random crop + flip for cifar10), 0 off, 1 on */
    int progress;            /* -1 auto (a bar when stderr is a terminal), 0 off, 1 on */
    int dry_run;             /* print the layer table and memory plan, do not train */
    ct_epoch_fn on_epoch;
    void *user;
} ct_train_options;

CT_API void ct_train_defaults(ct_train_options *options);

/* Trains; reports each epoch through options->on_epoch. With dry_run the
 * layer table and the memory plan are printed to stdout instead. */
CT_API int ct_train(ct_context *ctx, const ct_train_options *options);

/* Loss and accuracy of a checkpoint on a dataset's test split. The model is
 * the checkpoint's own unless `model` is given (then it must match). */
CT_API int ct_evaluate(ct_context *ctx, const char *model, const char *weights, const char *data,
                       int batch, size_t limit, double *loss, double *accuracy, size_t *samples);

/* Prints, for the first `count` samples of the data's test split, the
 * label and the top-k classes with their probabilities. */
CT_API int ct_predict(ct_context *ctx, const char *model, const char *weights, const char *data,
                      size_t count, int top_k);

#ifdef __cplusplus
}
#endif

#endif /* CLTRAIN_TRAIN_H */
