/*
 * embedding.c - token ids (T*N, int32) -> vectors (T*N, dim): rows of the
 * weight (vocab, dim), as torch.nn.Embedding, initialized N(0, std^2)
 * (std=1 by default, as torch.nn.Embedding; GPT-2 uses 0.02). The
 * backward sums each token's rows without atomics (per-token chains in
 * the shared scratch), so it is deterministic.
 */
#include "nn/layer.h"
#include "ops/embedding.h"

enum { K_VOCAB, K_DIM, K_STD };

static const ct_key_spec keys[] = {
    CT_KEY_INT_("vocab", 1, 0, 1, 1 << 24, "number of token ids"),
    CT_KEY_INT_("dim", 1, 0, 1, 1 << 16, "vector length"),
    CT_KEY_FLOAT_("std", 1, 1e-6, 10, "initialize the weight N(0, std^2)"),
};

typedef struct embedding_state {
    size_t vocab, dim;
} embedding_state;
CT_STATE_FITS(embedding_state);

static int infer(ct_layer *l, const ct_shape *in, int nin, char *err, size_t n)
{
    (void)nin;
    if (!in->tokens)
        return ct_shape_err(err, n, "embedding needs token ids (input tokens=T)", in);
    int dim = (int)l->v[K_DIM];
    ct_set_shape(&l->out, 2, in->d[0], dim, 0);
    l->out.sequence = 1;
    ct_layer_add_param(l, "weight", 1, 2, (int)l->v[K_VOCAB], dim, 0, 0);
    return CT_OK;
}

static int plan(ct_plan *p, const ct_layer *l, ct_lrt *r)
{
    embedding_state *s = CT_LAYER_STATE(r, embedding_state);
    s->vocab = (size_t)l->v[K_VOCAB];
    s->dim = (size_t)l->v[K_DIM];
    ct_plan_scratch(p, (ct_embedding_workspace_size(r->rows) + sizeof(float) - 1) / sizeof(float));
    return CT_OK;
}

static int forward(const ct_layer_call *c)
{
    const embedding_state *s = CT_LAYER_STATE(c->r, embedding_state);
    return ct_embedding_forward(c->ctx, c->r->out, c->r->param, c->x, c->r->rows, s->vocab, s->dim);
}

/* token ids have no gradient: only the weight's */
static int backward(const ct_layer_call *c)
{
    const embedding_state *s = CT_LAYER_STATE(c->r, embedding_state);
    return ct_embedding_backward(c->ctx, c->r->grad, c->dy, c->x, c->net->scratch, c->r->rows, s->vocab, s->dim);
}

static void init(const ct_layer *l, float *params, float *buffers, ct_init_rng *g)
{
    (void)buffers;
    ct_init_normal_fill(params, l->param_count, l->v[K_STD], g);
}

/* Gather of the weight's rows by the (N, T) int64 token ids: (N, T, dim) */
static int export_onnx(const ct_layer_export *e)
{
    return ct_onnx_node(e->g, "Gather", CT_ONNX_NAMES(ct_export_param(e, 0), e->x), CT_ONNX_NAMES(e->y),
                        CT_ONNX_ATTRS(CT_ONNX_INT("axis", 0)));
}

CT_LAYER_TYPE(embedding, CT_KEYS(keys), .min_inputs = 1, .max_inputs = 1, .flags = CT_LAYER_ACT16,
              .infer = infer, .init = init, .plan = plan, .forward = forward, .backward = backward,
              .export_onnx = export_onnx);
