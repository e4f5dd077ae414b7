/*
 * bce_logits.c - binary cross-entropy on logits for multi-label targets,
 * as torch.nn.BCEWithLogitsLoss: the input's K values per sample are the
 * logits of K independent labels, the targets (floats in [0, 1], the batch
 * slot after the input, net->labels, as the loader gives float targets)
 * are K per sample; the loss is the mean over all of them. net->correct
 * gets each sample's share of labels right ((x > 0) == (t > 0.5)), so the
 * reports' accuracy is the fraction of labels right.
 */
#include "nn/layer.h"
#include "ops/loss.h"

static int infer(ct_layer *l, const ct_shape *in, int nin, char *err, size_t n)
{
    (void)nin;
    int st = ct_need_floats(in, err, n, "bce_logits");
    if (st)
        return st;
    if (in->sequence)
        return ct_shape_err(err, n, "bce_logits takes K logits per sample, not a sequence:", in);
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
    return ct_bce_forward(c->ctx, c->net->loss, c->net->correct, c->x, c->net->labels, c->in->out_n,
                          c->in->out_n / c->in->rows);
}

static int backward(const ct_layer_call *c)
{
    return ct_bce_backward(c->ctx, c->dx, ct_none(), c->x, c->net->labels, c->in->out_n, c->net->loss_scale);
}

/* outputs "logits" and "probabilities" (each label's Sigmoid) */
static int export_onnx(const ct_layer_export *e)
{
    int64_t dims[4];
    int n = ct_export_dims(e->in, dims);
    ct_onnx_unary(e->g, "Identity", e->x, "logits");
    ct_onnx_unary(e->g, "Sigmoid", e->x, "probabilities");
    ct_onnx_output(e->g, "logits", CT_ONNX_FLOAT, n, dims);
    return ct_onnx_output(e->g, "probabilities", CT_ONNX_FLOAT, n, dims);
}

CT_LAYER_TYPE(bce_logits, .min_inputs = 1, .max_inputs = 1, .flags = CT_LAYER_LOSS, .infer = infer, .plan = plan,
              .forward = forward, .backward = backward, .export_onnx = export_onnx);
