/*
 * optim.h - reference optimizer steps and gradient clipping, in double,
 * with the semantics of src/optim/optim.h.
 */
#ifndef CT_REF_OPTIM_H
#define CT_REF_OPTIM_H

#include "optim/optim.h"
#include "ref/ref.h"

/* One step (1-based `step`, this step's `lr`); at step 1 the state is
 * written, not read. p: (n), g: (n), state: (ct_optim_state_size(d, n)). */
void ct_ref_optim_step(const ct_optim_desc *d, double *p, const double *g, double *state,
                       size_t n, long step, double lr);

/* sqrt(sum g^2). g: (n) */
double ct_ref_grad_norm(const double *g, size_t n);

/* g *= min(1, max_norm / (norm + 1e-6)). g: (n) */
void ct_ref_grad_clip(double *g, size_t n, double norm, double max_norm);

#endif /* CT_REF_OPTIM_H */
