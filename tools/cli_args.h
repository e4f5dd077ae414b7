/*
 * cli_args.h - the cltrain command line parsed into options, apart from
 * running anything: the CLI calls cli_parse and then runs the command, and
 * the fuzz target (tests/fuzz/fuzz_cli.c) parses argument vectors with the
 * same code without opening a device.
 */
#ifndef CLTRAIN_TOOLS_CLI_ARGS_H
#define CLTRAIN_TOOLS_CLI_ARGS_H

#include <stddef.h>

#include <cltrain/cltrain.h>

#define CLI_MAX_MODELS 64
#define CLI_MAX_DEVICES 16

typedef enum cli_command {
    CLI_HELP,
    CLI_VERSION,
    CLI_DEVICES,
    CLI_KERNELS,
    CLI_SELFTEST,
    CLI_TRAIN,
    CLI_EVAL,
    CLI_PREDICT,
    CLI_GENERATE,
    CLI_EXPORT,
    CLI_BENCH,
    CLI_ZOO,
    CLI_MODEL,
    CLI_VERIFY,
    CLI_DOCTOR,
    CLI_TUNE,
} cli_command;

typedef struct cli_args {
    cli_command cmd;
    const char *cmd_name;           /* argv[1] */
    int json;                       /* devices, kernels, bench, verify */
    int verify_mode;                /* verify: CT_VERIFY_AUTO, or CT_VERIFY_ALWAYS (--always) */
    const char *device;             /* kernels, selftest, train, eval, predict */
    const char *name;               /* zoo: the model to print (NULL: list); model: NAME|FILE */
    ct_selftest_options selftest;
    /* train, eval, predict */
    ct_train_options train;
    const char *weights, *model;
    long count, top, batch;         /* predict's --count and --top; --batch (0: default) */
    const char *text;               /* predict --text: a text to classify, or "-": lines of stdin */
    int logits;                     /* predict --logits: each sample's input and raw outputs as JSON */
    const char *onnx;               /* export --onnx FILE */
    ct_generate_options generate;   /* generate */
    int progress;                   /* train: -1 auto (a bar when stderr is a terminal), 0 off, 1 on */
    double shares[CLI_MAX_DEVICES]; /* train --shares: rows per device, relative */
    int nshares;
    /* bench */
    ct_bench_options bench;
    int precision;                  /* bench --precision: ct_precision */
    const char *models[CLI_MAX_MODELS];
    const char *devices[CLI_MAX_DEVICES];
    int nmodels, ndevices;
    /* tune; train --tune */
    ct_tune_options tune;
    const char *tune_export, *tune_import;
    int tune_first;                 /* train --tune: tune the model's products first */
} cli_args;

/* Parses argv (argv[0] is the program name) into a. Returns 0, or 2 (the
 * CLI's usage-error exit code) with the reason in err, to be printed as
 * "cltrain: <err>" followed by the pointer to --help. Pointers in a point
 * into argv. */
int cli_parse(int argc, char **argv, cli_args *a, char *err, size_t errlen);

#endif /* CLTRAIN_TOOLS_CLI_ARGS_H */
