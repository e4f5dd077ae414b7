/*
 * fuzz.h - what the fuzz targets share. Each target defines
 * LLVMFuzzerTestOneInput; the same object links either with libFuzzer
 * (-Dfuzz=true, clang) or with replay.c, which feeds it every file of a
 * corpus directory, so the committed corpora run in every test suite.
 *
 * A target must never crash, hang or trip a sanitizer on any input: bad
 * input is a clean error status from the parser. FUZZ_CHECK states what a
 * successful parse promises; a broken promise aborts like a crash would.
 */
#ifndef CT_TESTS_FUZZ_H
#define CT_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond, ...)                                                \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(stderr, "%s:%d: broken promise: ", __FILE__, __LINE__);  \
            fprintf(stderr, __VA_ARGS__);                                    \
            fputc('\n', stderr);                                             \
            abort();                                                         \
        }                                                                    \
    } while (0)

/* The path of `name` inside a scratch directory made once per process
 * (under $TMPDIR, else /tmp) and removed at exit; a static buffer, valid
 * until the next call. */
const char *fuzz_path(const char *name);
/* Writes bytes to path (plain, or gzip-compressed when gz); 0 on success. */
int fuzz_write(const char *path, const uint8_t *data, size_t size, int gz);
/* A NUL-terminated copy of the input (malloc'd; NULL only when out of memory). */
char *fuzz_cstr(const uint8_t *data, size_t size);

#endif /* CT_TESTS_FUZZ_H */
