/*
 * scaler.c - dynamic loss scaling (scaler.h).
 */
#include "train/scaler.h"

#include "ops/eltwise.h"
#include "ops/ops.h"

int ct_scaler_init(ct_scaler *s, ct_context *ctx, int on, float scale, size_t nparams)
{
    *s = (ct_scaler){ on, scale > 0 ? scale : CT_SCALER_START, 0, 0, 0, NULL };
    if (!on)
        return CT_OK;
    size_t n = 16 + ct_nonfinite_count_workspace_size(nparams);
    return ct_buffer_create(ctx, n * sizeof(float), &s->ws);
}

void ct_scaler_release(ct_scaler *s)
{
    ct_buffer_release(&s->ws);
}

void ct_scaler_arm(const ct_scaler *s, ct_group *g, int accum)
{
    float f = (s->on ? s->scale : 1.0f) / (float)accum;
    for (size_t i = 0; i < g->count; i++)
        g->rep[i].net->loss_scale = f;
}

int ct_scaler_check(ct_scaler *s, ct_group *g, long step, int *skip)
{
    *skip = 0;
    if (!s->on)
        return CT_OK;
    /* the reduced gradients are the same on every replica: replica 0 decides */
    ct_net *net = g->rep[0].net;
    ct_context *ctx = g->rep[0].ctx;
    size_t n = net->arena_size[CT_ARENA_GRADS];
    float count = 0;
    int st = ct_nonfinite_count(ctx, (ct_buf){ s->ws, 0 }, (ct_buf){ net->arena[CT_ARENA_GRADS].mem, 0 }, n,
                                (ct_buf){ s->ws, 16 });
    if (!st)
        st = ct_buffer_read(ctx, s->ws, 0, sizeof count, &count);
    if (st)
        return st;
    *skip = count != 0;
    for (size_t i = 0; i < g->count && !st; i++) {
        ct_net *r = g->rep[i].net;
        ct_buf grads = { r->arena[CT_ARENA_GRADS].mem, 0 };
        st = *skip ? ct_fill(g->rep[i].ctx, grads, n, 0.0f) : ct_scale(g->rep[i].ctx, grads, 1.0f / s->scale, n);
        if (st && i)
            ct_fail_keep(ctx, st);
    }
    if (st)
        return st;
    if (*skip) {
        s->scale = s->scale > 1.0f ? s->scale / 2 : s->scale;
        s->clean = 0;
        if (!s->skipped++)
            s->first_skip = step;
    } else if (++s->clean >= CT_SCALER_GROWTH_STEPS) {
        s->scale = s->scale < CT_SCALER_MAX ? s->scale * 2 : s->scale;
        s->clean = 0;
    }
    return CT_OK;
}

long ct_scaler_epoch(ct_scaler *s, long *first)
{
    long k = s->skipped;
    if (first)
        *first = s->first_skip;
    s->skipped = 0;
    s->first_skip = 0;
    return k;
}
