/*
 * util.h - small host helpers shared by every floor of the library.
 */
#ifndef CT_CORE_UTIL_H
#define CT_CORE_UTIL_H

#include <stddef.h>
#include <stdio.h>

char *ct_strdup(const char *s);
/* The whole file, NUL-terminated (the NUL is not counted in *size); NULL
 * with errno set on failure. */
char *ct_read_file(const char *path, size_t *size);
/* The same for files of at most `max` bytes: a longer one is NULL with
 * errno EFBIG after reading max + 1 bytes (the size is learnt by reading,
 * the buffer grows as data arrives, so a growing file or a lying header
 * cannot make it allocate much more). errno: fopen's, ENOMEM, EIO or
 * EFBIG. */
char *ct_read_file_max(const char *path, size_t max, size_t *size);
/* mkdir -p: creates `path` and its missing parents (0755). 0, or -1 with
 * errno set; an existing path is not an error. */
int ct_make_dirs(const char *path);
/* Monotonic seconds. */
double ct_now(void);
/* Sorts t (n >= 1 values) ascending in place and returns its median,
 * t[n / 2] (the upper one for even n). */
double ct_median(double *t, size_t n);

/* Writing a file atomically (checkpoints, ONNX files): ct_atomic_open
 * creates `path`.tmp.<pid> and hands its stream in a->f; ct_atomic_commit
 * flushes and fsyncs it, renames it over `path` and fsyncs the directory.
 * write_errno != 0 says a write into a->f failed (with that errno): commit
 * then removes the temporary, as it does on any failure of its own, so
 * `path` is either the complete new file or untouched. Messages name
 * `path` (ct_last_error). */
typedef struct ct_atomic_file {
    FILE *f;
    char *tmp;
    char *path;
} ct_atomic_file;

int ct_atomic_open(ct_atomic_file *a, const char *path);
int ct_atomic_commit(ct_atomic_file *a, int write_errno);
/* Removes the temporary and releases a (nothing written to `path`). */
void ct_atomic_abort(ct_atomic_file *a);

#endif /* CT_CORE_UTIL_H */
