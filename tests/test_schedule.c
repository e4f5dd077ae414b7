/*
 * test_schedule - the learning-rate schedules (src/optim/schedule.c) against
 * values worked out by hand from PyTorch's StepLR, CosineAnnealingLR
 * (closed form) and LinearLR + SequentialLR formulas, and the optimizer
 * descriptions' validation and state sizes (no OpenCL needed).
 *
 * A rate is computed in double and rounded to float once, so it must be the
 * float nearest the exact value: within 2^-24 relative (one half ulp), plus
 * a hair for the decimal constants below, which carry 10 significant digits.
 */
#include <math.h>

#include "optim/optim.h"
#include "optim/schedule.h"
#include "tcheck.h"

static void lr_is(const ct_lr_schedule *s, long step, double want)
{
    float got = ct_lr_at(s, step);
    double tol = 7e-8 * fabs(want) + 1e-12;
    CHECK(fabs((double)got - want) <= tol, "%s schedule (warm-up %ld), step %ld: %.10g, want %.10g",
          ct_lr_kind_name(s->kind), s->warmup, step, (double)got, want);
}

static void constant(void)
{
    ct_lr_schedule s = { .kind = CT_LR_CONSTANT, .base_lr = 0.1f };
    lr_is(&s, 0, 0.1f);
    lr_is(&s, 1, 0.1f);
    lr_is(&s, 1000000, 0.1f);
}

/* StepLR(step_size=3, gamma=0.5): base * 0.5^floor(t / 3) */
static void step(void)
{
    ct_lr_schedule s = { .kind = CT_LR_STEP, .base_lr = 0.1f, .step_size = 3, .gamma = 0.5f };
    double b = 0.1f; /* the float base, exactly as the schedule holds it */
    lr_is(&s, 0, b);
    lr_is(&s, 2, b);
    lr_is(&s, 3, b / 2);
    lr_is(&s, 5, b / 2);
    lr_is(&s, 6, b / 4);
    lr_is(&s, 9, b / 8);
    lr_is(&s, 31, b / 1024);
}

/* CosineAnnealingLR(T_max=10, eta_min=0.001), closed form
 * eta_min + (base - eta_min)(1 + cos(pi t / T)) / 2, then the floor. */
static void cosine(void)
{
    ct_lr_schedule s = { .kind = CT_LR_COSINE, .base_lr = 0.1f, .total = 10, .min_lr = 0.001f };
    double b = 0.1f, lo = 0.001f;
    lr_is(&s, 0, b);
    /* cos(pi/5) = 0.8090169944: lo + (b - lo) 0.9045084972 */
    lr_is(&s, 2, lo + (b - lo) * 0.9045084972);
    /* cos(pi/2) = 0: the midpoint */
    lr_is(&s, 5, lo + (b - lo) * 0.5);
    /* cos(7 pi/10) = -0.5877852523: lo + (b - lo) 0.2061073739 */
    lr_is(&s, 7, lo + (b - lo) * 0.2061073739);
    lr_is(&s, 10, lo);
    lr_is(&s, 11, lo); /* held at the floor, where PyTorch's closed form would climb */
    lr_is(&s, 1000, lo);
    /* the decimal values: 0.1 -> 0.0505 at the midpoint, to float precision */
    CHECK(fabs(ct_lr_at(&s, 5) - 0.0505) < 1e-8, "cosine midpoint %.9g, want 0.0505",
          (double)ct_lr_at(&s, 5));
}

/* LinearLR(start_factor, total_iters=W) then the main schedule from 0, as
 * SequentialLR(milestones=[W]) */
static void warmup(void)
{
    double b = 0.1f;
    ct_lr_schedule c = { .kind = CT_LR_CONSTANT, .base_lr = 0.1f, .warmup = 4, .warmup_start = 0.25f };
    lr_is(&c, 0, b * 0.25);
    lr_is(&c, 1, b * 0.4375); /* 0.25 + 0.75 * 1/4 */
    lr_is(&c, 2, b * 0.625);
    lr_is(&c, 3, b * 0.8125);
    lr_is(&c, 4, b);
    lr_is(&c, 50, b);

    ct_lr_schedule k = { .kind = CT_LR_COSINE, .base_lr = 0.1f, .total = 4, .min_lr = 0,
                         .warmup = 2, .warmup_start = 0 };
    lr_is(&k, 0, 0);
    lr_is(&k, 1, b * 0.5);
    lr_is(&k, 2, b);
    lr_is(&k, 3, b * 0.8535533906); /* (1 + cos(pi/4)) / 2 */
    lr_is(&k, 4, b * 0.5);
    lr_is(&k, 5, b * 0.1464466094); /* (1 + cos(3 pi/4)) / 2 */
    lr_is(&k, 6, 0);
    lr_is(&k, 100, 0);

    ct_lr_schedule st = { .kind = CT_LR_STEP, .base_lr = 0.1f, .step_size = 2, .gamma = 0.1f,
                          .warmup = 1, .warmup_start = 0.5f };
    double g = 0.1f;
    lr_is(&st, 0, b * 0.5);
    lr_is(&st, 1, b);
    lr_is(&st, 2, b);
    lr_is(&st, 3, b * g);
    lr_is(&st, 5, b * g * g);
}

static void invalid(void)
{
    ct_lr_schedule ok = { .kind = CT_LR_CONSTANT, .base_lr = 0.1f };
    CHECK(ct_lr_schedule_validate(NULL, &ok) == CT_OK, "a constant schedule is valid");
    CHECK(isnan(ct_lr_at(&ok, -1)), "a negative step gives NaN");
    CHECK(isnan(ct_lr_at(NULL, 0)), "a NULL schedule gives NaN");
    CHECK(ct_lr_schedule_validate(NULL, NULL) == CT_ERR_INVALID_ARG, "NULL is invalid");

    ct_lr_schedule bad[] = {
        { .kind = CT_LR_STEP, .base_lr = 0.1f, .step_size = 0, .gamma = 0.5f },
        { .kind = CT_LR_STEP, .base_lr = 0.1f, .step_size = 2, .gamma = -1 },
        { .kind = CT_LR_COSINE, .base_lr = 0.1f, .total = 0 },
        { .kind = CT_LR_COSINE, .base_lr = 0.1f, .total = 5, .min_lr = -0.1f },
        { .kind = CT_LR_CONSTANT, .base_lr = -0.1f },
        { .kind = CT_LR_CONSTANT, .base_lr = NAN },
        { .kind = CT_LR_CONSTANT, .base_lr = 0.1f, .warmup = -1 },
        { .kind = CT_LR_CONSTANT, .base_lr = 0.1f, .warmup = 3, .warmup_start = 1.5f },
        { .kind = CT_LR_COUNT, .base_lr = 0.1f },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK(ct_lr_schedule_validate(NULL, &bad[i]) == CT_ERR_INVALID_ARG,
              "invalid schedule %zu accepted", i);
        CHECK(isnan(ct_lr_at(&bad[i], 3)), "invalid schedule %zu gave a rate", i);
    }
}

static void optim_desc(void)
{
    ct_optim_desc d;
    ct_optim_defaults(&d, CT_OPT_SGD);
    CHECK(ct_optim_validate(NULL, &d) == CT_OK, "default SGD is valid");
    CHECK(ct_optim_state_size(&d, 7) == 0, "plain SGD keeps no state");
    d.momentum = 0.9f;
    CHECK(ct_optim_state_size(&d, 7) == 7, "SGD with momentum keeps one buffer");
    d.nesterov = 1;
    CHECK(ct_optim_validate(NULL, &d) == CT_OK, "Nesterov with momentum is valid");
    d.dampening = 0.1f;
    CHECK(ct_optim_validate(NULL, &d) == CT_ERR_INVALID_ARG, "Nesterov needs dampening 0");
    d.dampening = 0;
    d.momentum = 0;
    CHECK(ct_optim_validate(NULL, &d) == CT_ERR_INVALID_ARG, "Nesterov needs momentum");

    ct_optim_defaults(&d, CT_OPT_ADAMW);
    CHECK(ct_optim_validate(NULL, &d) == CT_OK, "default AdamW is valid");
    CHECK(d.weight_decay == 0.01f && d.lr == 1e-3f, "AdamW defaults as PyTorch's");
    CHECK(ct_optim_state_size(&d, 7) == 14, "Adam keeps m and v");
    d.beta2 = 1;
    CHECK(ct_optim_validate(NULL, &d) == CT_ERR_INVALID_ARG, "beta2 = 1 is rejected");
    d.beta2 = 0.999f;
    d.eps = -1;
    CHECK(ct_optim_validate(NULL, &d) == CT_ERR_INVALID_ARG, "a negative eps is rejected");
    d.eps = 1e-8f;
    d.lr = -1;
    CHECK(ct_optim_validate(NULL, &d) == CT_ERR_INVALID_ARG, "a negative lr is rejected");
    d.kind = CT_OPT_COUNT;
    CHECK(ct_optim_validate(NULL, &d) == CT_ERR_INVALID_ARG, "an unknown kind is rejected");
}

int main(void)
{
    constant();
    step();
    cosine();
    warmup();
    invalid();
    optim_desc();
    return tcheck_done("schedule");
}
