/*
 * test_quiet - the library prints nothing. Through the public API only, with
 * stdout and stderr pointed at files: a context, a dry run, one epoch of
 * training on synthetic data (with a checkpoint and a JSONL log, files the
 * caller asks for), evaluation, prediction and a failing call. Afterwards
 * both files must be empty, while the callbacks and the returned data hold
 * the plan, the progress, the epoch report and the predictions.
 */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cltrain/cltrain.h>

#include "tcheck.h"

#define EPOCH_STEPS 4 /* 64 samples, batch 16 */

static const char model_text[] =
    "input shape=1x8x8\n"
    "fc1: dense out=16 act=relu\n"
    "fc2: dense out=4\n"
    "loss: softmax_cross_entropy\n";
static const char data[] = "synthetic:1,8,8:4:64";

/* What the callbacks saw, checked after stdout and stderr are back. */
typedef struct seen {
    int plans;
    size_t plan_count, plan_params, plan_row_params;
    int plan_batch, plan_first_is_input, plan_shape_ok, plan_text_ok;
    int progress_calls, progress_finished, progress_bad;
    size_t progress_last_done, progress_total;
    int epochs;
    ct_epoch_report epoch;
} seen;

static void on_plan(void *user, const ct_plan_report *p)
{
    seen *s = user;
    s->plans++;
    s->plan_count = p->count;
    s->plan_params = p->params;
    s->plan_batch = p->batch;
    s->plan_row_params = 0;
    for (size_t i = 0; i < p->count; i++)
        s->plan_row_params += p->layers[i].params;
    s->plan_first_is_input = p->count && !strcmp(p->layers[0].name, "input") &&
                             !strcmp(p->layers[0].type, "input") && !strcmp(p->layers[0].reads, "");
    s->plan_shape_ok = p->count == 4 && !strcmp(p->layers[0].shape, "1x8x8") &&
                       !strcmp(p->layers[1].shape, "16") && !strcmp(p->layers[2].reads, "fc1");
    s->plan_text_ok = p->memory_plan && strstr(p->memory_plan, "memory plan at batch 16:\n") == p->memory_plan &&
                      strstr(p->memory_plan, "fits") != NULL;
}

static void on_progress(void *user, const ct_progress *p)
{
    seen *s = user;
    s->progress_calls++;
    s->progress_finished += p->finished;
    s->progress_last_done = p->done;
    s->progress_total = p->total;
    if (p->epoch != 1 || p->epochs != 1 || p->done == 0 || p->done > p->total || !(p->loss > 0) ||
        !(p->accuracy >= 0 && p->accuracy <= 1) || !(p->samples_per_second > 0) || !(p->eta_seconds >= 0))
        s->progress_bad++;
}

static void on_epoch(void *user, const ct_epoch_report *r)
{
    seen *s = user;
    s->epochs++;
    s->epoch = *r;
}

static int redirect(int fd, const char *path)
{
    int to = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int saved = dup(fd);
    if (to < 0 || saved < 0 || dup2(to, fd) < 0) {
        perror("test_quiet: redirecting");
        exit(1);
    }
    close(to);
    return saved;
}

static void restore(int fd, int saved)
{
    dup2(saved, fd);
    close(saved);
}

/* Prints what landed in a redirected file; returns its size. */
static long leaked(const char *path, const char *stream)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    buf[n] = '\0';
    if (size)
        fprintf(stderr, "test_quiet: the library wrote %ld bytes to %s:\n%s\n", size, stream, buf);
    return size;
}

int main(void)
{
    char dir[] = "/tmp/cltrain-quiet-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("test_quiet: mkdtemp");
        return 1;
    }
    char model[128], ckpt[128], log[128], out_path[128], err_path[128];
    snprintf(model, sizeof model, "%s/small.model", dir);
    snprintf(ckpt, sizeof ckpt, "%s/small.safetensors", dir);
    snprintf(log, sizeof log, "%s/train.jsonl", dir);
    snprintf(out_path, sizeof out_path, "%s/stdout", dir);
    snprintf(err_path, sizeof err_path, "%s/stderr", dir);
    FILE *mf = fopen(model, "w");
    if (!mf || fputs(model_text, mf) < 0 || fclose(mf)) {
        perror("test_quiet: writing the model file");
        return 1;
    }

    seen s;
    memset(&s, 0, sizeof s);
    int st_ctx, st_dry, st_dry_none, st_train, st_eval, st_pred, st_pred_all, st_bad;
    double loss = 0, acc = 0;
    size_t evaluated = 0;
    ct_predictions pred, all;
    memset(&pred, 0, sizeof pred);
    memset(&all, 0, sizeof all);
    char bad_error[1024] = "";

    fflush(stdout);
    fflush(stderr);
    int saved_out = redirect(1, out_path), saved_err = redirect(2, err_path);
    {
        ct_context_options co;
        ct_context_defaults(&co);
        co.lazy_kernels = 1; /* no log callback: the library's messages are dropped */
        ct_context *ctx = NULL;
        st_ctx = ct_context_create(&co, &ctx);

        ct_train_options o;
        ct_train_defaults(&o);
        o.model = model;
        o.data = data;
        o.batch = 16;
        o.epochs = 1;
        o.on_plan = on_plan;
        o.on_progress = on_progress;
        o.on_epoch = on_epoch;
        o.user = &s;
        o.dry_run = 1;
        st_dry = st_ctx ? -1 : ct_train(ctx, &o);
        o.on_plan = NULL; /* a dry run nobody listens to */
        st_dry_none = st_ctx ? -1 : ct_train(ctx, &o);

        o.dry_run = 0;
        o.progress_interval = 0; /* every step */
        o.out = ckpt;
        o.log = log;
        st_train = st_ctx ? -1 : ct_train(ctx, &o);

        st_eval = st_ctx ? -1 : ct_evaluate(ctx, NULL, ckpt, data, 0, 0, &loss, &acc, &evaluated);
        st_pred = st_ctx ? -1 : ct_predict(ctx, NULL, ckpt, data, 10, 3, &pred);
        st_pred_all = st_ctx ? -1 : ct_predict(ctx, NULL, ckpt, data, 1000, 50, &all);

        o.model = "no-such-model";
        o.out = NULL;
        o.log = NULL;
        st_bad = st_ctx ? -1 : ct_train(ctx, &o);
        if (ctx)
            snprintf(bad_error, sizeof bad_error, "%s", ct_context_last_error(ctx));
        ct_context_free(&ctx);
    }
    fflush(stdout);
    fflush(stderr);
    restore(1, saved_out);
    restore(2, saved_err);

    CHECK(st_ctx == CT_OK, "context: %s", ct_last_error());
    CHECK(leaked(out_path, "stdout") == 0, "nothing on stdout");
    CHECK(leaked(err_path, "stderr") == 0, "nothing on stderr");

    CHECK(st_dry == CT_OK, "dry run: status %d", st_dry);
    CHECK(st_dry_none == CT_OK, "dry run without on_plan: status %d", st_dry_none);
    CHECK(s.plans == 1, "on_plan called %d times", s.plans);
    CHECK(s.plan_count == 4, "plan rows %zu", s.plan_count);
    /* 64*16 + 16 + 16*4 + 4 */
    CHECK(s.plan_params == 1108 && s.plan_row_params == 1108, "plan params %zu, rows sum to %zu",
          s.plan_params, s.plan_row_params);
    CHECK(s.plan_batch == 16, "plan batch %d", s.plan_batch);
    CHECK(s.plan_first_is_input && s.plan_shape_ok, "plan rows: names, reads and shapes");
    CHECK(s.plan_text_ok, "plan text starts with the memory plan header and says whether it fits");

    CHECK(st_train == CT_OK, "train: status %d", st_train);
    CHECK(s.progress_calls == EPOCH_STEPS + 1, "on_progress called %d times, want %d", s.progress_calls,
          EPOCH_STEPS + 1);
    CHECK(s.progress_finished == 1, "one finished call, got %d", s.progress_finished);
    CHECK(s.progress_bad == 0, "%d progress calls with odd fields", s.progress_bad);
    CHECK(s.progress_last_done == 64 && s.progress_total == 64, "progress ends at %zu of %zu",
          s.progress_last_done, s.progress_total);
    CHECK(s.epochs == 1 && s.epoch.epoch == 1 && s.epoch.step == EPOCH_STEPS, "epoch reports %d, step %ld",
          s.epochs, s.epoch.step);
    CHECK(isfinite(s.epoch.train_loss) && isfinite(s.epoch.test_loss), "epoch losses %g %g",
          s.epoch.train_loss, s.epoch.test_loss);
    FILE *lf = fopen(log, "r");
    int lines = 0;
    char line[2048];
    while (lf && fgets(line, sizeof line, lf))
        lines += strncmp(line, "{\"event\": \"epoch\", \"epoch\": 1, \"step\": 4,", 40) == 0;
    if (lf)
        fclose(lf);
    CHECK(lines == 1, "the JSONL log holds %d epoch lines", lines);

    CHECK(st_eval == CT_OK && evaluated == 64 && isfinite(loss) && acc >= 0 && acc <= 1,
          "eval: status %d, %zu samples, loss %g, accuracy %g", st_eval, evaluated, loss, acc);
    /* planned at another batch, so the GEMMs may round differently */
    CHECK(fabs(loss - s.epoch.test_loss) < 1e-4, "eval loss %.10g, the epoch's test loss %.10g", loss,
          s.epoch.test_loss);

    CHECK(st_pred == CT_OK, "predict: status %d", st_pred);
    CHECK(pred.count == 10 && pred.top_k == 3, "predict: %zu samples, top %d", pred.count, pred.top_k);
    for (size_t i = 0; i < pred.count; i++) {
        const int *c = pred.classes + i * 3;
        const double *p = pred.probability + i * 3;
        CHECK(pred.index[i] == i && pred.label[i] >= 0 && pred.label[i] < 4, "sample %zu: index %zu label %d",
              i, pred.index[i], pred.label[i]);
        CHECK(c[0] != c[1] && c[0] != c[2] && c[1] != c[2] && c[0] >= 0 && c[0] < 4 && c[1] >= 0 && c[1] < 4 &&
              c[2] >= 0 && c[2] < 4, "sample %zu: classes %d %d %d", i, c[0], c[1], c[2]);
        CHECK(p[0] >= p[1] && p[1] >= p[2] && p[2] > 0 && p[0] <= 1, "sample %zu: probabilities %g %g %g", i,
              p[0], p[1], p[2]);
    }
    CHECK(st_pred_all == CT_OK && all.count == 64 && all.top_k == 4, "predict past the split: status %d, "
          "%zu samples, top %d", st_pred_all, all.count, all.top_k);
    for (size_t i = 0; i < all.count && all.top_k == 4; i++) {
        double sum = 0;
        for (int k = 0; k < 4; k++)
            sum += all.probability[i * 4 + (size_t)k];
        CHECK(fabs(sum - 1) < 1e-6, "sample %zu: the probabilities of every class sum to %.9g", i, sum);
    }
    /* planned at batch 10 and 256: the same numbers up to the GEMMs' rounding */
    for (size_t i = 0; i < pred.count && all.count == 64; i++)
        CHECK(fabs(all.probability[i * 4] - pred.probability[i * 3]) < 1e-5,
              "sample %zu: the best probability %.9g in one prediction, %.9g in the other", i,
              all.probability[i * 4], pred.probability[i * 3]);
    ct_predictions_free(&pred);
    ct_predictions_free(&all);
    CHECK(pred.count == 0 && pred.index == NULL && all.probability == NULL, "predictions freed and emptied");
    ct_predictions_free(&pred); /* an empty one again */

    CHECK(st_bad != CT_OK && strstr(bad_error, "no-such-model"), "a bad model: status %d, message '%s'",
          st_bad, bad_error);

    unlink(model);
    unlink(ckpt);
    unlink(log);
    unlink(out_path);
    unlink(err_path);
    rmdir(dir);
    return tcheck_done("test_quiet");
}
