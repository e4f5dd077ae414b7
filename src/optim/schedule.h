/*
 * schedule.h - learning-rate schedules as pure host functions: the trainer
 * asks for each step's rate and passes it to ct_optim_step, so the device
 * never holds schedule state.
 *
 * `step` is the number of scheduler steps already taken (PyTorch's
 * last_epoch): the rate for optimizer step t (1-based) is ct_lr_at(s, t - 1).
 * Whether a scheduler step is an optimizer step or an epoch is the caller's
 * choice (call with the epoch index for per-epoch schedules).
 *
 * With W = warmup > 0, steps 0 .. W-1 are a linear warm-up, as PyTorch's
 * LinearLR(start_factor = warmup_start, end_factor = 1, total_iters = W):
 *   lr = base_lr (warmup_start + (1 - warmup_start) step / W),
 * and from step W on the main schedule runs on its own count u = step - W,
 * as SequentialLR([LinearLR, main], milestones = [W]) does:
 *   constant: base_lr
 *   step:     base_lr gamma^floor(u / step_size)           (StepLR)
 *   cosine:   min_lr + (base_lr - min_lr) (1 + cos(pi u / total)) / 2
 *             for u <= total, min_lr after it              (CosineAnnealingLR's
 *             closed form; PyTorch's would climb back up past T_max, a
 *             schedule "to a floor" holds the floor instead)
 */
#ifndef CT_OPTIM_SCHEDULE_H
#define CT_OPTIM_SCHEDULE_H

#include "cltrain/context.h"

typedef enum ct_lr_kind {
    CT_LR_CONSTANT = 0,
    CT_LR_STEP = 1,
    CT_LR_COSINE = 2,
    CT_LR_COUNT
} ct_lr_kind;

typedef struct ct_lr_schedule {
    ct_lr_kind kind;
    float base_lr;      /* >= 0 */
    long step_size;     /* step: gamma applies every step_size steps (> 0) */
    float gamma;        /* step: the factor (>= 0) */
    long total;         /* cosine: steps from base_lr down to min_lr (> 0) */
    float min_lr;       /* cosine: the floor, eta_min (>= 0) */
    long warmup;        /* linear warm-up steps before the schedule; 0: none */
    float warmup_start; /* warm-up: the factor of base_lr at step 0, in [0, 1] */
} ct_lr_schedule;

const char *ct_lr_kind_name(ct_lr_kind kind);

/* Says what is wrong with a schedule (CT_ERR_INVALID_ARG), or CT_OK. */
int ct_lr_schedule_validate(ct_context *ctx, const ct_lr_schedule *s);

/* The learning rate after `step` scheduler steps (computed in double,
 * rounded once). NaN for an invalid schedule or a negative step, so a
 * trainer that skipped validation stops at its first step. */
float ct_lr_at(const ct_lr_schedule *s, long step);

#endif /* CT_OPTIM_SCHEDULE_H */
