/*
 * finetune.h - starting from other weights (--init) and training some
 * layers only (--freeze).
 */
#ifndef CT_TRAIN_FINETUNE_H
#define CT_TRAIN_FINETUNE_H

#include "nn/net.h"

/* Overwrites the net's (initialized) parameters and running statistics
 * with the tensors of the safetensors file `path` that have their names
 * (`<layer>.<name>`), dtype F32 and shape; the others keep their
 * initialization. Logs which were loaded and why the rest were not (the
 * context's log, warning level). No tensor matching is an error. */
int ct_finetune_init(ct_net *net, const char *path);

/* The parameters' ranges in the net's parameter arena that --freeze LIST
 * (comma-separated layer names, a trailing * matching a prefix) leaves
 * trainable (*train) and freezes (*frozen), as (offset, count) pairs in
 * malloc'd arrays, and their numbers of pairs. A name matching no layer
 * with parameters is an error. */
int ct_finetune_ranges(const ct_net *net, const char *freeze, size_t **train, size_t *ntrain, size_t **frozen,
                       size_t *nfrozen);

#endif /* CT_TRAIN_FINETUNE_H */
