/*
 * error.h - raising errors: every failing path formats one message that
 * says what went wrong and, where it can, what to do next ("HINT: ...").
 * The message lands in a thread-local buffer (ct_last_error) and, when a
 * context is at hand, in the context too (ct_context_last_error), through
 * the sink the context floor installs (ct_error_set_sink).
 */
#ifndef CT_CORE_ERROR_H
#define CT_CORE_ERROR_H

#include <stddef.h>

#include "cltrain/common.h"

struct ct_context;

#define CT_ERROR_MAX 16384

#if defined(__GNUC__)
#define CT_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define CT_PRINTF(a, b)
#endif

/* Records the message and returns `status`, so a failing path reads
 * `return ct_fail(ctx, CT_ERR_IO, "cannot open %s: %s", path, strerror(errno));` */
int ct_fail(struct ct_context *ctx, int status, const char *fmt, ...) CT_PRINTF(3, 4);

/* Copies the thread's last message into the context (after a context-less
 * helper failed) and returns `status`. */
int ct_fail_keep(struct ct_context *ctx, int status);

/* Argument checks return an error; the library never aborts. */
#define CT_VALIDATE(ctx, cond)                                                        \
    do {                                                                              \
        if (!(cond))                                                                  \
            return ct_fail((ctx), CT_ERR_INVALID_ARG, "%s: invalid argument: %s",     \
                           __func__, #cond);                                          \
    } while (0)

/* Where ct_fail and ct_fail_keep copy the message when given a context.
 * The context floor (src/cl/context.c) installs its sink before it makes a
 * context, so this floor never calls up into it; until then a context's
 * copy is skipped (the thread-local message is always kept). */
typedef void (*ct_error_sink)(struct ct_context *ctx, const char *message);
void ct_error_set_sink(ct_error_sink sink);

#define CT_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#endif /* CT_CORE_ERROR_H */
