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
    int tokens;            /* language-model data: tokens per sample (the losses are then
                              nats per token, the accuracies per token); 0 otherwise */
    int byte_tokens;       /* with tokens: one token per byte, so loss / ln 2 is bits per byte */
    /* Regression (a model ending in mse, trained on csv target= data): the
     * losses are the mean squared error over every target element (the mse
     * loss), the accuracies NaN, and these are set: RMSE, the square root of
     * that loss, and MAE, the mean absolute error over every target element
     * (so with K targets per sample, both average over N K values). NaN
     * otherwise, and the test ones without a test split. */
    int regression;
    double train_rmse, train_mae;
    double test_rmse, test_mae;
    /* fp16 (--precision fp16): the loss scale after the epoch, and the
     * steps it skipped on overflowing gradients (the first's number); the
     * scale 0 otherwise */
    float loss_scale;
    long skipped_steps, first_skipped;
    long skipped_files;    /* an image folder with bad=skip: the training files that did not
                              decode this epoch (left out, each replaced by another sample);
                              -1 for other data */
    long norm_images;      /* an image folder: the images its mean and std came from in this
                              run (its stats= sample); -1 for other data, or when they came
                              from the checkpoint resumed */
    /* data-parallel runs: the mean per step, over the run so far, of the
     * milliseconds from the end of the last replica's backward (on its
     * device) to the summed gradients being on every replica: the part of
     * the reduction the backward did not hide. Negative with one device
     * and one rank. */
    double reduce_exposed_ms;
} ct_epoch_report;

typedef void (*ct_epoch_fn)(void *user, const ct_epoch_report *report);

/* How far the current epoch's training is, for a progress display. */
typedef struct ct_progress {
    int epoch;                 /* 1-based */
    int epochs;
    size_t done;               /* samples trained so far this epoch (every rank's) */
    size_t total;              /* samples the epoch trains */
    double loss;               /* running mean of the epoch's training loss (under MPI,
                                  over rank 0's samples until `finished`) */
    double accuracy;           /* running accuracy, fraction in [0, 1] (likewise) */
    double samples_per_second;
    double eta_seconds;        /* time the epoch's training still needs at this rate */
    int finished;              /* 1: the epoch's training is over, before its evaluation
                                  and report (a display on one line clears it here) */
    int regression;            /* 1: accuracy is NaN, and these are the running RMSE and
                                  MAE (as in ct_epoch_report) */
    double rmse, mae;
} ct_progress;

typedef void (*ct_progress_fn)(void *user, const ct_progress *progress);

/* One row of a dry run's layer table. */
typedef struct ct_plan_layer {
    const char *name;
    const char *type;   /* "conv2d", "dense", ... */
    const char *reads;  /* the names it reads, comma-separated; "" for the input */
    const char *shape;  /* one sample's output: "1x28x28", "32 tokens", "32x256 (sequence)" */
    size_t params;      /* trainable parameters */
} ct_plan_layer;

/* What a dry run plans: the model's layers and the device memory training
 * would take at the options' batch (a replica's part of it when there are
 * several). Every pointer stays valid only during the on_plan call. */
typedef struct ct_plan_report {
    const ct_plan_layer *layers;
    size_t count;
    size_t params;             /* total trainable parameters */
    int batch;                 /* rows the plan is made for */
    const char *memory_plan;   /* arenas, chunks, sharing, limits and whether it fits:
                                  lines of text, each ending in '\n' */
} ct_plan_report;

typedef void (*ct_plan_fn)(void *user, const ct_plan_report *plan);

/* Kernels verified on first contact (ct_train_options.verify, ct_verify) */
enum { CT_VERIFY_AUTO = 0, CT_VERIFY_ALWAYS = 1, CT_VERIFY_OFF = 2,
       CT_VERIFY_READ = 3 /* ct_verify only: read the cached verdicts, check nothing */ };

typedef struct ct_verify_result {
    int mode;               /* the CT_VERIFY_* used (CLTRAIN_VERIFY wins over the caller's) */
    char checked[256];      /* op families checked now, comma-separated ("dense, optim") */
    char cached[256];       /* op families whose verdict was read back from the kernel cache */
    char failed[32];        /* the family that computed wrong numbers; "" when all passed */
    char unverified[256];   /* CT_VERIFY_READ: families with no verdict in the cache */
    int64_t cached_since;   /* unix time of the oldest verdict read back; 0: none */
    int kept;               /* the verdicts of the families checked now are in the kernel cache */
    double seconds;         /* spent checking and reading verdicts */
} ct_verify_result;

typedef void (*ct_verify_fn)(void *user, ct_context *ctx, const ct_verify_result *result);

/* Verifies the op families `model` (a zoo name or model file; NULL: every
 * family) uses on ctx:
 * each is checked against the host reference on random shapes, both
 * passes, unless (mode CT_VERIFY_AUTO) a verdict for this device, driver,
 * kernel sources and class is in the kernel cache; verdicts of checks run
 * are stored there. CT_OK when every family passes; CT_ERR_CORRUPT when one
 * computes wrong numbers, the context's error naming it, its case, and the
 * ways out. result is filled either way. ct_train does this first. */
CT_API int ct_verify(ct_context *ctx, const char *model, int mode, ct_verify_result *result);

/* The largest ct_train_options.accumulate. */
#define CT_TRAIN_ACCUMULATE_MAX 65536

typedef struct ct_train_options {
    const char *model;       /* zoo name or model file; default "cnn" */
    const char *data;        /* dataset spec; default "fashion-mnist" */
    int epochs;              /* default 5 */
    int batch;               /* default 64; the global batch of one forward and backward
                                (a micro-batch when accumulate > 1) */
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
    int accumulate;          /* gradient accumulation: K micro-batches of `batch` rows per
                                optimizer step, the step of one batch of K * batch rows
                                (batch norm aside: statistics per micro-batch); steps,
                                the schedule, step logs and checkpoints count optimizer
                                steps. 0: 1, or a resumed checkpoint's K. At most CT_TRAIN_ACCUMULATE_MAX */
    int precision;           /* ct_precision of the matrix products' operands (cltrain/context.h:
                                bf16 and fp16 on the CPU class's host GEMM); -1 (the default):
                                fp32, or a resumed checkpoint's. Parameters, gradients and
                                optimizer state stay float32. fp16 scales the loss dynamically
                                (GradScaler's rule: 2^16 at first, halved and the step skipped
                                on an Inf or NaN gradient, doubled after 2,000 clean steps) */
    float loss_scale;        /* fp16: the first loss scale, a power of two in [1, 2^24]; 0:
                                2^16, or a resumed checkpoint's */
    uint64_t seed;           /* default 1 */
    const char *out;         /* checkpoint written after every epoch; NULL: none */
    const char *resume;      /* continue from this checkpoint */
    const char *init;        /* start from this safetensors file's tensors where their names
                                (<layer>.<name>) and shapes are the model's, the rest
                                initialized as usual (fine-tuning; not with resume) */
    const char *freeze;      /* comma-separated layer names (a trailing * matches a prefix)
                                whose parameters are not trained (at least one layer with
                                parameters must stay trainable); NULL: none */
    const char *log;         /* append one JSON line per epoch (and per log_every steps) */
    long log_every;
    const char *tensorboard; /* write a TensorBoard event file into this directory (made if
                                missing); NULL: none. Per epoch every scalar of the epoch
                                report; a directory that cannot be written stops the run
                                before training, a write failing later is a warning through
                                the context's log and the run goes on without events */
    long tensorboard_every;  /* with tensorboard: the training loss and accuracy of the last
                                N steps every N steps (read from the device without
                                blocking); default 10, 0: per epoch only */
    int tensorboard_histograms; /* with tensorboard: a histogram of every parameter tensor
                                   at each epoch's end */
    int loader_threads;      /* threads decoding an image folder's files (each batch, and the
                                normalization statistics' sample); 0: one per core. The
                                batches do not depend on the count */
    size_t train_limit;      /* use only the first N training samples; 0: all */
    size_t test_limit;
    int augment;             /* -1 auto (random crop + flip for cifar10), 0 off, 1 on */
    int dry_run;             /* plan only: report the plan through on_plan, do not train */
    int verify;              /* CT_VERIFY_AUTO (default): before training, check each op family
                                the model uses on each device against the host reference, once
                                per device, driver, kernel sources and class (the verdict is
                                kept in the kernel cache); a family that computes wrong numbers
                                stops the run. CT_VERIFY_ALWAYS checks every run, CT_VERIFY_OFF
                                never. The environment's CLTRAIN_VERIFY=auto|always|off wins */
    /* Callbacks, each given `user`; NULL: not called. The library itself
     * writes nothing to stdout or stderr. Under MPI only rank 0 calls them. */
    ct_epoch_fn on_epoch;    /* after each epoch's evaluation and checkpoint */
    ct_progress_fn on_progress; /* during each epoch's training, after its first step
                                   and then at most every progress_interval seconds;
                                   once more with `finished` at the epoch's end */
    double progress_interval; /* default 0.5; each call reads the device's running
                                 totals back, which waits for the queued steps */
    ct_plan_fn on_plan;      /* the dry run's plan */
    ct_verify_fn on_verify;  /* after each device's verification (not with CT_VERIFY_OFF) */
    void *user;
} ct_train_options;

CT_API void ct_train_defaults(ct_train_options *options);

/* Trains; reports each epoch through options->on_epoch and the progress
 * within it through options->on_progress. With dry_run it plans the model
 * without reading data or allocating device memory, and passes the plan to
 * options->on_plan instead. */
CT_API int ct_train(ct_context *ctx, const ct_train_options *options);

/* Loss and accuracy of a checkpoint on a dataset's test split. The model is
 * the checkpoint's own unless `model` is given (then it must match). For a
 * regression checkpoint the accuracy is NaN (ct_evaluate_metrics has RMSE
 * and MAE). */
CT_API int ct_evaluate(ct_context *ctx, const char *model, const char *weights, const char *data,
                       int batch, size_t limit, double *loss, double *accuracy, size_t *samples);

/* What ct_evaluate_metrics measures. */
typedef struct ct_eval_metrics {
    size_t samples;
    double loss;         /* the model's loss, mean over samples (mse: over target elements) */
    double accuracy;     /* fraction in [0, 1]; NaN for regression */
    int regression;      /* 1: a model ending in mse */
    int targets;         /* regression: targets per sample (K); 0 otherwise */
    double rmse, mae;    /* regression: over all N K target elements; NaN otherwise */
} ct_eval_metrics;

/* ct_evaluate's measurements, and for a regression checkpoint its RMSE
 * and MAE. */
CT_API int ct_evaluate_metrics(ct_context *ctx, const char *model, const char *weights,
                               const char *data, int batch, size_t limit, ct_eval_metrics *out);

/* The predictions for the first samples of a test split, in order. Arrays
 * of `count` rows; classes and probability hold top_k entries per row. */
typedef struct ct_predictions {
    size_t count;        /* samples predicted */
    int top_k;           /* classes per sample: the requested k, at most the model's classes */
    size_t *index;       /* (count) the sample's index in the test split */
    int *label;          /* (count) its label */
    int *classes;        /* (count, top_k) the most probable classes, most probable first */
    double *probability; /* (count, top_k) their softmax probabilities */
    char **class_names;  /* (nclasses) the classes' names when the checkpoint has them
                            (text classifiers), else NULL */
    int nclasses;
    /* regression checkpoints (a model ending in mse): top_k is 0, classes
     * and probability NULL, label -1, and these hold the values */
    int ntargets;        /* K; 0 for classifiers */
    float *predicted;    /* (count, K) the model's predictions */
    float *target;       /* (count, K) the data's targets */
    char **target_names; /* (K) the data's names of the targets */
} ct_predictions;

/* Predicts the top-k classes (a regression model: the values) of the
 * first `count` samples of the data's test split (fewer when the split is
 * smaller) into *out, which the library allocates; free it with
 * ct_predictions_free. *out is emptied first, so on failure it is empty
 * (and freeing it does nothing). */
CT_API int ct_predict(ct_context *ctx, const char *model, const char *weights, const char *data,
                      size_t count, int top_k, ct_predictions *out);

/* Predicts the top-k classes of each of `count` texts with a text
 * classifier's checkpoint (its tokenizer and class names): each text is
 * tokenized as training did, truncated or padded to the model's length.
 * The predictions' index is the text's position and label is -1. */
CT_API int ct_predict_text(ct_context *ctx, const char *weights, const char *const *texts, size_t count,
                           int top_k, ct_predictions *out);

/* The raw outputs of a checkpoint's network for the first samples of a
 * test split, with the input each sample was given: what a runtime fed
 * the same input must reproduce (the ONNX export's check). The outputs are
 * what the loss reads (a softmax_cross_entropy head's logits, before any
 * softmax), batch-first: a language model's are (T, K) per sample, though
 * the net runs time-major. */
typedef struct ct_outputs {
    size_t count;          /* samples */
    size_t *index;         /* (count) each sample's index in the test split */
    int tokens;            /* the input is token ids (ids), not numbers (x) */
    int input_ndim;        /* one sample's input: (C, H, W), (F), or (T) token ids */
    int input_shape[3];
    size_t input_n;        /* its elements */
    float *x;              /* (count, input_n) as the network got them (normalized), or NULL */
    int32_t *ids;          /* (count, input_n) token ids, or NULL */
    int output_ndim;       /* one sample's output: (K), (T, K) for a language model, or
                              (K, H, W) for a model scoring every pixel */
    int output_shape[3];
    size_t output_n;       /* its elements */
    float *y;              /* (count, output_n) */
    size_t label_n;        /* labels per sample: 1, T of language-model data, or H W
                              with a label per pixel */
    int32_t *label;        /* (count, label_n) */
} ct_outputs;

/* Fills *out (emptied first, so on failure it is empty) for the first
 * `count` samples of the data's test split (fewer when it is smaller);
 * free it with ct_outputs_free. */
CT_API int ct_predict_outputs(ct_context *ctx, const char *model, const char *weights, const char *data,
                              size_t count, ct_outputs *out);
CT_API void ct_outputs_free(ct_outputs *outputs);

/* Sampling text from a language model's checkpoint. */
typedef struct ct_generate_options {
    const char *prompt;      /* the text to continue; NULL or "": a newline (byte tokens)
                                or <unk> (word tokens) */
    size_t length;           /* tokens to generate; default 200 */
    float temperature;       /* logits are divided by it; 0: always the most probable
                                token; default 1 */
    int top_k;               /* sample among the k most probable tokens; 0: all */
    uint64_t seed;           /* the same seed gives the same text; default 1 */
    /* each generated token's text as it comes (bytes of byte tokens may be
     * part of a UTF-8 character; words come with a leading space) */
    void (*on_text)(void *user, const char *text, size_t len);
    void *user;
} ct_generate_options;

CT_API void ct_generate_defaults(ct_generate_options *o);
/* Generates o->length tokens after the prompt. The context is the model's
 * sequence length: the last T tokens (prompt and generated) are fed each
 * step, and the next token is drawn from the scores at the last of them;
 * the padding id is never drawn. */
CT_API int ct_generate(ct_context *ctx, const char *weights, const ct_generate_options *o);
/* Frees what ct_predict allocated and empties *predictions; an empty one is
 * left as it is. */
CT_API void ct_predictions_free(ct_predictions *predictions);

#ifdef __cplusplus
}
#endif

#endif /* CLTRAIN_TRAIN_H */
