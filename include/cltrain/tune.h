/*
 * cltrain/tune.h - tuning the matrix products for a device: for the exact
 * GEMM shapes a model's training step runs, measure the candidates (the
 * built-in rule, CLBlast, cltrain's own SGEMM at each tile size and number
 * of k-slices; on the CPU class the AVX-512 GEMM and the host's BLAS) and
 * CLBlast's GEMM parameters, check each candidate's output against a
 * float64 reference before it can win, and keep the winners in the kernel
 * cache under (device, driver, device class), where every later product of
 * those shapes on that device takes them. Tuned choices are shared as one
 * JSON file (ct_tune_export, ct_tune_import).
 */
#ifndef CLTRAIN_TUNE_H
#define CLTRAIN_TUNE_H

#include <stdint.h>

#include "cltrain/common.h"
#include "cltrain/context.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ct_tune_progress {
    const char *model;  /* the model being tuned, NULL between models */
    const char *phase;  /* "shapes", "gemm", "clblast", "done" */
    int done, total;    /* within the phase */
    double seconds;     /* since ct_tune started */
    const char *line;   /* what was just measured, for a log line */
} ct_tune_progress;

/* Called as the search goes; a non-zero return stops it (what was measured
 * is kept, so a later run resumes). */
typedef int (*ct_tune_fn)(void *user, const ct_tune_progress *progress);

typedef struct ct_tune_options {
    const char *const *models; /* zoo names or model files */
    int nmodels;
    int batch;         /* 0: each model's bench batch (ct_bench_seed_batch, else 64) */
    double budget;     /* seconds per model; default 60 */
    int retune;        /* measure shapes and CLBlast's parameters again even if tuned */
    int clblast;       /* search CLBlast's parameters where CLBlast runs products; default 1 */
    uint64_t seed;     /* operands; default 1 */
    ct_tune_fn progress;
    void *user;
} ct_tune_options;

typedef struct ct_tune_result {
    int shapes;         /* distinct GEMM shapes the models run */
    int measured;       /* shapes measured now */
    int skipped;        /* shapes tuned before (kept) */
    int changed;        /* shapes whose pick differs from the built-in rule */
    int rejected;       /* candidates whose output failed the check */
    int clblast_sets;   /* CLBlast parameter sets tried */
    int clblast_kept;   /* 1: a set beat CLBlast's own parameters and is kept */
    int stopped;        /* the progress callback or the budget stopped it early */
    double default_ms;  /* per step: the products measured, summed, by the built-in rule */
    double tuned_ms;    /* the same products by the picks */
    double seconds;
} ct_tune_result;

CT_API void ct_tune_defaults(ct_tune_options *options);
/* Tunes the models' products on ctx's device and class and writes the
 * winners to the kernel cache (which must be on). */
CT_API int ct_tune(ct_context *ctx, const ct_tune_options *options, ct_tune_result *result);

/* Writes ctx's tuned choices and its verified-kernel verdicts, with its
 * device name, driver and class, to path (JSON). */
CT_API int ct_tune_export(ct_context *ctx, const char *path);

typedef struct ct_tune_import_result {
    int devices;        /* device entries in the file */
    int matched;        /* entries for ctx's device, driver and class */
    int shapes;         /* shapes taken (checked on first use) */
    int clblast;        /* CLBlast parameters taken (checked on first use) */
    char message[1024]; /* why entries were ignored, or "" */
} ct_tune_import_result;

/* Reads a file ct_tune_export wrote and adds the entries made on ctx's
 * device, driver and class to its cache, marked unchecked: they are used
 * only after ct_tune_check_imported has checked them here. Entries from
 * other devices or drivers are ignored (result->message says so). A file
 * that does not parse: CT_ERR_CORRUPT naming the place, the cache untouched. */
CT_API int ct_tune_import(ct_context *ctx, const char *path, ct_tune_import_result *result);

/* Checks the imported entries of ctx's table that are not checked yet
 * (each shape's pick against the float64 reference; the CLBlast parameters
 * on every shape CLBlast runs) and keeps those that pass. ct_train and
 * ct_bench_run call it; *checked and *dropped may be NULL. */
CT_API int ct_tune_check_imported(ct_context *ctx, int *checked, int *dropped);

/* What is tuned for ctx's device, driver and class. */
typedef struct ct_tune_status {
    int found;          /* a table is in the cache */
    int shapes;         /* shapes with a pick */
    int unchecked;      /* of them, imported and not checked here yet */
    int changed;        /* picks other than what the built-in rule would run */
    int clblast;        /* CLBlast parameters kept (1), and checked (2) */
    int64_t tuned;      /* unix time of the last change */
    double default_ms, tuned_ms; /* the shapes' times, one product each: built-in rules, picks */
    char models[512];   /* "name@batch" tuned, comma-separated */
    char path[1024];    /* the table's file, "" when the cache is off */
} ct_tune_status;

CT_API int ct_tune_get_status(ct_context *ctx, ct_tune_status *status);

#ifdef __cplusplus
}
#endif

#endif /* CLTRAIN_TUNE_H */
