/*
 * optim.c - golden adapter for the optimizers (opt_*.safetensors, op
 * "optimizer"): `param_in`, then `grad_s` applied at step s + 1 giving
 * `param_s`, s = 0 .. steps-1, with constant lr. Metadata: kind (sgd, adam,
 * adamw), lr, momentum, nesterov, weight_decay, beta1, beta2, eps, steps;
 * PyTorch's defaults where absent (dampening is always PyTorch's 0).
 *
 * Both the reference and the device keep their state across the steps and
 * are compared after each. Tolerance 1e-6 + 1e-5 |b|: PyTorch, like the
 * kernel, rounds ~6 times a step on magnitudes <= |p| (<= 2.5 here; the
 * updates are lr-sized), so after 3 steps the float results differ from the
 * exact ones by <= ~18 u |p| ~ 1.1e-6 |p| (u = 2^-24); the scalars PyTorch
 * keeps in double (lr, betas) differ from our float ones by < u relative.
 */
#include <stdio.h>
#include <string.h>

#include "golden.h"
#include "ref/optim.h"

void golden_optim(golden *g)
{
    ct_context *ctx = golden_ctx(g);
    const char *kind = golden_meta(g, "kind");
    ct_optim_desc d;
    if (!kind || (strcmp(kind, "sgd") && strcmp(kind, "adam") && strcmp(kind, "adamw"))) {
        golden_failf(g, "metadata kind '%s' is none of sgd, adam, adamw", kind ? kind : "(none)");
        return;
    }
    ct_optim_defaults(&d, !strcmp(kind, "sgd") ? CT_OPT_SGD : !strcmp(kind, "adam") ? CT_OPT_ADAM
                                                                                   : CT_OPT_ADAMW);
    double lr = golden_meta_double(g, "lr", d.lr);
    d.lr = (float)lr;
    d.momentum = (float)golden_meta_double(g, "momentum", 0);
    d.nesterov = golden_meta_bool(g, "nesterov", 0);
    d.weight_decay = (float)golden_meta_double(g, "weight_decay", d.weight_decay);
    d.beta1 = (float)golden_meta_double(g, "beta1", d.beta1);
    d.beta2 = (float)golden_meta_double(g, "beta2", d.beta2);
    d.eps = (float)golden_meta_double(g, "eps", d.eps);
    int steps = golden_meta_int(g, "steps", 0);
    if (golden_status(g, ct_optim_validate(ctx, &d), "optimizer description"))
        return;
    if (steps < 1) {
        golden_failf(g, "metadata steps=%d: nothing to check", steps);
        return;
    }
    size_t n = 0;
    double *p_in = golden_tensor(g, "param_in", &n, NULL, NULL);
    if (!p_in)
        return;
    size_t ns = ct_optim_state_size(&d, n);
    double *p = golden_host(g, n), *state = golden_host(g, ns ? ns : 1);
    memcpy(p, p_in, n * sizeof *p);
    ct_buf d_p = golden_dev(g, p_in, n);
    ct_buf d_state = ns ? golden_dev_zero(g, ns) : (ct_buf){ NULL, 0 };
    for (int s = 0; s < steps; s++) {
        char gname[32], pname[32];
        snprintf(gname, sizeof gname, "grad_%d", s);
        snprintf(pname, sizeof pname, "param_%d", s);
        size_t ng = 0;
        double *grad = golden_tensor(g, gname, &ng, NULL, NULL);
        if (!grad)
            return;
        if (ng != n) {
            golden_failf(g, "%s has %zu elements, param_in %zu", gname, ng, n);
            return;
        }
        ct_ref_optim_step(&d, p, grad, state, n, s + 1, lr);
        golden_expect_host(g, pname, p, pname, 1e-6, 1e-5);
        ct_buf d_g = golden_dev(g, grad, n);
        if (golden_status(g, ct_optim_step(ctx, &d, d_p, d_g, d_state, n, s + 1, (float)lr),
                          "optimizer step"))
            break;
        golden_expect_dev(g, pname, d_p, pname, 1e-6, 1e-5);
    }
    /* the reads above were blocking; a failed launch may still be queued */
    ct_context_finish(ctx);
}
