/*
 * cli_args.c - parsing the cltrain command line (see cli_args.h). Every
 * bad flag, missing value or out-of-range number is a usage error that
 * names the flag and the value; nothing is defaulted silently.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_args.h"

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int usage(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return 2;
}

static int parse_count(const char *flag, const char *v, long lo, long hi, long *out, char *err,
                       size_t errlen)
{
    char *end = NULL;
    long x = v ? strtol(v, &end, 10) : 0;
    if (!v || end == v || *end || x < lo || x > hi)
        return usage(err, errlen, "%s needs an integer in [%ld, %ld], got '%s'", flag, lo, hi,
                     v ? v : "");
    *out = x;
    return 0;
}

static int parse_float(const char *flag, const char *v, double lo, double hi, float *out, char *err,
                       size_t errlen)
{
    char *end = NULL;
    double x = v ? strtod(v, &end) : 0;
    if (!v || end == v || *end || !(x >= lo && x <= hi))
        return usage(err, errlen, "%s needs a number in [%g, %g], got '%s'", flag, lo, hi,
                     v ? v : "");
    *out = (float)x;
    return 0;
}

static int parse_kernels(int argc, char **argv, cli_args *a, char *err, size_t errlen)
{
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--device")) {
            if (++i >= argc)
                return usage(err, errlen, "missing value for '--device'");
            a->device = argv[i];
        } else if (!strcmp(argv[i], "--json")) {
            a->json = 1;
        } else {
            return usage(err, errlen, "%s: unknown option '%s'", a->cmd_name, argv[i]);
        }
    }
    return 0;
}

static int parse_verify(int argc, char **argv, cli_args *a, char *err, size_t errlen)
{
    for (int i = 0; i < argc; i++) {
        const char *f = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(f, "--device") && val) {
            a->device = val;
            i++;
        } else if (!strcmp(f, "--model") && val) {
            if (a->nmodels >= CLI_MAX_MODELS)
                return usage(err, errlen, "verify: at most %d --model", CLI_MAX_MODELS);
            a->models[a->nmodels++] = val;
            i++;
        } else if (!strcmp(f, "--always")) {
            a->verify_mode = CT_VERIFY_ALWAYS;
        } else if (!strcmp(f, "--json")) {
            a->json = 1;
        } else {
            return usage(err, errlen, "verify: unknown or incomplete option '%s'", f);
        }
    }
    return 0;
}

static int parse_tune(int argc, char **argv, cli_args *a, char *err, size_t errlen)
{
    ct_tune_options *o = &a->tune;
    long v = 0;
    for (int i = 0; i < argc; i++) {
        const char *f = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(f, "--device") && val) {
            a->device = val;
            i++;
        } else if (!strcmp(f, "--model") && val) {
            if (a->nmodels >= CLI_MAX_MODELS)
                return usage(err, errlen, "tune: at most %d --model", CLI_MAX_MODELS);
            a->models[a->nmodels++] = val;
            i++;
        } else if (!strcmp(f, "--batch")) {
            if (parse_count(f, val, 1, 1 << 20, &v, err, errlen))
                return 2;
            o->batch = (int)v;
            i++;
        } else if (!strcmp(f, "--budget")) {
            float b = 0;
            if (parse_float(f, val, 1, 86400, &b, err, errlen))
                return 2;
            o->budget = b;
            i++;
        } else if (!strcmp(f, "--export") && val) {
            a->tune_export = val;
            i++;
        } else if (!strcmp(f, "--import") && val) {
            a->tune_import = val;
            i++;
        } else if (!strcmp(f, "--retune")) {
            o->retune = 1;
        } else if (!strcmp(f, "--no-clblast")) {
            o->clblast = 0;
        } else if (!strcmp(f, "--json")) {
            a->json = 1;
        } else {
            return usage(err, errlen, "tune: unknown or incomplete option '%s'", f);
        }
    }
    if (!a->nmodels && !a->tune_export && !a->tune_import)
        return usage(err, errlen, "tune: needs --model M (one or more), --export FILE or --import FILE");
    if (a->tune_export && a->tune_import)
        return usage(err, errlen, "tune: --export and --import are separate runs");
    return 0;
}

static int parse_precision(const char *f, const char *val, int *out, char *err, size_t errlen);

static int parse_selftest(int argc, char **argv, cli_args *a, char *err, size_t errlen)
{
    ct_selftest_options *so = &a->selftest;
    long v = 0;
    for (int i = 0; i < argc; i++) {
        const char *f = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(f, "--device") && val) {
            a->device = val;
            i++;
        } else if (!strcmp(f, "--filter") && val) {
            so->filter = val;
            i++;
        } else if (!strcmp(f, "--iterations")) {
            if (parse_count(f, val, 1, 100000, &v, err, errlen))
                return 2;
            so->iterations = (int)v;
            i++;
        } else if (!strcmp(f, "--seed")) {
            if (parse_count(f, val, 0, 0x7fffffffL, &v, err, errlen))
                return 2;
            so->seed = (uint64_t)v;
            i++;
        } else if (!strcmp(f, "--bench")) {
            so->bench = 1;
        } else if (!strcmp(f, "--no-finite-diff")) {
            so->finite_diff = 0;
        } else if (!strcmp(f, "--precision")) {
            if (parse_precision(f, val, &so->precision, err, errlen))
                return 2;
            i++;
        } else {
            return usage(err, errlen, "selftest: unknown or incomplete option '%s'", f);
        }
    }
    return 0;
}

/* --shares W,W,...: one positive weight per device of --device */
static int parse_shares(const char *val, cli_args *a, char *err, size_t errlen)
{
    const char *p = val;
    a->nshares = 0;
    for (;;) {
        char *end = NULL;
        double w = strtod(p, &end);
        if (end == p || !(w > 0 && w <= 1e6) || (*end && *end != ','))
            return usage(err, errlen, "--shares needs positive numbers separated by commas "
                         "(one per device), got '%s'", val);
        if (a->nshares == CLI_MAX_DEVICES)
            return usage(err, errlen, "--shares: at most %d devices", CLI_MAX_DEVICES);
        a->shares[a->nshares++] = w;
        if (!*end)
            return 0;
        p = end + 1;
    }
}

/* --precision fp32|bf16|fp16 */
static int parse_precision(const char *f, const char *val, int *out, char *err, size_t errlen)
{
    if (val && !strcmp(val, "fp32"))
        *out = CT_PRECISION_FP32;
    else if (val && !strcmp(val, "bf16"))
        *out = CT_PRECISION_BF16;
    else if (val && !strcmp(val, "fp16"))
        *out = CT_PRECISION_FP16;
    else
        return usage(err, errlen, "%s: fp32, bf16 or fp16, not '%s'", f, val ? val : "");
    return 0;
}

/* train, eval and predict share their flags */
static int parse_run(const char *cmd, int argc, char **argv, cli_args *a, char *err, size_t errlen)
{
    ct_train_options *o = &a->train;
    long v = 0;
    int is_train = !strcmp(cmd, "train"), is_predict = !strcmp(cmd, "predict");
    int is_gen = !strcmp(cmd, "generate");
    const char *tb_flag = NULL; /* a --tensorboard-* flag, which needs --tensorboard */
    ct_generate_options *g = &a->generate;
#define COUNT(lo, hi, dst) do { if (parse_count(f, val, lo, hi, &v, err, errlen)) return 2; dst; } while (0)
#define FLOAT(lo, hi, dst) do { if (parse_float(f, val, lo, hi, dst, err, errlen)) return 2; } while (0)
    for (int i = 0; i < argc; i++) {
        const char *f = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        int takes = 1;
        if (!strcmp(f, "--model") && val) a->model = val;
        else if (!strcmp(f, "--data") && val) o->data = val;
        else if (!strcmp(f, "--device") && val) a->device = val;
        else if (!strcmp(f, "--weights") && val && !is_train) a->weights = val;
        else if (!strcmp(f, "--out") && val && is_train) o->out = val;
        else if (!strcmp(f, "--resume") && val && is_train) o->resume = val;
        else if (!strcmp(f, "--init") && val && is_train) o->init = val;
        else if (!strcmp(f, "--freeze") && val && is_train) o->freeze = val;
        else if (!strcmp(f, "--log") && val && is_train) o->log = val;
        else if (!strcmp(f, "--optimizer") && val && is_train) o->optimizer = val;
        else if (!strcmp(f, "--schedule") && val && is_train) o->schedule = val;
        else if (!strcmp(f, "--epochs") && is_train) COUNT(1, 100000, o->epochs = (int)v);
        else if (!strcmp(f, "--batch")) COUNT(1, 1 << 20, a->batch = v);
        else if (!strcmp(f, "--seed") && is_train) COUNT(0, 0x7fffffffL, o->seed = (uint64_t)v);
        else if (!strcmp(f, "--seed") && is_gen) COUNT(0, 0x7fffffffL, g->seed = (uint64_t)v);
        else if (!strcmp(f, "--warmup") && is_train) COUNT(0, 1L << 40, o->warmup = v);
        else if (!strcmp(f, "--step-epochs") && is_train) COUNT(1, 100000, o->step_epochs = (int)v);
        else if (!strcmp(f, "--log-every") && is_train) COUNT(1, 1L << 40, o->log_every = v);
        else if (!strcmp(f, "--tensorboard") && val && is_train) o->tensorboard = val;
        else if (!strcmp(f, "--tensorboard-every") && is_train) COUNT(0, 1L << 40, o->tensorboard_every = v; tb_flag = f);
        else if (!strcmp(f, "--limit")) COUNT(1, 1L << 40, o->train_limit = (size_t)v);
        else if (!strcmp(f, "--test-limit") && is_train) COUNT(1, 1L << 40, o->test_limit = (size_t)v);
        else if (!strcmp(f, "--count") && is_predict) COUNT(1, 1L << 30, a->count = v);
        else if (!strcmp(f, "--text") && val && is_predict) a->text = val;
        else if (!strcmp(f, "--prompt") && val && is_gen) g->prompt = val;
        else if (!strcmp(f, "--length") && is_gen) COUNT(1, 1L << 24, g->length = (size_t)v);
        else if (!strcmp(f, "--temperature") && is_gen) FLOAT(0, 100, &g->temperature);
        else if (!strcmp(f, "--top-k") && is_gen) COUNT(0, 1L << 24, g->top_k = (int)v);
        else if (!strcmp(f, "--top") && is_predict) COUNT(1, 1000, a->top = v);
        else if (!strcmp(f, "--lr") && is_train) FLOAT(1e-12, 100, &o->lr);
        else if (!strcmp(f, "--momentum") && is_train) FLOAT(0, 1, &o->momentum);
        else if (!strcmp(f, "--weight-decay") && is_train) FLOAT(0, 10, &o->weight_decay);
        else if (!strcmp(f, "--gamma") && is_train) FLOAT(0, 10, &o->gamma);
        else if (!strcmp(f, "--clip") && is_train) FLOAT(0, 1e9, &o->clip);
        else if (!strcmp(f, "--check-finite") && is_train) COUNT(0, 1L << 40, o->check_finite = v);
        else if (!strcmp(f, "--bn-groups") && is_train) COUNT(1, 1 << 20, o->bn_groups = (int)v);
        else if (!strcmp(f, "--accumulate") && is_train) COUNT(1, CT_TRAIN_ACCUMULATE_MAX, o->accumulate = (int)v);
        else if (!strcmp(f, "--loss-scale") && is_train) FLOAT(1, 16777216, &o->loss_scale);
        else if (!strcmp(f, "--precision") && is_train) {
            if (parse_precision(f, val, &o->precision, err, errlen))
                return 2;
        }
        else if (!strcmp(f, "--loader-threads") && is_train) COUNT(1, 256, o->loader_threads = (int)v);
        else if (!strcmp(f, "--shares") && val && is_train) {
            if (parse_shares(val, a, err, errlen))
                return 2;
        }
        else {
            takes = 0;
            if (!strcmp(f, "--nesterov") && is_train) o->nesterov = 1;
            else if (!strcmp(f, "--dry-run") && is_train) o->dry_run = 1;
            else if (!strcmp(f, "--augment") && is_train) o->augment = 1;
            else if (!strcmp(f, "--no-augment") && is_train) o->augment = 0;
            else if (!strcmp(f, "--tune") && is_train) a->tune_first = 1;
            else if (!strcmp(f, "--progress") && is_train) a->progress = 1;
            else if (!strcmp(f, "--tensorboard-histograms") && is_train) o->tensorboard_histograms = 1, tb_flag = f;
            else if (!strcmp(f, "--no-progress") && is_train) a->progress = 0;
            else if (!strcmp(f, "--logits") && is_predict) a->logits = 1;
            else
                return usage(err, errlen, "%s: unknown option or missing value '%s'", cmd, f);
        }
        i += takes;
    }
#undef COUNT
#undef FLOAT
    if (!is_train && !a->weights)
        return usage(err, errlen, "%s needs --weights CKPT", cmd);
    if (tb_flag && !o->tensorboard)
        return usage(err, errlen, "%s needs --tensorboard DIR", tb_flag);
    if (a->logits && a->text)
        return usage(err, errlen, "predict: --logits reads test samples (--data), not --text");
    return 0;
}

static int parse_export(int argc, char **argv, cli_args *a, char *err, size_t errlen)
{
    for (int i = 0; i < argc; i++) {
        const char *f = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(f, "--weights") && val)
            a->weights = val;
        else if (!strcmp(f, "--model") && val)
            a->model = val;
        else if (!strcmp(f, "--onnx") && val)
            a->onnx = val;
        else
            return usage(err, errlen, "export: unknown option or missing value '%s'", f);
        i++;
    }
    if (!a->weights || !a->onnx)
        return usage(err, errlen, "export needs --weights CKPT and --onnx FILE");
    return 0;
}

static int parse_bench(int argc, char **argv, cli_args *a, char *err, size_t errlen)
{
    ct_bench_options *bo = &a->bench;
    long v = 0;
    for (int i = 0; i < argc; i++) {
        const char *f = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(f, "--model") && val && a->nmodels < CLI_MAX_MODELS) {
            a->models[a->nmodels++] = val;
            i++;
        } else if (!strcmp(f, "--device") && val && a->ndevices < CLI_MAX_DEVICES) {
            a->devices[a->ndevices++] = val;
            i++;
        } else if (!strcmp(f, "--json")) {
            a->json = 1;
        } else if (!strcmp(f, "--profile")) {
            bo->profile = 1;
        } else if (!strcmp(f, "--batch")) {
            if (parse_count(f, val, 1, 1 << 20, &v, err, errlen))
                return 2;
            bo->batch = (int)v;
            i++;
        } else if (!strcmp(f, "--steps")) {
            if (parse_count(f, val, 1, 10000, &v, err, errlen))
                return 2;
            bo->steps = (int)v;
            i++;
        } else if (!strcmp(f, "--warmup")) {
            if (parse_count(f, val, 0, 10000, &v, err, errlen))
                return 2;
            bo->warmup = (int)v;
            i++;
        } else if (!strcmp(f, "--precision")) {
            if (parse_precision(f, val, &a->precision, err, errlen))
                return 2;
            i++;
        } else {
            return usage(err, errlen, "bench: unknown option or missing value '%s'", f);
        }
    }
    return 0;
}

int cli_parse(int argc, char **argv, cli_args *a, char *err, size_t errlen)
{
    memset(a, 0, sizeof *a);
    ct_selftest_defaults(&a->selftest);
    ct_train_defaults(&a->train);
    ct_bench_defaults(&a->bench);
    ct_tune_defaults(&a->tune);
    a->count = 10;
    a->top = 3;
    a->progress = -1;
    err[0] = '\0';
    a->cmd = CLI_HELP;
    if (argc < 2)
        return 0;
    const char *cmd = argv[1];
    int n = argc - 2;
    char **rest = argv + 2;
    a->cmd_name = cmd;
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help"))
        return 0;
    if (!strcmp(cmd, "--version")) {
        a->cmd = CLI_VERSION;
        return 0;
    }
    if (!strcmp(cmd, "--devices") || !strcmp(cmd, "devices")) {
        a->cmd = CLI_DEVICES;
        for (int i = 0; i < n; i++) {
            if (!strcmp(rest[i], "--json"))
                a->json = 1;
            else
                return usage(err, errlen, "--devices: unknown option '%s'", rest[i]);
        }
        return 0;
    }
    if (!strcmp(cmd, "kernels")) {
        a->cmd = CLI_KERNELS;
        return parse_kernels(n, rest, a, err, errlen);
    }
    if (!strcmp(cmd, "selftest")) {
        a->cmd = CLI_SELFTEST;
        return parse_selftest(n, rest, a, err, errlen);
    }
    if (!strcmp(cmd, "doctor")) {
        a->cmd = CLI_DOCTOR;
        return parse_kernels(n, rest, a, err, errlen); /* --device, --json */
    }
    if (!strcmp(cmd, "tune")) {
        a->cmd = CLI_TUNE;
        return parse_tune(n, rest, a, err, errlen);
    }
    if (!strcmp(cmd, "verify")) {
        a->cmd = CLI_VERIFY;
        return parse_verify(n, rest, a, err, errlen);
    }
    if (!strcmp(cmd, "train") || !strcmp(cmd, "eval") || !strcmp(cmd, "predict") || !strcmp(cmd, "generate")) {
        a->cmd = !strcmp(cmd, "train") ? CLI_TRAIN : !strcmp(cmd, "eval") ? CLI_EVAL
               : !strcmp(cmd, "predict") ? CLI_PREDICT : CLI_GENERATE;
        ct_generate_defaults(&a->generate);
        return parse_run(cmd, n, rest, a, err, errlen);
    }
    if (!strcmp(cmd, "export")) {
        a->cmd = CLI_EXPORT;
        return parse_export(n, rest, a, err, errlen);
    }
    if (!strcmp(cmd, "bench")) {
        a->cmd = CLI_BENCH;
        return parse_bench(n, rest, a, err, errlen);
    }
    if (!strcmp(cmd, "zoo")) {
        a->cmd = CLI_ZOO;
        if (n > 1)
            return usage(err, errlen, "zoo: takes at most one model name, got '%s'", rest[1]);
        a->name = n == 1 ? rest[0] : NULL;
        return 0;
    }
    if (!strcmp(cmd, "model")) {
        a->cmd = CLI_MODEL;
        if (n != 1)
            return usage(err, errlen, "model: expects one zoo name or model file, got '%s'",
                         n > 1 ? rest[1] : "nothing");
        a->name = rest[0];
        return 0;
    }
    return usage(err, errlen, "unknown command '%s'", cmd);
}
