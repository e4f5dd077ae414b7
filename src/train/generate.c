/*
 * generate.c - sampling text from a language model's checkpoint.
 *
 * The net is planned at batch 1 for the model's sequence length T. Each
 * step feeds the last T tokens (fewer at the start, then the window
 * slides; the positions after them hold the padding id, which the causal
 * model does not look back at), reads the scores at the last fed position,
 * and draws the next token from softmax(scores / temperature) over the
 * top-k tokens of the vocabulary, never the padding id. The host draws
 * with its own seeded generator, so a seed gives the same text on any
 * device that computes the same scores.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cltrain/train.h"
#include "train/session.h"

void ct_generate_defaults(ct_generate_options *o)
{
    memset(o, 0, sizeof *o);
    o->length = 200;
    o->temperature = 1.0f;
    o->seed = 1;
}

/* splitmix64: uniform in [0, 1) */
static double next_uniform(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) / 9007199254740992.0;
}

/* The next token from scores z over ids [1, V): greedy at temperature 0,
 * else drawn from the softmax of the top-k (all when k is 0) scores / temp.
 * order: V ints of workspace. */
static int32_t draw(const float *z, size_t V, float temp, int top_k, uint64_t *rng, int32_t *order,
                    double *p)
{
    size_t n = 0;
    for (size_t v = 1; v < V; v++)
        order[n++] = (int32_t)v;
    size_t k = top_k > 0 && (size_t)top_k < n ? (size_t)top_k : n;
    /* the k best to the front (selection: k is small, or all when 0) */
    for (size_t i = 0; i < k && k < n; i++) {
        size_t best = i;
        for (size_t j = i + 1; j < n; j++)
            if (z[order[j]] > z[order[best]])
                best = j;
        int32_t t = order[i];
        order[i] = order[best];
        order[best] = t;
    }
    size_t argmax = 0;
    for (size_t i = 1; i < k; i++)
        if (z[order[i]] > z[order[argmax]])
            argmax = i;
    if (temp <= 0)
        return order[argmax];
    double mx = z[order[argmax]], sum = 0;
    for (size_t i = 0; i < k; i++)
        sum += p[i] = exp(((double)z[order[i]] - mx) / temp);
    double u = next_uniform(rng) * sum;
    for (size_t i = 0; i < k; i++) {
        if (u < p[i])
            return order[i];
        u -= p[i];
    }
    return order[argmax]; /* u rounded past the end */
}

int ct_generate(ct_context *ctx, const char *weights, const ct_generate_options *o)
{
    CT_VALIDATE(ctx, ctx && weights && o && o->length <= (1u << 24) && o->temperature >= 0 &&
                         o->temperature <= 100 && o->top_k >= 0);
    ct_session s;
    memset(&s, 0, sizeof s);
    s.ctx = ctx;
    ct_tokenizer *tok = NULL;
    char **names = NULL;
    int nnames = 0;
    int32_t *ctxt = NULL, *win = NULL, *order = NULL;
    float *z = NULL;
    double *p = NULL;
    int st = ct_session_open_text_checkpoint(&s, weights, 1, 1, &tok, &names, &nnames);
    if (st)
        goto done;
    const ct_lrt *lg = ct_session_logits(&s.net);
    size_t T = (size_t)s.model->layers[0].out.d[0], K = lg->out_n / T, V = ct_tokenizer_size(tok);
    const char *prompt = o->prompt && o->prompt[0] ? o->prompt : NULL;
    size_t plen = prompt ? strlen(prompt) : 0, cap = (plen ? plen : 1) + o->length;
    ctxt = malloc(cap * sizeof *ctxt);
    win = malloc(T * sizeof *win);
    order = malloc(V * sizeof *order);
    z = malloc(lg->out_n * sizeof *z);
    p = malloc(V * sizeof *p);
    if (!ctxt || !win || !order || !z || !p) {
        st = ct_fail(ctx, CT_ERR_NO_MEMORY, "out of host memory");
        goto done;
    }
    size_t n = 0;
    if (prompt && (st = ct_tokenizer_encode(tok, prompt, plen, ctxt, cap, &n))) {
        st = ct_fail(ctx, st, "the prompt: %s", ct_last_error());
        goto done;
    }
    if (!n) /* nothing to continue: a line break, or an unknown word */
        ctxt[n++] = ct_tokenizer_kind(tok) == CT_TOKENS_BYTE ? '\n' : CT_TOKEN_UNK;
    uint64_t rng = o->seed;
    for (size_t g = 0; g < o->length; g++) {
        size_t w = n < T ? n : T;
        memset(win, 0, T * sizeof *win);
        memcpy(win, ctxt + (n - w), w * sizeof *win);
        if ((st = ct_buffer_write(ctx, s.net.input.mem, s.net.input.off * sizeof(float),
                                  T * sizeof *win, win)) ||
            (st = ct_net_forward(&s.net, 0, 0, 0)) ||
            (st = ct_net_read_out(&s.net, (size_t)(lg - s.net.rt), (w - 1) * K, K, z)))
            break;
        int32_t next = draw(z, V < K ? V : K, o->temperature, o->top_k, &rng, order, p);
        ctxt[n++] = next;
        if (o->on_text) {
            size_t len = 0;
            const char *text = ct_tokenizer_token(tok, next, &len);
            if (ct_tokenizer_kind(tok) == CT_TOKENS_WORD)
                o->on_text(o->user, " ", 1);
            if (text)
                o->on_text(o->user, text, len);
        }
    }
done:
    free(ctxt);
    free(win);
    free(order);
    free(z);
    free(p);
    ct_session_text_free(&tok, &names, nnames);
    ct_session_free(&s);
    return st;
}
