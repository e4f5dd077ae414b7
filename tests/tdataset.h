/*
 * tdataset.h - the helpers the dataset and text tests share: opening a
 * dataset spec that must load or must fail with a given status and
 * message, and removing a scratch directory. Each test program gets its
 * own copies (static inline), so their CHECKs count in its own tally.
 */
#ifndef CT_TESTS_TDATASET_H
#define CT_TESTS_TDATASET_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cltrain/cltrain.h"
#include "tcheck.h"

static inline int has(const char *msg, const char *a)
{
    return a == NULL || strstr(msg, a) != NULL;
}

/* Opening `spec` fails with `want` and a message holding each of a, b, c. */
static inline void open_fails(const char *spec, int split, int want, const char *a, const char *b,
                              const char *c)
{
    ct_dataset *ds = (ct_dataset *)1;
    int st = ct_dataset_open(spec, split, &ds);
    const char *msg = ct_last_error();
    CHECK(st == want, "open '%s' gave %s, want %s (%s)", spec, ct_status_str(st), ct_status_str(want),
          msg);
    CHECK(ds == NULL, "a failed open leaves *out NULL");
    CHECK(has(msg, a) && has(msg, b) && has(msg, c),
          "open '%s': message '%s' lacks '%s' / '%s' / '%s'", spec, msg, a, b ? b : "", c ? c : "");
    ct_dataset_free(&ds);
}

static inline ct_dataset *open_ok(const char *spec, int split)
{
    ct_dataset *ds = NULL;
    int st = ct_dataset_open(spec, split, &ds);
    CHECK(st == CT_OK && ds, "open '%s': %s", spec, ct_last_error());
    return st ? NULL : ds;
}

static inline void remove_tree(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0, "%s", cmd);
}

#endif /* CT_TESTS_TDATASET_H */
