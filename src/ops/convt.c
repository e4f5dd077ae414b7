/*
 * convt.c - transposed convolution on conv2d's launchers (see convt.h).
 */
#include "ops/convt.h"

#include <limits.h>

#include "ops/dense.h"

/* D: the convolution whose input gradient this is */
static int conv_of(ct_context *ctx, const ct_convt2d_desc *d, ct_conv2d_desc *D, int *oh, int *ow)
{
    if (!d || d->n < 1 || d->c_in < 1 || d->h < 1 || d->w < 1 || d->c_out < 1 || d->k < 1 || d->stride < 1 ||
        d->pad < 0 || d->dil < 1 || d->out_pad < 0 || d->out_pad >= d->stride)
        return ct_fail(ctx, CT_ERR_SHAPE, "conv_transpose2d: input (%d, %d, %d, %d), %d outputs, kernel %d, "
                       "stride %d, padding %d, output_padding %d, dilation %d: HINT: sizes, stride and dilation "
                       ">= 1, padding >= 0, output_padding below the stride", d ? d->n : 0, d ? d->c_in : 0,
                       d ? d->h : 0, d ? d->w : 0, d ? d->c_out : 0, d ? d->k : 0, d ? d->stride : 0,
                       d ? d->pad : 0, d ? d->out_pad : 0, d ? d->dil : 0);
    long span = (long)d->dil * (d->k - 1) + d->out_pad + 1 - 2L * d->pad;
    long h = (long)(d->h - 1) * d->stride + span, w = (long)(d->w - 1) * d->stride + span;
    if (h < 1 || w < 1 || h > INT_MAX / 2 || w > INT_MAX / 2)
        return ct_fail(ctx, CT_ERR_SHAPE, "conv_transpose2d: input %dx%d with kernel %d, stride %d, padding %d, "
                       "output_padding %d, dilation %d gives an output of %ldx%ld: HINT: the padding removes "
                       "more than the kernel adds", d->h, d->w, d->k, d->stride, d->pad, d->out_pad, d->dil, h, w);
    *D = (ct_conv2d_desc){ d->n, d->c_out, (int)h, (int)w, d->c_in, d->k, d->k, d->stride, d->stride,
                           d->pad, d->pad, d->dil, d->dil };
    *oh = (int)h;
    *ow = (int)w;
    int dh = 0, dw = 0;
    int st = ct_conv2d_out_shape(ctx, D, &dh, &dw);
    if (!st && (dh != d->h || dw != d->w))
        st = ct_fail(ctx, CT_ERR_INTERNAL, "conv_transpose2d: the convolution of %ldx%ld gives %dx%d, not %dx%d",
                     h, w, dh, dw, d->h, d->w);
    return st;
}

int ct_convt2d_out_shape(ct_context *ctx, const ct_convt2d_desc *d, int *oh, int *ow)
{
    ct_conv2d_desc D;
    int h = 0, w = 0;
    int st = conv_of(ctx, d, &D, &h, &w);
    if (!st && oh)
        *oh = h;
    if (!st && ow)
        *ow = w;
    return st;
}

size_t ct_convt2d_workspace_for(const ct_context *ctx, const ct_convt2d_desc *d)
{
    ct_conv2d_desc D;
    int h = 0, w = 0;
    if (conv_of(NULL, d, &D, &h, &w))
        return 0;
    return ct_conv2d_workspace_for(ctx, &D);
}

int ct_convt2d_forward(ct_context *ctx, const ct_convt2d_desc *d, ct_buf y, ct_buf x, ct_buf w, ct_buf b,
                       ct_buf ws, size_t ws_elems)
{
    ct_conv2d_desc D;
    int h = 0, wd = 0;
    int st = conv_of(ctx, d, &D, &h, &wd);
    if (st || (st = ct_conv2d_backward(ctx, &D, y, (ct_buf){ NULL, 0 }, (ct_buf){ NULL, 0 }, x, (ct_buf){ NULL, 0 },
                                       w, ws, ws_elems)))
        return st;
    return b.mem ? ct_bias_act_forward(ctx, y, y, b, d->n, d->c_out, h * wd, CT_ACT_NONE) : CT_OK;
}

int ct_convt2d_backward(ct_context *ctx, const ct_convt2d_desc *d, ct_buf dx, ct_buf dw, ct_buf db, ct_buf dy,
                        ct_buf x, ct_buf w, ct_buf ws, size_t ws_elems)
{
    ct_conv2d_desc D;
    int h = 0, wd = 0;
    int st = conv_of(ctx, d, &D, &h, &wd);
    if (st)
        return st;
    if (db.mem && (st = ct_bias_backward(ctx, db, dy, d->n, d->c_out, h * wd)))
        return st;
    if (dx.mem && (st = ct_conv2d_forward(ctx, &D, dx, dy, w, (ct_buf){ NULL, 0 }, ws, ws_elems)))
        return st;
    if (dw.mem)
        st = ct_conv2d_backward(ctx, &D, (ct_buf){ NULL, 0 }, dw, (ct_buf){ NULL, 0 }, x, dy, w, ws, ws_elems);
    return st;
}
