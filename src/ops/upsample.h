/*
 * upsample.h - 2-D upsampling by an integer scale, as
 * torch.nn.functional.interpolate(x, scale_factor=S, mode=...): nearest, or
 * bilinear with align_corners=False. x (N, C, H, W) -> y (N, C, S H, S W).
 * The backward gathers each input's share of dy (deterministic).
 */
#ifndef CT_OPS_UPSAMPLE_H
#define CT_OPS_UPSAMPLE_H

#include "ops/ops.h"

/* y (planes, S h, S w) from x (planes, h, w); planes = N C */
int ct_upsample_forward(ct_context *ctx, ct_buf y, ct_buf x, size_t planes, int h, int w, int S, int bilinear);
/* dx (planes, h, w) written from dy (planes, S h, S w) */
int ct_upsample_backward(ct_context *ctx, ct_buf dx, ct_buf dy, size_t planes, int h, int w, int S, int bilinear);

#endif /* CT_OPS_UPSAMPLE_H */
