/*
 * schedule.c - learning-rate schedules (see schedule.h for the formulas and
 * how they match PyTorch's schedulers).
 */
#include <math.h>

#include "core/error.h"
#include "optim/schedule.h"

const char *ct_lr_kind_name(ct_lr_kind kind)
{
    static const char *const names[CT_LR_COUNT] = { "constant", "step", "cosine" };
    return kind >= 0 && kind < CT_LR_COUNT ? names[kind] : "?";
}

/* NULL when the schedule is usable, else what is wrong with it. */
static const char *schedule_problem(const ct_lr_schedule *s)
{
    if (!s)
        return "NULL schedule";
    if (s->kind < 0 || s->kind >= CT_LR_COUNT)
        return "unknown kind (CT_LR_CONSTANT, CT_LR_STEP or CT_LR_COSINE)";
    if (!(s->base_lr >= 0) || isinf(s->base_lr))
        return "base_lr must be finite and >= 0";
    if (s->warmup < 0)
        return "warmup must be >= 0 steps";
    if (s->warmup > 0 && !(s->warmup_start >= 0 && s->warmup_start <= 1))
        return "warmup_start must lie in [0, 1]";
    if (s->kind == CT_LR_STEP && (s->step_size <= 0 || !(s->gamma >= 0) || isinf(s->gamma)))
        return "a step schedule needs step_size > 0 and a finite gamma >= 0";
    if (s->kind == CT_LR_COSINE &&
        (s->total <= 0 || !(s->min_lr >= 0) || isinf(s->min_lr)))
        return "a cosine schedule needs total > 0 steps and a finite min_lr >= 0";
    return NULL;
}

int ct_lr_schedule_validate(ct_context *ctx, const ct_lr_schedule *s)
{
    const char *why = schedule_problem(s);
    if (why)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "learning-rate schedule (%s): %s",
                       s ? ct_lr_kind_name(s->kind) : "-", why);
    return CT_OK;
}

float ct_lr_at(const ct_lr_schedule *s, long step)
{
    if (schedule_problem(s) || step < 0)
        return NAN;
    double base = s->base_lr;
    if (step < s->warmup) {
        double f = s->warmup_start;
        return (float)(base * (f + (1.0 - f) * (double)step / (double)s->warmup));
    }
    long u = step - s->warmup;
    switch (s->kind) {
    case CT_LR_STEP:
        return (float)(base * pow(s->gamma, (double)(u / s->step_size)));
    case CT_LR_COSINE: {
        double lo = s->min_lr;
        if (u >= s->total)
            return (float)lo;
        return (float)(lo + (base - lo) * (1.0 + cos(M_PI * (double)u / (double)s->total)) / 2.0);
    }
    default:
        return (float)base;
    }
}
