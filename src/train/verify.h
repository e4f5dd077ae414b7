/*
 * verify.h - kernels verified on first contact (src/train/verify.c).
 */
#ifndef CT_TRAIN_VERIFY_H
#define CT_TRAIN_VERIFY_H

#include <stddef.h>
#include <stdint.h>

#include "cltrain/context.h"
#include "cltrain/selftest.h"
#include "cltrain/train.h"

struct ct_model;

/* One family's verdict as the cache keeps it. */
typedef struct ct_verdict {
    int passed;
    int64_t when;       /* unix time of the check */
    int cases;          /* shapes checked (passed) */
    char message[1024]; /* the first failure with its case (failed) */
} ct_verdict;

/* "auto", "always", "off" -> CT_VERIFY_*; CT_ERR_INVALID_ARG otherwise. */
int ct_verify_mode_parse(const char *s, int *mode);
/* Parses a verdict payload (CT_ERR_CORRUPT when it is not one). */
int ct_verdict_parse(const uint8_t *p, size_t n, ct_verdict *v);
/* Verifies the op families model m uses on ctx (mode, or CLTRAIN_VERIFY
 * when set): CT_OK when all pass, CT_ERR_CORRUPT naming the failing family,
 * its case and the ways out when one computes wrong numbers. */
int ct_verify_model(ct_context *ctx, const struct ct_model *m, int mode, ct_verify_result *result);

#endif /* CT_TRAIN_VERIFY_H */
