/*
 * tcheck.h - the few macros the unit tests share: CHECK records a failure
 * with its line and goes on; tcheck_done() prints the tally and gives the
 * exit status.
 */
#ifndef CT_TESTS_TCHECK_H
#define CT_TESTS_TCHECK_H

#include <stdio.h>

static int tcheck_failures;
static int tcheck_count;

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        tcheck_count++;                                                        \
        if (!(cond)) {                                                         \
            tcheck_failures++;                                                 \
            fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                      \
            fprintf(stderr, "\n");                                             \
        }                                                                      \
    } while (0)

static inline int tcheck_done(const char *name)
{
    printf("%s: %d checks, %d failed\n", name, tcheck_count, tcheck_failures);
    return tcheck_failures ? 1 : 0;
}

#endif /* CT_TESTS_TCHECK_H */
