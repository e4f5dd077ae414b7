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
} ct_session;

void ct_session_free(ct_session *s);
/* The model: given by name/path, or the checkpoint's own (weights, which
 * is then read into s->ckpt); when both, they must agree. */
int ct_session_open_model(ct_session *s, const char *model, const char *weights);
/* The dataset must fit the model's input and its classes the model's output. */
int ct_session_check_data(ct_session *s, const ct_dataset *ds);
/* Keeps the first n samples (0: all). */
void ct_session_limit(ct_dataset *ds, size_t n);
/* Uploads a batch into the net's input and label slots. */
int ct_session_upload(ct_session *s, const ct_batch *b);
/* The run-time record of the layer the loss reads: the logits. */
const ct_lrt *ct_session_logits(const ct_net *net);
/* Loss and accuracy of a split, computed on the host from logits so a
 * partial last batch counts exactly; *count (may be NULL): samples. */
int ct_session_evaluate(ct_session *s, ct_dataset *ds, double *loss, double *acc, size_t *count);

#endif /* CT_TRAIN_SESSION_H */
