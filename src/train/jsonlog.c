/*
 * jsonlog.c - the --log file of a training run: one JSON line per epoch
 * (and per log_every steps) from the epoch report, appended.
 */
#include <math.h>
#include <stdio.h>

#include "train/jsonlog.h"

/* Appends one JSON line to the --log file (a file the caller asked for;
 * nothing is written when it cannot be opened). */
void ct_log_json(const char *path, const ct_epoch_report *r, const char *kind)
{
    if (!path)
        return;
    /* room for every number at full length: %.1f of a huge rate is ~310 digits */
    char line[2048];
    int n;
    if (r->regression) /* RMSE and MAE in place of the accuracies; -1: no test split */
        n = snprintf(line, sizeof line, "{\"event\": \"%s\", \"epoch\": %d, \"step\": %ld, \"lr\": %.8g, "
                     "\"train_loss\": %.8g, \"train_rmse\": %.8g, \"train_mae\": %.8g, \"test_loss\": %.8g, "
                     "\"test_rmse\": %.8g, \"test_mae\": %.8g, \"seconds\": %.3f, \"samples_per_second\": %.1f",
                     kind, r->epoch, r->step, r->lr, r->train_loss, r->train_rmse, r->train_mae,
                     isnan(r->test_loss) ? -1.0 : r->test_loss, isnan(r->test_rmse) ? -1.0 : r->test_rmse,
                     isnan(r->test_mae) ? -1.0 : r->test_mae, r->seconds, r->samples_per_second);
    else
        n = snprintf(line, sizeof line, "{\"event\": \"%s\", \"epoch\": %d, \"step\": %ld, \"lr\": %.8g, "
                     "\"train_loss\": %.8g, \"train_accuracy\": %.6f, \"test_loss\": %.8g, "
                     "\"test_accuracy\": %.6f, \"seconds\": %.3f, \"samples_per_second\": %.1f", kind,
                     r->epoch, r->step, r->lr, r->train_loss, r->train_accuracy,
                     isnan(r->test_loss) ? -1.0 : r->test_loss, isnan(r->test_accuracy) ? -1.0 : r->test_accuracy,
                     r->seconds, r->samples_per_second);
    if (n > 0 && (size_t)n < sizeof line && r->loss_scale > 0) /* fp16 */
        n += snprintf(line + n, sizeof line - (size_t)n, ", \"loss_scale\": %.0f, \"skipped_steps\": %ld",
                      (double)r->loss_scale, r->skipped_steps);
    if (n > 0 && (size_t)n < sizeof line && r->reduce_exposed_ms >= 0) /* data-parallel */
        n += snprintf(line + n, sizeof line - (size_t)n, ", \"reduce_exposed_ms\": %.2f", r->reduce_exposed_ms);
    if (n > 0 && (size_t)n < sizeof line && r->tokens) {
        /* language models: the test loss's (else the training loss's)
         * perplexity and, for byte tokens, bits per byte */
        double nats = isnan(r->test_loss) ? r->train_loss : r->test_loss;
        n += snprintf(line + n, sizeof line - (size_t)n, ", \"tokens\": %d, \"perplexity\": %.6g", r->tokens,
                      exp(nats));
        if (r->byte_tokens && n > 0 && (size_t)n < sizeof line)
            n += snprintf(line + n, sizeof line - (size_t)n, ", \"bits_per_byte\": %.6f", nats / log(2.0));
    }
    if (n > 0 && (size_t)n < sizeof line && r->skipped_files >= 0)
        n += snprintf(line + n, sizeof line - (size_t)n, ", \"skipped_files\": %ld", r->skipped_files);
    if (n > 0 && (size_t)n < sizeof line && r->norm_images >= 0)
        n += snprintf(line + n, sizeof line - (size_t)n, ", \"norm_images\": %ld", r->norm_images);
    if (n > 0 && (size_t)n < sizeof line)
        n += snprintf(line + n, sizeof line - (size_t)n, "}\n");
    if (n <= 0 || (size_t)n >= sizeof line)
        return;
    FILE *f = fopen(path, "a");
    if (!f)
        return;
    fwrite(line, 1, (size_t)n, f);
    fclose(f);
}
