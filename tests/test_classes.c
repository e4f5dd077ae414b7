/*
 * test_classes [--device SEL] [MODEL...] - one training step of each zoo
 * family (mlp, cnn, a ResNet, lstm), of a sequence classifier (tokens,
 * embedding, lstm, seqpool, dense; token id 0 is padding, 1 in 16 of the
 * random ids), of a 2-layer GRU scoring every token (embedding, gru,
 * dense) and of a causal attention model scoring every token
 * (embedding, attention heads=4, dense) through the CPU class and
 * through the GPU class (src/cl/devclass.c) on the same device, from the same parameters and
 * batch: the loss and every parameter gradient must agree.
 * The case posembed is a per-token model: embedding, posembed,
 * layernorm, dense with gelu, dense over 64 token ids.
 * (MODEL may also be a model file, run at batch 4.)
 *
 * The forward passes are compared by the loss. The backward passes are
 * compared from the same forward state (the CPU class's forward, then each
 * class's backward): a ReLU's derivative jumps at 0, and an input within
 * rounding of 0 can take the other side in the other class's forward
 * (seen in ResNet-56 with another batch: two of 32768 inputs of one ReLU
 * flipped, and every gradient below moved by ~0.4%), which says nothing about the kernels.
 * The full step in the GPU class is reported beside it, and each class
 * must repeat its own step bit for bit.
 *
 * The two classes run different code for the same mathematics: the host
 * BLAS against CLBlast, per-row kernels against work-group tree reductions,
 * the direct host convolution against im2col, bias-and-activation apart
 * against fused. Only the float summation order differs. Tolerances:
 * - loss: 1e-5 relative. A mean of N cross-entropies, each from K logits
 *   that went through a few summations of length <= 4096 in float32
 *   (unit roundoff 6e-8, error growing ~ sqrt(length) for random signs):
 *   a few 1e-7 in the worst case; measured <= 6.5e-8.
 * - gradients, per parameter tensor: ||g_cpu - g_gpu|| <= 1e-4 ||g_cpu||
 *   (+1e-7 absolute per element for tensors whose gradient is ~0, e.g.
 *   the bias before a batch norm). Backward passes chain 2 summation
 *   orders per layer through up to 56 layers of ResNet-56 (measured
 *   2.1e-6 there, 1.2e-6 for cnn, 2.1e-7 for mlp and lstm). A wrong variant
 *   (a missed row, an unscaled term, a dropped bias) moves a gradient by
 *   1e-2 relative or more.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cltrain/cltrain.h"
#include "nn/layer.h"

#define LOSS_TOL 1e-5
#define GRAD_TOL 1e-4
#define WHOLE_TOL 1e-2

typedef struct result {
    float loss;
    float *grads; /* (nparams) */
    float **douts; /* per layer: its output gradient as its backward began (or NULL) */
} result;

/* net->probe: keeps a copy of layer i's complete output gradient */
static int keep_dout(void *user, ct_net *net, size_t i)
{
    result *r = user;
    const ct_lrt *l = &net->rt[i];
    if (!l->needs_dout || !l->dout.mem || !l->out_n)
        return CT_OK;
    r->douts[i] = malloc(l->out_n * sizeof(float));
    if (!r->douts[i])
        return CT_OK; /* the comparison goes without it */
    return ct_buffer_read(net->ctx, l->dout.mem, l->dout.off * sizeof(float), l->out_n * sizeof(float),
                          r->douts[i]);
}

static void free_douts(result *r, size_t count)
{
    for (size_t i = 0; r->douts && i < count; i++)
        free(r->douts[i]);
    free(r->douts);
    r->douts = NULL;
}

/* zero-grad, the forward in class kf and the backward in class kb of one
 * batch; reads back the loss and the gradients */
static int one_step(ct_net *net, ct_kernels kf, ct_kernels kb, const float *x, const int32_t *y,
                    result *r)
{
    ct_context *ctx = net->ctx;
    size_t nin = net->rt[0].out_n, nlab = ct_net_label_elems(net);
    int st;
    if ((st = ct_context_set_kernels(ctx, kf)) || (st = ct_net_init_params(net, 5)) ||
        (st = ct_buffer_write(ctx, net->slot[0], 0, nin * sizeof(float), x)) ||
        (st = ct_buffer_write(ctx, net->slot[0], net->slot_label_off * sizeof(float),
                              nlab * sizeof(int32_t), y)))
        return st;
    ct_net_use_slot(net, 0);
    r->douts = calloc(net->model->count, sizeof *r->douts);
    net->probe = r->douts ? keep_dout : NULL;
    net->probe_user = r;
    if ((st = ct_net_zero_grads(net)) || (st = ct_net_forward(net, 1, 11, 1)) ||
        (st = ct_context_set_kernels(ctx, kb)) || (st = ct_net_backward(net, 11, 1)) ||
        (st = ct_buffer_read(ctx, net->loss.mem, net->loss.off * sizeof(float), sizeof r->loss, &r->loss)))
        return st;
    net->probe = NULL;
    return ct_buffer_read(ctx, net->arena[CT_ARENA_GRADS].mem, 0, net->nparams * sizeof(float), r->grads);
}

/* L2 distance of b from a, relative to a's norm */
static double rel_l2(const float *a, const float *b, size_t n)
{
    double num = 0, den = 0;
    for (size_t e = 0; e < n; e++) {
        double x = a[e], y = b[e];
        num += (x - y) * (x - y);
        den += x * x;
    }
    return sqrt(num) / (sqrt(den) + 1e-7 * sqrt((double)n));
}

/* c: the CPU class's step; g: the GPU class's backward from c's forward;
 * full: the GPU class's whole step (its loss is compared) */
static int compare(const ct_net *net, const char *model, const result *c, const result *g,
                   const result *full)
{
    int bad = 0;
    double dl = fabs((double)c->loss - full->loss) / fmax(fabs((double)c->loss), 1e-30);
    if (!(dl <= LOSS_TOL)) {
        printf("FAIL %s: loss %.9g (cpu class) vs %.9g (gpu class), %.3g relative > %g\n", model,
               (double)c->loss, (double)full->loss, dl, LOSS_TOL);
        bad = 1;
    }
    double worst = 0;
    const char *worst_at = "";
    const ct_model *m = net->model;
    for (size_t i = 0; i < m->count; i++) {
        const ct_lrt *r = &net->rt[i];
        size_t off = r->grad.off, n = 0;
        for (int p = 0; p < m->layers[i].nparams; p++) {
            if (!m->layers[i].params[p].trainable)
                continue;
            size_t len = 1;
            for (int d = 0; d < m->layers[i].params[p].ndim; d++)
                len *= (size_t)m->layers[i].params[p].shape[d];
            double rel = rel_l2(c->grads + off + n, g->grads + off + n, len);
            if (rel > worst) {
                worst = rel;
                worst_at = m->layers[i].name;
            }
            if (!(rel <= GRAD_TOL)) {
                printf("FAIL %s: gradient of %s.%s differs by %.3g relative (L2) > %g\n", model,
                       m->layers[i].name, m->layers[i].params[p].suffix, rel, GRAD_TOL);
                bad = 1;
            }
            n += len;
        }
    }
    if (bad) {
        /* where it starts: the first layer, in backward order, whose output
         * gradient already differs */
        for (size_t i = m->count; i-- > 0;) {
            if (!c->douts || !g->douts || !c->douts[i] || !g->douts[i])
                continue;
            double rel = rel_l2(c->douts[i], g->douts[i], net->rt[i].out_n);
            if (rel > GRAD_TOL) {
                printf("     the output gradient of layer '%s' (%s) is the first to differ: %.3g "
                       "relative; its readers' backward passes disagree\n", m->layers[i].name,
                       m->layers[i].type->name, rel);
                break;
            }
        }
    }
    /* whole steps, each class's own forward: they may differ where a ReLU
     * input lies within rounding of 0 (3e-3 measured on resnet56; see the
     * top of the file), but not by a wrong fused path (gelu's bias left out
     * of its pre-activation gave 8e-2) */
    double whole = rel_l2(c->grads, full->grads, net->nparams);
    if (!(whole <= WHOLE_TOL)) {
        printf("FAIL %s: whole steps' gradients differ by %.3g relative (L2) > %g\n", model, whole, WHOLE_TOL);
        bad = 1;
    }
    printf("%s %-9s loss %.7f (cpu class) %.7f (gpu class), relative %.2g; backward from the same "
           "forward: worst gradient %.2g relative (%s), %zu values; whole steps: %.2g\n",
           bad ? "FAIL" : "ok  ", model, (double)c->loss, (double)full->loss, dl, worst, worst_at,
           net->nparams, whole);
    return bad;
}

/* text: the model's text, or NULL for a zoo name or model file */
static int run_model(ct_context *ctx, const char *name, const char *text, int batch)
{
    ct_model *m = NULL;
    ct_net net;
    memset(&net, 0, sizeof net);
    enum { CPU, GPU_BWD, GPU, CPU2, GPU2, RUNS };
    static const ct_kernels fwd[RUNS] = { CT_KERNELS_CPU, CT_KERNELS_CPU, CT_KERNELS_GPU,
                                          CT_KERNELS_CPU, CT_KERNELS_GPU };
    static const ct_kernels bwd[RUNS] = { CT_KERNELS_CPU, CT_KERNELS_GPU, CT_KERNELS_GPU,
                                          CT_KERNELS_CPU, CT_KERNELS_GPU };
    result r[RUNS];
    memset(r, 0, sizeof r);
    float *x = NULL;
    int32_t *y = NULL;
    int planned = 0, bad = 1;
    int st = text ? ct_model_from_text(text, name, &m) : ct_model_open(name, &m);
    if (!st && !(st = ct_net_plan(ctx, m, batch, &net)))
        planned = 1;
    if (!st)
        st = ct_net_alloc(&net);
    if (st) {
        printf("FAIL %s: %s\n", name, ct_context_last_error(ctx)[0] ? ct_context_last_error(ctx) : ct_last_error());
        goto done;
    }
    x = malloc(net.rt[0].out_n * sizeof *x);
    y = malloc(ct_net_label_elems(&net) * sizeof *y);
    int got = x && y;
    for (int k = 0; k < RUNS; k++)
        got &= (r[k].grads = malloc(net.nparams * sizeof(float))) != NULL;
    if (!got) {
        printf("FAIL %s: out of host memory\n", name);
        goto done;
    }
    ct_net_random_batch(&net, 3, x, y);
    for (int k = 0; k < RUNS; k++)
        if ((st = one_step(&net, fwd[k], bwd[k], x, y, &r[k]))) {
            printf("FAIL %s: %s\n", name, ct_context_last_error(ctx));
            goto done;
        }
    bad = compare(&net, name, &r[CPU], &r[GPU_BWD], &r[GPU]);
    /* each class is deterministic: run again after the other class ran on
     * the same buffers, it gives the same bits (a kernel reading memory it
     * did not write would not) */
    for (int k = 0; k < 2; k++) {
        const result *a = &r[k ? GPU : CPU], *b = &r[k ? GPU2 : CPU2];
        if (a->loss != b->loss || memcmp(a->grads, b->grads, net.nparams * sizeof(float))) {
            size_t at = 0;
            while (at < net.nparams && a->grads[at] == b->grads[at])
                at++;
            printf("FAIL %s: the %s class twice: loss %.9g vs %.9g, first gradient difference at %zu\n",
                   name, k ? "GPU" : "CPU", (double)a->loss, (double)b->loss, at);
            bad = 1;
        }
    }
done:
    free(x);
    free(y);
    for (int k = 0; k < RUNS; k++) {
        free(r[k].grads);
        free_douts(&r[k], m ? m->count : 0);
    }
    if (planned)
        ct_net_release(&net);
    ct_model_free(&m);
    return bad;
}

int main(int argc, char **argv)
{
    const char *device = NULL;
    static const char seqpool_text[] = "input tokens=16\n"
                                       "embedding vocab=16 dim=8\n"
                                       "lstm hidden=12\n"
                                       "seqpool mode=mean\n"
                                       "dense out=4\n"
                                       "softmax_cross_entropy\n";
    static const char gru_text[] = "input tokens=16\n"
                                   "embedding vocab=64 dim=8\n"
                                   "gru hidden=12 layers=2\n"
                                   "dense out=64\n"
                                   "softmax_cross_entropy\n";
    static const char attention_text[] = "input tokens=16\n"
                                         "embedding vocab=64 dim=24\n"
                                         "attention heads=4\n"
                                         "dense out=64\n"
                                         "softmax_cross_entropy\n";
    static const char posembed_text[] = "input tokens=16\n"
                                        "embedding vocab=64 dim=24\n"
                                        "posembed max_len=32\n"
                                        "layernorm\n"
                                        "dense out=24 act=gelu\n"
                                        "dense out=64\n"
                                        "softmax_cross_entropy\n";
    static const struct {
        const char *model, *text;
        int batch;
    } all[] = { { "mlp", NULL, 32 }, { "cnn", NULL, 16 }, { "resnet56", NULL, 4 }, { "lstm", NULL, 4 },
                { "seqpool", seqpool_text, 8 }, { "gru", gru_text, 8 }, { "attention", attention_text, 8 },
                { "posembed", posembed_text, 8 } };
    const char *pick[8];
    int npick = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--device") && i + 1 < argc)
            device = argv[++i];
        else if (npick < 8)
            pick[npick++] = argv[i];
    }
    ct_context_options o;
    ct_context_defaults(&o);
    o.device = device;
    o.lazy_kernels = 1;
    ct_context *ctx = NULL;
    if (ct_context_create(&o, &ctx)) {
        fprintf(stderr, "test_classes: %s\n", ct_last_error());
        return 1;
    }
    int bad = 0;
    for (int k = 0; k < npick; k++)
        if (strchr(pick[k], '/'))
            bad += run_model(ctx, pick[k], NULL, 4); /* a model file */
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        int want = !npick;
        for (int k = 0; k < npick; k++)
            want |= !strcmp(pick[k], all[i].model);
        if (want)
            bad += run_model(ctx, all[i].model, all[i].text, all[i].batch);
    }
    ct_context_free(&ctx);
    printf("%s\n", bad ? "FAILED" : "the CPU and GPU classes agree");
    return bad ? 1 : 0;
}
