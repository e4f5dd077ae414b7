/*
 * loss.h - losses, mean over the batch: fused softmax + cross-entropy with
 * integer labels, and mean-squared error. Forwards write their scalar to a
 * device buffer (no host read here: the trainer reads it when it wants to
 * log). Backwards take dloss_scale, the gradient of whatever the trainer
 * minimises with respect to the loss (1 for plain training; a loss-scaling
 * factor otherwise).
 *
 * Labels live on the device as int32 in a buffer passed as a ct_buf (its
 * offset counts int32 elements). The trainer validates labels on the host
 * before the upload; a label outside [0, K) that reaches the device anyway
 * is never used as an index: its row makes the loss NaN, is not counted as
 * correct, and gets NaN gradients.
 */
#ifndef CT_OPS_LOSS_H
#define CT_OPS_LOSS_H

#include "ops/ops.h"

/* loss[0] = mean_r (logsumexp(x_r) - x_r[labels_r]); correct[0] = the number
 * of rows whose argmax (first index among ties, as torch.argmax) equals the
 * label, as a float (exact: N < 2^24); correct.mem may be NULL. ws receives
 * each row's loss and hit, which a fixed-order sum then adds up, and in the
 * GPU class each row's maximum and exponential sum, which
 * ct_softmax_xent_backward_saved reads back.
 * x: (N, K), labels: (N) int32, loss: (1), correct: (1), ws: (4 N) */
int ct_softmax_xent_forward(ct_context *ctx, ct_buf loss, ct_buf correct, ct_buf x, ct_buf labels,
                            size_t N, size_t K, ct_buf ws);
/* Floats of workspace ct_softmax_xent_forward uses for N rows. */
size_t ct_softmax_xent_workspace(size_t N);
/* dx = (softmax(x) - onehot(labels)) / N * dloss_scale (written).
 * x, dx: (N, K), labels: (N) int32 */
int ct_softmax_xent_backward(ct_context *ctx, ct_buf dx, ct_buf x, ct_buf labels, size_t N,
                             size_t K, float dloss_scale);
/* Per pixel (segmentation): scores x (n, K, P), an image's K class planes
 * of P pixels, labels (n P) int32 by image then pixel; the mean over the n
 * P pixels (PyTorch's cross_entropy on (N, K, H, W) scores and (N, H, W)
 * labels) and the right pixels' count. ws: ct_softmax_xent_workspace(n P).
 * The backward writes dx (n, K, P) = (softmax - onehot) / (n P) *
 * dloss_scale. */
int ct_softmax_xent_px_forward(ct_context *ctx, ct_buf loss, ct_buf correct, ct_buf x, ct_buf labels, size_t n,
                               size_t K, size_t P, ct_buf ws);
int ct_softmax_xent_px_backward(ct_context *ctx, ct_buf dx, ct_buf x, ct_buf labels, size_t n, size_t K, size_t P,
                                float dloss_scale);
/* Whether ct_softmax_xent_forward in ctx's class, as it is now, leaves the
 * row statistics in ws (the GPU class does). */
int ct_softmax_xent_saves(const ct_context *ctx, size_t N, size_t K);
/* The same backward, after a ct_softmax_xent_forward of the same x, labels,
 * N and K that saved the row statistics in ws (unchanged since): the GPU
 * class then reads each row's maximum and exponential sum from ws instead
 * of recomputing them, one read of the logits instead of two. Other classes
 * ignore ws; ws.mem NULL recomputes. */
int ct_softmax_xent_backward_saved(ct_context *ctx, ct_buf dx, ct_buf x, ct_buf labels, size_t N,
                                   size_t K, float dloss_scale, ct_buf ws);

/* loss[0] = mean((x - t)^2), and mae[0] = mean(|x - t|) for the reports
 * of regression training (mae.mem may be NULL). x, t: (n), loss, mae: (1) */
int ct_mse_forward(ct_context *ctx, ct_buf loss, ct_buf mae, ct_buf x, ct_buf t, size_t n);
/* dx = 2 (x - t) / n * dloss_scale, dt = -dx (both written; dt.mem may be
 * NULL when the target needs no gradient). x, t, dx, dt: (n) */
int ct_mse_backward(ct_context *ctx, ct_buf dx, ct_buf dt, ct_buf x, ct_buf t, size_t n,
                    float dloss_scale);

/* Binary cross-entropy on logits (multi-label, torch.nn.BCEWithLogitsLoss):
 * loss[0] = the mean over n elements, correct[0] = how many have (x > 0) ==
 * (t > 0.5), divided by K, the labels per sample (correct.mem may be NULL).
 * x, t: (n), loss, correct: (1) */
int ct_bce_forward(ct_context *ctx, ct_buf loss, ct_buf correct, ct_buf x, ct_buf t, size_t n, size_t K);
/* dx = (sigmoid(x) - t) / n * dloss_scale, dt = -x / n * dloss_scale
 * (dt.mem may be NULL). x, t, dx, dt: (n) */
int ct_bce_backward(ct_context *ctx, ct_buf dx, ct_buf dt, ct_buf x, ct_buf t, size_t n, float dloss_scale);

#endif /* CT_OPS_LOSS_H */
