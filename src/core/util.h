/*
 * util.h - small host helpers shared by every floor of the library.
 */
#ifndef CT_CORE_UTIL_H
#define CT_CORE_UTIL_H

#include <stddef.h>

char *ct_strdup(const char *s);
/* The whole file, NUL-terminated (the NUL is not counted in *size); NULL
 * with errno set on failure. */
char *ct_read_file(const char *path, size_t *size);
/* mkdir -p: creates `path` and its missing parents (0755). 0, or -1 with
 * errno set; an existing path is not an error. */
int ct_make_dirs(const char *path);
/* Monotonic seconds. */
double ct_now(void);
/* Sorts t (n >= 1 values) ascending in place and returns its median,
 * t[n / 2] (the upper one for even n). */
double ct_median(double *t, size_t n);

#endif /* CT_CORE_UTIL_H */
