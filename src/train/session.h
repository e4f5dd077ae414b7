/*
 * session.h - what training, evaluation and prediction share: a model (by
 * name, file or a checkpoint's own), its net on one device, the datasets,
 * and the evaluation of a split.
 */
#ifndef CT_TRAIN_SESSION_H
#define CT_TRAIN_SESSION_H

#include <stddef.h>

#include "data/dataset.h"
#include "data/loader.h"
#include "io/safetensors.h"
#include "nn/net.h"

typedef struct ct_session {
    ct_context *ctx;
    ct_model *model;
    ct_net net;
    int planned;
    ct_dataset *train, *test;
    ct_st_file *ckpt;
    int threads;      /* decoding threads (image folders): the statistics' sample and the
                         evaluation loaders'; 0: one */
    long norm_images; /* images ct_session_train_norm decoded for an image folder's
                         statistics; -1: none */
} ct_session;

void ct_session_free(ct_session *s);
/* The model: given by name/path, or the checkpoint's own (weights, which
 * is then read into s->ckpt); when both, they must agree. */
int ct_session_open_model(ct_session *s, const char *model, const char *weights);
/* Opens a split of `spec` for the model in s->model: image folders
 * convert and resize to its input (C, H, W), and open without their
 * normalization statistics (ct_session_train_norm). */
int ct_session_open_data(ct_session *s, const char *spec, int split, const ct_text_options *o,
                         ct_dataset **out);
/* Normalization by the training split (image folders, csv
 * normalize=standard): its mean and std, computed after --limit (an image
 * folder's from its stats= sample, decoded on s->threads threads, 0: one
 * per core; s->norm_images says how many decoded, else -1), set on both
 * splits. A run resuming `resume` (NULL: none) whose checkpoint kept a
 * "normalize" takes that instead, computing nothing. Other datasets keep
 * their own constants. */
int ct_session_train_norm(ct_session *s, const char *resume);
/* Decoding threads: the option (> 0), else one per core. */
int ct_session_threads(int option);
/* An image folder with bad=skip: the training files the loader skipped so
 * far this epoch, and at the epoch's end (epoch >= 1) a warning quoting
 * the first; -1 for other data. */
long ct_session_skipped(const ct_session *s, const ct_loader *ld, int epoch);
/* What a checkpoint keeps of the normalization, {"mean":[...],"std":[...]}
 * (one entry per channel; malloc'd; NULL for text or out of memory), and
 * its application to a dataset opened for evaluation or prediction, so a
 * test split is normalized as the training split was. No "normalize" in
 * the checkpoint (one written before it was kept): the dataset's own. */
char *ct_session_norm_json(const ct_dataset *ds);
int ct_session_apply_norm(ct_session *s, const char *weights, ct_dataset *ds);
/* The dataset must fit the model's input and its classes the model's
 * output; a model ending in mse takes regression targets (as many per
 * sample as it predicts), a classifier class labels. */
int ct_session_check_data(ct_session *s, const ct_dataset *ds);
/* 1 when the model ends in mse: regression on float targets. */
int ct_session_regression(const ct_model *m);
/* Whether the model ends in bce_logits: multi-label float targets, reported
 * as a loss and the fraction of labels right. */
int ct_session_multilabel(const ct_model *m);
/* Keeps the first n samples (0: all). */
void ct_session_limit(ct_dataset *ds, size_t n);
/* Bytes of a batch's input (row_elems floats per sample, or a text
 * batch's (T, N) token ids) and of the labels the net reads (one per
 * sample, or one per token of a language model's (T, N) block). */
size_t ct_batch_input_bytes(const ct_batch *b, size_t row_elems);
size_t ct_batch_label_bytes(const ct_batch *b, const ct_net *net);
/* The labels (or regression targets) of a batch from row row0 on. */
const void *ct_batch_labels(const ct_batch *b, size_t row0);
/* Uploads a batch into the net's input and label slots. */
int ct_session_upload(ct_session *s, const ct_batch *b);
/* The run-time record of the layer the loss reads: the logits. */
const ct_lrt *ct_session_logits(const ct_net *net);
/* A loader over ds for inference: batches of `batch` in the dataset's
 * order, its first epoch started. On failure *out is NULL and the context
 * holds the message. */
int ct_session_loader(ct_session *s, ct_dataset *ds, size_t batch, ct_loader **out);
/* The loader's next batch through the net for inference, then rt's output
 * read into dst: per_sample floats for each of the batch's samples, or (0)
 * the whole tensor. b->n is 0 at the end of the data. */
int ct_session_forward_next(ct_session *s, ct_loader *ld, const ct_lrt *rt, size_t per_sample,
                            float *dst, ct_batch *b);
/* Loss and accuracy of a split, computed on the host from logits so a
 * partial last batch counts exactly: per sample, or per token of
 * language-model data; *count (may be NULL): samples or tokens. */
int ct_session_evaluate(ct_session *s, ct_dataset *ds, double *loss, double *acc, size_t *count);
/* The same for regression: the mean squared error (the mse loss) and the
 * mean absolute error over every target element, in double from the
 * predictions; *count (may be NULL): samples. */
int ct_session_evaluate_targets(ct_session *s, ct_dataset *ds, double *mse, double *mae, size_t *count);

/* What a checkpoint keeps of a text dataset: its tokenizer and its class
 * names as JSON (malloc'd; NULL when it has none or out of memory). */
char *ct_session_tokens_json(const ct_dataset *ds);
char *ct_session_classes_json(const ct_dataset *ds);
/* The tokenizer and class names of the checkpoint in s->ckpt (read from
 * `weights`) as options for ct_dataset_open_text; *tok and *names are
 * the caller's to release with ct_session_text_free (o->nclasses names). */
int ct_session_text_options(ct_session *s, const char *weights, ct_text_options *o, ct_tokenizer **tok,
                            char ***names);
void ct_session_text_free(ct_tokenizer **tok, char ***names, int n);

/* A text model from its checkpoint alone: the model, its tokenizer and
 * class names (released with ct_session_text_free), and its net planned
 * at `batch` with the weights loaded. lm: it must be a language model
 * (scores per token), else a classifier (scores per text). */
int ct_session_open_text_checkpoint(ct_session *s, const char *weights, int batch, int lm, ct_tokenizer **tok,
                                    char ***names, int *nnames);

#endif /* CT_TRAIN_SESSION_H */
