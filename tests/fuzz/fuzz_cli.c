/*
 * fuzz_cli - the cltrain command line (tools/cli_args.c): the input is an
 * argument vector, one argument per line (a NUL also ends one), parsed
 * exactly as cltrain parses its own without running anything. A parse
 * that succeeds must give a known command and values within their flags'
 * ranges; a failed one gives the usage message.
 */
#include <string.h>

#include "cli_args.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    char *text = fuzz_cstr(data, size);
    char **argv = calloc(size + 3, sizeof *argv);
    if (!text || !argv)
        goto done;
    int argc = 0;
    argv[argc++] = "cltrain";
    char *p = text, *end = text + size;
    while (p < end) {
        char *nl = p;
        while (nl < end && *nl != '\n' && *nl != '\0')
            nl++;
        *nl = '\0';
        argv[argc++] = p;
        p = nl + 1;
    }
    argv[argc] = NULL;
    cli_args a;
    char err[1024];
    int st = cli_parse(argc, argv, &a, err, sizeof err);
    FUZZ_CHECK(st == 0 || st == 2, "cli_parse returned %d", st);
    if (st) {
        FUZZ_CHECK(err[0] != '\0', "a usage error without a message");
    } else {
        FUZZ_CHECK(a.cmd >= CLI_HELP && a.cmd <= CLI_MODEL, "unknown command %d", (int)a.cmd);
        FUZZ_CHECK(a.batch >= 0 && a.batch <= 1 << 20, "--batch %ld", a.batch);
        FUZZ_CHECK(a.count >= 1 && a.top >= 1 && a.top <= 1000, "--count %ld --top %ld", a.count, a.top);
        FUZZ_CHECK(a.train.epochs >= 1 && (a.train.lr == 0 || a.train.lr >= 1e-12f) && a.train.momentum >= 0 &&
                   a.train.momentum <= 1, "train options out of range");
        FUZZ_CHECK(a.train.tensorboard_every >= 0 &&
                   (a.train.tensorboard || (!a.train.tensorboard_histograms && a.train.tensorboard_every == 10)),
                   "--tensorboard-every %ld or --tensorboard-histograms without --tensorboard",
                   a.train.tensorboard_every);
        FUZZ_CHECK(a.nmodels <= CLI_MAX_MODELS && a.ndevices <= CLI_MAX_DEVICES, "too many models or devices");
        FUZZ_CHECK(a.cmd == CLI_HELP || a.cmd == CLI_VERSION || a.cmd_name != NULL, "no command name");
        if (a.cmd == CLI_EVAL || a.cmd == CLI_PREDICT || a.cmd == CLI_EXPORT)
            FUZZ_CHECK(a.weights != NULL, "%s without --weights", a.cmd_name);
        if (a.cmd == CLI_EXPORT)
            FUZZ_CHECK(a.onnx != NULL, "export without --onnx");
        FUZZ_CHECK(!(a.logits && a.text), "predict --logits with --text");
    }
done:
    free(argv);
    free(text);
    return 0;
}
