/*
 * gru.h - reference multi-layer GRU (same layouts and contract as
 * src/ops/gru.h; the backward recomputes the forward itself, so it needs
 * no workspace). Return CT_OK, or CT_ERR_NO_MEMORY.
 */
#ifndef CT_REF_GRU_H
#define CT_REF_GRU_H

#include "ops/gru.h"
#include "ref/ref.h"

/* y (T, N, H); h_n (layers, N, H) or NULL; x (T, N, input);
 * params flat (ct_gru_offsets) */
int ct_ref_gru_forward(const ct_gru_desc *d, double *y, double *h_n, const double *x,
                       const double *params);
/* dx (T, N, input) =, dparams (flat) +=, dy (T, N, H) */
int ct_ref_gru_backward(const ct_gru_desc *d, double *dx, double *dparams, const double *dy,
                        const double *x, const double *params);

#endif /* CT_REF_GRU_H */
