/*
 * cli_bench.c - cltrain bench: full training steps timed on synthetic data
 * for each model and device, as a table (with --profile, per layer and per
 * layer type) or as JSON.
 */
#include <stdio.h>
#include <string.h>

#include <cltrain/cltrain.h>

#include "cli.h"
#include "cli_args.h"

/* One entry of "launch_list": a kernel, or a matrix product. */
static void print_launch(const ct_bench_launch *l, int first)
{
    printf("%s\n    {\"layer\": ", first ? "" : ",");
    if (l->layer)
        json_string(l->layer);
    else
        printf("null");
    if (l->kernel[0]) {
        printf(", \"kernel\": ");
        json_string(l->kernel);
        printf(", \"global\": %llu, \"local\": %llu", (unsigned long long)l->global,
               (unsigned long long)l->local);
    } else {
        printf(", \"gemm\": [%llu, %llu, %llu], \"trans\": \"%s%s\", \"conv\": %s, \"batch\": %llu, "
               "\"k_splits\": %llu", (unsigned long long)l->m, (unsigned long long)l->n, (unsigned long long)l->k,
               l->ta ? "T" : "N", l->tb ? "T" : "N", l->conv ? "true" : "false", (unsigned long long)l->batch,
               (unsigned long long)l->k_splits);
    }
    printf(", \"bytes_read\": %lld, \"bytes_written\": %lld}", (long long)l->bytes_read,
           (long long)l->bytes_written);
}

int cmd_bench(const cli_args *a)
{
    static const char *const seed_models[] = { "fcn-s", "alexnet-s", "resnet50", "fcn-r",
                                               "alexnet-r", "resnet56", "lstm" };
    const char *models[CLI_MAX_MODELS], *devices[CLI_MAX_DEVICES];
    int nm = a->nmodels, nd = a->ndevices, json = a->json;
    ct_bench_options bo = a->bench;
    memcpy(models, a->models, sizeof models);
    memcpy(devices, a->devices, sizeof devices);
    if (!nm)
        for (size_t i = 0; i < sizeof seed_models / sizeof seed_models[0]; i++)
            models[nm++] = seed_models[i];
    if (!nd)
        devices[nd++] = "all";
    /* expand device selectors into single devices */
    ct_device_info *devs = NULL;
    size_t count = 0, picked[64], np = 0;
    if (ct_device_list(&devs, &count)) {
        fprintf(stderr, "cltrain: %s\n", ct_last_error());
        return 1;
    }
    for (int d = 0; d < nd; d++) {
        size_t idx[64], n = 0;
        if (ct_device_select(devs, count, devices[d], idx, 64, &n)) {
            fprintf(stderr, "cltrain: %s\n", ct_last_error());
            ct_device_list_free(&devs);
            return 1;
        }
        for (size_t k = 0; k < n && np < 64; k++)
            picked[np++] = idx[k];
    }
    int failures = 0;
    if (!json)
        printf("%-10s %6s %-5s %12s %10s %12s %9s %10s  %s\n", "model", "batch", "dev", "median ms",
               "min ms", "samples/s", "GFLOP/s", "plan MiB", "device");
    else
        printf("[");
    int first = 1;
    for (size_t d = 0; d < np; d++) {
        const ct_device_info *di = &devs[picked[d]];
        char sel[32];
        snprintf(sel, sizeof sel, "%u:%u", di->platform_index, di->device_index);
        ct_context *ctx = open_context(sel, OPEN_LAZY | (bo.profile ? OPEN_PROFILING : 0));
        if (!ctx) {
            failures++;
            continue;
        }
        if (ct_context_set_precision(ctx, (ct_precision)a->precision)) {
            fprintf(stderr, "cltrain: bench on %s: %s\n", sel, ct_context_last_error(ctx));
            ct_context_free(&ctx);
            failures++;
            continue;
        }
        for (int k = 0; k < nm; k++) {
            ct_bench_result r;
            bo.model = models[k];
            int st = ct_bench_run(ctx, &bo, &r);
            if (json) {
                printf("%s\n  {\"model\": ", first ? "" : ",");
                json_string(models[k]);
                printf(", \"device\": \"%s\", \"device_name\": ", sel);
                json_string(di->name);
                if (st) {
                    printf(", \"error\": ");
                    json_string(ct_context_last_error(ctx));
                    printf("}");
                } else {
                    printf(", \"kernels\": \"%s\", \"gemm\": \"%s\", \"host_gemm\": \"%s\", "
                           "\"host_blas\": \"%s\", "
                           "\"batch\": %d, \"steps\": %d, "
                           "\"median_ms\": %.3f, \"min_ms\": %.3f, \"samples_per_second\": %.1f, "
                           "\"gflops\": %.2f, \"flops_per_step\": %.0f, \"plan_mib\": %.1f, "
                           "\"batch_bytes\": %.0f, \"activations\": \"%s\"", ct_kernels_str(r.kernels),
                           ct_gemm_path_str(r.gemm), ct_host_gemm_str(), ct_host_blas_core(),
                           r.batch, r.steps, r.median_ms, r.min_ms, r.samples_per_second, r.gflops,
                           r.flops_per_step, r.plan_mib, r.batch_bytes,
                           r.act16 ? ct_precision_str((ct_precision)r.act16) : "fp32");
                    if (r.nlayers) {
                        printf(", \"launches_per_step\": %.2f, \"blocking_calls_per_step\": %.2f, "
                               "\"h2d_bytes_per_step\": %.0f, \"d2h_bytes_per_step\": %.0f, "
                               "\"zero_grad_ms\": %.4f, \"optimizer_ms\": %.4f, \"layers\": [",
                               r.launches_per_step, r.blocking_calls_per_step, r.h2d_bytes_per_step,
                               r.d2h_bytes_per_step, r.zero_grad_ms, r.optimizer_ms);
                        for (int l = 0; l < r.nlayers; l++) {
                            printf("%s{\"name\": ", l ? ", " : "");
                            json_string(r.layers[l].name);
                            printf(", \"type\": ");
                            json_string(r.layers[l].type);
                            printf(", \"forward_ms\": %.4f, \"backward_ms\": %.4f, "
                                   "\"forward_launches\": %.2f, \"backward_launches\": %.2f}",
                                   r.layers[l].forward_ms, r.layers[l].backward_ms,
                                   r.layers[l].forward_launches, r.layers[l].backward_launches);
                        }
                        printf("], \"flops\": %.0f, \"bytes_moved\": %.0f, \"bytes_floor\": %.0f, "
                               "\"unstated_launches\": %d, \"launch_list\": [", r.flops_per_step,
                               r.bytes_moved, r.bytes_floor, r.unstated_launches);
                        for (int l = 0; l < r.nlaunch_list; l++)
                            print_launch(&r.launch_list[l], l == 0);
                        printf("], \"kernel_times\": [");
                        for (int l = 0; l < r.nkernel_times; l++) {
                            printf("%s{\"name\": ", l ? ", " : "");
                            json_string(r.kernel_times[l].name);
                            printf(", \"launches\": %.2f, \"ms\": %.4f}", r.kernel_times[l].launches,
                                   r.kernel_times[l].ms);
                        }
                        printf("]");
                    }
                    printf("}");
                }
                first = 0;
            } else if (st) {
                printf("%-10s %6s %-5s FAILED: %s\n", models[k], "", sel, ct_context_last_error(ctx));
            } else {
                printf("%-10s %6d %-5s %12.2f %10.2f %12.1f %9.2f %10.1f  %s\n", models[k], r.batch, sel,
                       r.median_ms, r.min_ms, r.samples_per_second, r.gflops, r.plan_mib, di->name);
                double tf = 0, tb = 0;
                for (int l = 0; l < r.nlayers; l++)
                    tf += r.layers[l].forward_ms, tb += r.layers[l].backward_ms;
                for (int l = 0; l < r.nlayers; l++)
                    if (r.layers[l].forward_ms + r.layers[l].backward_ms >= 0.005 * (tf + tb))
                        printf("    %-16s %-22s fwd %9.2f ms  bwd %9.2f ms  %5.1f%%  launches %.0f+%.0f\n",
                               r.layers[l].name, r.layers[l].type, r.layers[l].forward_ms,
                               r.layers[l].backward_ms,
                               100 * (r.layers[l].forward_ms + r.layers[l].backward_ms) / (tf + tb),
                               r.layers[l].forward_launches, r.layers[l].backward_launches);
                if (r.nlayers) {
                    printf("    %-16s %-22s fwd %9.2f ms  bwd %9.2f ms  (layers under 0.5%% not shown)\n",
                           "total", "", tf, tb);
                    printf("    %-16s %-22s %9.2f ms\n    %-16s %-22s %9.2f ms\n", "zero grads", "",
                           r.zero_grad_ms, "optimizer", "sgd momentum 0.9", r.optimizer_ms);
                    printf("    per step: %.1f launches, %.1f blocking calls, %.0f bytes host->device "
                           "(the batch: %.0f), %.0f bytes device->host; kernels %s, GEMM %s\n",
                           r.launches_per_step, r.blocking_calls_per_step, r.h2d_bytes_per_step,
                           r.batch_bytes, r.d2h_bytes_per_step, ct_kernels_str(r.kernels),
                           ct_gemm_path_str(r.gemm));
                    printf("    device memory per step: %.1f MiB moved as the launches state it, floor "
                           "%.1f MiB (%.2fx)", r.bytes_moved / 1048576.0, r.bytes_floor / 1048576.0,
                           r.bytes_floor > 0 ? r.bytes_moved / r.bytes_floor : 0.0);
                    if (r.unstated_launches)
                        printf("; %d launches state no bytes", r.unstated_launches);
                    printf("\n");
                }
                /* the same time summed by layer type: many small layers add up */
                for (int l = 0; l < r.nlayers; l++) {
                    int seen = 0;
                    for (int e = 0; e < l && !seen; e++)
                        seen = !strcmp(r.layers[e].type, r.layers[l].type);
                    if (seen)
                        continue;
                    double f = 0, b = 0;
                    int nl = 0;
                    for (int e = l; e < r.nlayers; e++)
                        if (!strcmp(r.layers[e].type, r.layers[l].type))
                            f += r.layers[e].forward_ms, b += r.layers[e].backward_ms, nl++;
                    if (f + b >= 0.005 * (tf + tb))
                        printf("    by type: %-22s x%-4d fwd %9.2f ms  bwd %9.2f ms  %5.1f%%\n",
                               r.layers[l].type, nl, f, b, 100 * (f + b) / (tf + tb));
                }
                /* and by kernel, each launch waited for and timed */
                double tk = 0;
                for (int l = 0; l < r.nkernel_times; l++)
                    tk += r.kernel_times[l].ms;
                for (int l = 0; l < r.nkernel_times && l < 12; l++)
                    printf("    kernel: %-32s x%-6.0f %9.3f ms  %5.1f%%\n", r.kernel_times[l].name,
                           r.kernel_times[l].launches, r.kernel_times[l].ms,
                           tk > 0 ? 100 * r.kernel_times[l].ms / tk : 0.0);
                if (r.nkernel_times > 12)
                    printf("    kernel: (%d more)\n", r.nkernel_times - 12);
            }
            if (!st)
                ct_bench_result_free(&r);
            fflush(stdout);
            failures += st != 0;
        }
        ct_context_free(&ctx);
    }
    if (json)
        printf("\n]\n");
    ct_device_list_free(&devs);
    return failures ? 1 : 0;
}
