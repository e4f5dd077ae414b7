/*
 * cli.h - what the files of the cltrain command share: JSON strings on
 * stdout, contexts that log to stderr, and the commands that live in files
 * of their own.
 */
#ifndef CLTRAIN_TOOLS_CLI_H
#define CLTRAIN_TOOLS_CLI_H

#include <cltrain/cltrain.h>

#include "cli_args.h"

/* s as a JSON string on stdout, quotes included. */
void json_string(const char *s);
/* A context on the device selector names, its messages logged to stderr;
 * NULL after printing the error. flags: OPEN_LAZY (kernels built when
 * first used), OPEN_PROFILING (a queue that times its commands). */
#define OPEN_LAZY 1
#define OPEN_PROFILING 2
ct_context *open_context(const char *device, int flags);

/* The text of `cltrain --help` (cli_usage.c). */
extern const char cli_usage_text[];

/* cltrain bench (cli_bench.c). */
int cmd_bench(const cli_args *a);
/* cltrain verify (cli_verify.c), and train's line after each device's
 * verification. */
int cmd_verify(const cli_args *a);
/* cltrain doctor (cli_doctor.c). */
int cmd_doctor(const cli_args *a);
void verify_line(void *user, ct_context *ctx, const ct_verify_result *r);
/* cltrain tune (cli_tune.c), and train --tune's tuning of one device's
 * products before training: 0, 1 on an error (printed), 130 on Ctrl-C. */
int cmd_tune(const cli_args *a);
int tune_before_train(ct_context *ctx, const char *model, int batch);

#endif /* CLTRAIN_TOOLS_CLI_H */
