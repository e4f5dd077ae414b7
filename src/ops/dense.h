/*
 * dense.h - fully connected layer as PyTorch's Linear (y = x W^T + b), and
 * the per-channel bias pieces that dense and conv layers share: a fused
 * bias + activation forward and the bias gradient.
 */
#ifndef CT_OPS_DENSE_H
#define CT_OPS_DENSE_H

#include "ops/act.h"

/* y = x W^T + b. b.mem == NULL: no bias.
 * x: (n, in); w: (out, in); b: (out); y: (n, out) */
int ct_dense_forward(ct_context *ctx, ct_buf y, ct_buf x, ct_buf w, ct_buf b, int n, int in,
                     int out);
/* y = act(x W^T + b), the bias and activation in the product's last pass
 * where the GPU class runs it on cltrain's own kernel (the same bits as the
 * product followed by ct_bias_act_forward). */
int ct_dense_forward_act(ct_context *ctx, ct_buf y, ct_buf x, ct_buf w, ct_buf b, int n, int in,
                         int out, ct_act act);

/* dx = dy W (written); dw += dy^T x; db += column sums of dy. Any of dx,
 * dw, db with mem == NULL is skipped (a first layer needs no dx, a layer
 * without bias no db).
 * dy: (n, out); x: (n, in); w: (out, in); dx: (n, in); dw: (out, in); db: (out) */
int ct_dense_backward(ct_context *ctx, ct_buf dx, ct_buf dw, ct_buf db, ct_buf dy, ct_buf x,
                      ct_buf w, int n, int in, int out);

/* The same two with tensors in the context's 16-bit activation storage
 * (ct_context_set_act16; GPU class): CT_DENSE_X16, x and dx hold its
 * elements; CT_DENSE_Y16, y and dy do; the others are float32. The products
 * read and write them in place (ct_gemm_cl_epi.s16) and the bias gradient
 * sums the 16-bit dy: no float copies. 0: as the functions above. */
#define CT_DENSE_X16 1
#define CT_DENSE_Y16 2
int ct_dense_forward_s(ct_context *ctx, ct_buf y, ct_buf x, ct_buf w, ct_buf b, int n, int in, int out,
                       ct_act act, int s16);
/* (_backward_s: db's columns [skip_at, skip_at + skip_len) left as they
 * are, a bias whose exact gradient is zero: attention's key bias) */
int ct_dense_backward_s(ct_context *ctx, ct_buf dx, ct_buf dw, ct_buf db, ct_buf dy, ct_buf x, ct_buf w,
                        int n, int in, int out, size_t skip_at, size_t skip_len, int s16);
/* y = act(x + b[channel]) over the layout (n, c, hw), in one pass; y may
 * alias x. b.mem == NULL: no bias (a plain activation). x, y and dy here
 * and below are layer activations: in the context's storage.
 * x, y: (n, c, hw); b: (c) */
int ct_bias_act_forward(ct_context *ctx, ct_buf y, ct_buf x, ct_buf b, int n, int c, int hw,
                        ct_act act);

/* db += sum of dy over n and hw, deterministic (fixed summation order).
 * dy: (n, c, hw); db: (c) */
int ct_bias_backward(ct_context *ctx, ct_buf db, ct_buf dy, int n, int c, int hw);
/* db += column sums of dy (n, c) but for the columns [skip_at, skip_at +
 * skip_len), which db keeps as they are; the same launches as
 * ct_bias_backward with hw = 1. */
int ct_bias_backward_skip(ct_context *ctx, ct_buf db, ct_buf dy, int n, int c, size_t skip_at,
                          size_t skip_len);

/* The backward of ct_bias_act_forward: dy becomes the pre-activation's
 * gradient dy * act'(x, y) (in place), and db += its sums over n and hw.
 * On the GPU class one kernel does both; the CPU class runs the
 * activation's chunked pass first. x, y: as ct_act_backward takes them
 * (the activation's input and output; for relu-like ones y may stand for x).
 * dy, x, y: (n, c, hw); db: (c) */
int ct_bias_act_backward(ct_context *ctx, ct_buf db, ct_buf dy, ct_act act, ct_buf x, ct_buf y, int n,
                         int c, int hw);

#endif /* CT_OPS_DENSE_H */
