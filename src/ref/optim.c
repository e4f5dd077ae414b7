/*
 * optim.c - reference optimizer steps (torch.optim.SGD, Adam, AdamW) and
 * clip_grad_norm_, in double.
 */
#include <math.h>

#include "ref/optim.h"

static void ref_sgd(const ct_optim_desc *d, double *p, const double *grad, double *b, size_t n,
                    long step, double lr)
{
    double wd = d->weight_decay, mu = d->momentum, damp = d->dampening;
    for (size_t i = 0; i < n; i++) {
        double g = grad[i];
        if (wd != 0)
            g += wd * p[i];
        if (mu != 0) {
            b[i] = step == 1 ? g : mu * b[i] + (1 - damp) * g;
            g = d->nesterov ? g + mu * b[i] : b[i];
        }
        p[i] -= lr * g;
    }
}

static void ref_adam(const ct_optim_desc *d, double *p, const double *grad, double *state,
                     size_t n, long step, double lr)
{
    double b1 = d->beta1, b2 = d->beta2, eps = d->eps, wd = d->weight_decay;
    int adamw = d->kind == CT_OPT_ADAMW;
    double step_size = lr / (1 - pow(b1, (double)step));
    double bc2_sqrt = sqrt(1 - pow(b2, (double)step));
    double *m = state, *v = state + n;
    for (size_t i = 0; i < n; i++) {
        double g = grad[i];
        if (adamw)
            p[i] *= 1 - lr * wd;
        else
            g += wd * p[i];
        m[i] = (step == 1 ? 0 : b1 * m[i]) + (1 - b1) * g;
        v[i] = (step == 1 ? 0 : b2 * v[i]) + (1 - b2) * g * g;
        p[i] -= step_size * m[i] / (sqrt(v[i]) / bc2_sqrt + eps);
    }
}

void ct_ref_optim_step(const ct_optim_desc *d, double *p, const double *g, double *state,
                       size_t n, long step, double lr)
{
    if (d->kind == CT_OPT_SGD)
        ref_sgd(d, p, g, state, n, step, lr);
    else
        ref_adam(d, p, g, state, n, step, lr);
}

double ct_ref_grad_norm(const double *g, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += g[i] * g[i];
    return sqrt(s);
}

void ct_ref_grad_clip(double *g, size_t n, double norm, double max_norm)
{
    double coef = max_norm / (norm + 1e-6);
    if (coef > 1)
        coef = 1;
    for (size_t i = 0; i < n; i++)
        g[i] *= coef;
}
