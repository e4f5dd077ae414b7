/*
 * hostmap.h - maps the device buffers a host-side computation touches (the
 * host GEMM path, the direct convolution) into host memory, on devices that
 * share it with the host, where mapping costs no copy.
 *
 * Several ranges may lie in one buffer (activations share an arena): each
 * distinct buffer is mapped once over the union of its ranges, since
 * mapping one buffer twice for writing is undefined in OpenCL. Mapping is
 * blocking, so everything enqueued before has finished when it returns.
 *
 * A buffer the context holds (ct_hold_register: the CPU class's net arenas)
 * is mapped whole at its first use and stays mapped across host ops until
 * a command other than a map is enqueued (ct_hold_sync), so a run of host
 * ops (convolution, batch norm, ReLU, add, ...) costs one blocking call per
 * buffer instead of one per op and buffer: ResNet-56 made ~975 blocking
 * maps per step, 40 ms of its ~430 ms. The queue stays drained while a
 * mapping is held, as nothing is enqueued meanwhile.
 */
#ifndef CT_HOST_HOSTMAP_H
#define CT_HOST_HOSTMAP_H

#include "cl/runtime.h"

#define CT_HMAP_MAX 10

typedef struct ct_hmap_range {
    cl_mem mem;    /* NULL: skipped (host stays NULL) */
    size_t off, n; /* elements */
    int write;
    float *host;   /* set by ct_hmap_map: element `off` */
} ct_hmap_range;

typedef struct ct_hmap {
    int nb;
    cl_mem bufs[CT_HMAP_MAX];
    void *maps[CT_HMAP_MAX]; /* mapped by this op: unmapped by ct_hmap_unmap */
    void *held[CT_HMAP_MAX]; /* the context's held mapping (ct_hold_register) */
} ct_hmap;

/* Maps the buffers of r[0..n) (n <= CT_HMAP_MAX); `what` names the caller
 * in messages. On failure nothing stays mapped. */
int ct_hmap_map(ct_context *ctx, ct_hmap_range *r, int n, ct_hmap *m, const char *what);
/* Unmaps everything; returns st, or the unmap error if st was CT_OK. */
int ct_hmap_unmap(ct_context *ctx, ct_hmap *m, int st, const char *what);

#endif /* CT_HOST_HOSTMAP_H */
