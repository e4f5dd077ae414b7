/*
 * mse.c - the mean squared error between the input and targets of its
 * shape, over all elements. The targets are floats in the batch slot after
 * the input (net->labels), as the loader gives regression data; the mean
 * absolute error goes to net->correct, for the reports of regression
 * training.
 */
#include "nn/layer.h"
#include "ops/loss.h"

static int infer(ct_layer *l, const ct_shape *in, int nin, char *err, size_t n)
{
    (void)nin;
    int st = ct_need_floats(in, err, n, "mse");
    if (st)
        return st;
    ct_set_shape(&l->out, 1, 1, 0, 0);
    return CT_OK;
}

static int plan(ct_plan *p, const ct_layer *l, ct_lrt *r)
{
    (void)r;
    ct_net *net = ct_plan_net(p);
    ct_plan_labels(p, net->rt[l->inputs[0]].out_n, 1);
    return CT_OK;
}

static int forward(const ct_layer_call *c)
{
    return ct_mse_forward(c->ctx, c->net->loss, c->net->correct, c->x, c->net->labels, c->in->out_n);
}

static int backward(const ct_layer_call *c)
{
    return ct_mse_backward(c->ctx, c->dx, ct_none(), c->x, c->net->labels, c->in->out_n, c->net->loss_scale);
}

/* The graph's output "output": the values the loss compares with its
 * targets, in their shape */
static int export_onnx(const ct_layer_export *e)
{
    int64_t dims[4];
    int n = ct_export_dims(e->in, dims);
    ct_onnx_unary(e->g, "Identity", e->x, "output");
    return ct_onnx_output(e->g, "output", CT_ONNX_FLOAT, n, dims);
}

CT_LAYER_TYPE(mse, .min_inputs = 1, .max_inputs = 1, .flags = CT_LAYER_LOSS, .infer = infer,
              .plan = plan, .forward = forward, .backward = backward, .export_onnx = export_onnx);
