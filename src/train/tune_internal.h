/*
 * tune_internal.h - the tuner's state, shared by src/train/tune.c (shapes
 * and per-shape candidates), tune_clblast.c (CLBlast's parameters) and
 * tune_share.c (export, import, checking imported entries).
 */
#ifndef CT_TRAIN_TUNE_INTERNAL_H
#define CT_TRAIN_TUNE_INTERNAL_H

#include "cltrain/tune.h"
#include "ops/tune_file.h"
#include "train/tune_measure.h"

/* One shape's outcome */
typedef struct tn_shape_result {
    tm_choice best;
    double best_ms, rule_ms, clblast_ms; /* -1: not measured or rejected */
    tm_choice alt;  /* the fastest candidate other than CLBlast */
    double alt_ms;  /* its time, -1: none */
    int changed;
    int measured;   /* now (0: tuned before, or not reached) */
} tn_shape_result;

typedef struct tuner {
    ct_context *ctx;
    const ct_tune_options *o;
    ct_tune_result *res;
    double t0, deadline, shape_deadline, min_seconds;
    int clblast_phase, model_index, stop;
    const char *model;
    tm_shape *shapes;          /* every model's, in the order tuned */
    size_t n;
    tn_shape_result *results;  /* by shape */
    ct_tune_device table;      /* the cache's table as the tuner updates it */
} tuner;

/* Reports progress; 1 when the search must stop (asked, or past the budget) */
int tn_progress(tuner *t, const char *phase, int done, int total, const char *line);
void tn_shape_str(const tm_shape *s, char *out, size_t cap);
void tn_choice_str(const tm_choice *c, char *out, size_t cap);
/* Writes a shape's winner to the cache */
int tn_keep(tuner *t, const tm_shape *s, const tm_choice *c, double ms, double rule_ms);
/* The CLBlast parameter search over the shapes measured (tune_clblast.c) */
int tn_clblast(tuner *t);

#endif /* CT_TRAIN_TUNE_INTERNAL_H */
