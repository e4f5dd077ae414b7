/*
 * upsample.c - reference upsampling, in double: each output's sources and
 * weights, the backward as the forward's transpose (a scatter).
 */
#include <string.h>

#include "ref/upsample.h"

/* output o's two sources along an axis of n and their weights */
static void src(int o, int S, int n, int bilinear, int i[2], double wt[2])
{
    if (!bilinear) {
        i[0] = i[1] = o / S;
        wt[0] = 1, wt[1] = 0;
        return;
    }
    double s = ((double)o + 0.5) / S - 0.5;
    s = s < 0 ? 0 : s;
    int l = (int)s;
    l = l < n - 1 ? l : n - 1;
    i[0] = l;
    i[1] = l + (l < n - 1);
    wt[1] = s - l;
    wt[0] = 1 - wt[1];
}

static void walk(double *y, const double *x, double *dx, const double *dy, size_t planes, int h, int w, int S,
                 int bilinear)
{
    int oh = h * S, ow = w * S;
    for (size_t p = 0; p < planes; p++)
        for (int oy = 0; oy < oh; oy++)
            for (int ox = 0; ox < ow; ox++) {
                int iy[2], ix[2];
                double wy[2], wx[2], v = 0;
                src(oy, S, h, bilinear, iy, wy);
                src(ox, S, w, bilinear, ix, wx);
                size_t o = (p * (size_t)oh + (size_t)oy) * (size_t)ow + (size_t)ox;
                for (int a = 0; a < 2; a++)
                    for (int b = 0; b < 2; b++) {
                        size_t i = (p * (size_t)h + (size_t)iy[a]) * (size_t)w + (size_t)ix[b];
                        if (y)
                            v += wy[a] * wx[b] * x[i];
                        else
                            dx[i] += wy[a] * wx[b] * dy[o];
                    }
                if (y)
                    y[o] = v;
            }
}

void ct_ref_upsample_forward(double *y, const double *x, size_t planes, int h, int w, int S, int bilinear)
{
    walk(y, x, NULL, NULL, planes, h, w, S, bilinear);
}

void ct_ref_upsample_backward(double *dx, const double *dy, size_t planes, int h, int w, int S, int bilinear)
{
    memset(dx, 0, planes * (size_t)h * (size_t)w * sizeof *dx);
    walk(NULL, NULL, dx, dy, planes, h, w, S, bilinear);
}
