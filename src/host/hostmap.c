/*
 * hostmap.c - one blocking map per distinct buffer over the union of the
 * ranges used in it, or the buffer's held mapping (hostmap.h).
 */
#include "host/hostmap.h"

#include <stdio.h>
#include <string.h>

int ct_hmap_map(ct_context *ctx, ct_hmap_range *r, int n, ct_hmap *m, const char *what)
{
    size_t lo[CT_HMAP_MAX], hi[CT_HMAP_MAX];
    int wr[CT_HMAP_MAX], idx[CT_HMAP_MAX];
    memset(m, 0, sizeof *m);
    if (n > CT_HMAP_MAX)
        return ct_fail(ctx, CT_ERR_INTERNAL, "%s: %d ranges to map, at most %d", what, n,
                       CT_HMAP_MAX);
    for (int i = 0; i < n; i++) {
        idx[i] = -1;
        r[i].host = NULL;
        if (!r[i].mem || !r[i].n)
            continue;
        size_t a = r[i].off, b = r[i].off + r[i].n;
        int j = 0;
        while (j < m->nb && m->bufs[j] != r[i].mem)
            j++;
        if (j == m->nb) {
            m->bufs[m->nb] = r[i].mem;
            lo[j] = a;
            hi[j] = b;
            wr[j] = r[i].write;
            m->nb++;
        } else {
            lo[j] = a < lo[j] ? a : lo[j];
            hi[j] = b > hi[j] ? b : hi[j];
            wr[j] |= r[i].write;
        }
        idx[i] = j;
    }
    size_t base[CT_HMAP_MAX];
    for (int j = 0; j < m->nb; j++) {
        int h = ct_hold_index(ctx, m->bufs[j]);
        if (h >= 0) {
            /* a held buffer: mapped whole, once, until the next command */
            if (!ctx->held[h].ptr) {
                cl_int err = CL_SUCCESS;
                ct_count_blocking(ctx);
                void *p = clEnqueueMapBuffer(ctx->queue, m->bufs[j], CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
                                             ctx->held[h].bytes, 0, NULL, NULL, &err);
                if (err != CL_SUCCESS) {
                    char msg[160];
                    snprintf(msg, sizeof msg, "%s: mapping a buffer into host memory", what);
                    return ct_hmap_unmap(ctx, m, ct_cl_fail(ctx, err, msg), what);
                }
                ctx->held[h].ptr = p;
                ctx->nheld_mapped++;
            }
            m->maps[j] = NULL; /* not the op's to unmap */
            m->held[j] = ctx->held[h].ptr;
            base[j] = 0;
            continue;
        }
        cl_int err = CL_SUCCESS;
        cl_map_flags flags = wr[j] ? (CL_MAP_READ | CL_MAP_WRITE) : CL_MAP_READ;
        ct_count_blocking(ctx);
        m->maps[j] = clEnqueueMapBuffer(ctx->queue, m->bufs[j], CL_TRUE, flags,
                                        lo[j] * sizeof(float), (hi[j] - lo[j]) * sizeof(float), 0,
                                        NULL, NULL, &err);
        if (err != CL_SUCCESS) {
            m->maps[j] = NULL;
            char msg[160];
            snprintf(msg, sizeof msg, "%s: mapping a buffer into host memory", what);
            return ct_hmap_unmap(ctx, m, ct_cl_fail(ctx, err, msg), what);
        }
        base[j] = lo[j];
    }
    for (int i = 0; i < n; i++)
        if (idx[i] >= 0)
            r[i].host = (float *)(m->held[idx[i]] ? m->held[idx[i]] : m->maps[idx[i]]) +
                        (r[i].off - base[idx[i]]);
    return CT_OK;
}

int ct_hmap_unmap(ct_context *ctx, ct_hmap *m, int st, const char *what)
{
    for (int j = 0; j < m->nb; j++) {
        if (!m->maps[j])
            continue;
        cl_int err = clEnqueueUnmapMemObject(ctx->queue, m->bufs[j], m->maps[j], 0, NULL, NULL);
        if (err != CL_SUCCESS && st == CT_OK) {
            char msg[160];
            snprintf(msg, sizeof msg, "%s: unmapping a buffer", what);
            st = ct_cl_fail(ctx, err, msg);
        }
        m->maps[j] = NULL;
    }
    memset(m->held, 0, sizeof m->held);
    m->nb = 0;
    return st;
}
