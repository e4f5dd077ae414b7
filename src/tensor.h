/*
 * tensor.h - arenas (one device buffer each) and tensor views into them.
 *
 * A view is {arena buffer, element offset, shape, strides}; kernels and
 * ct_gemm take (cl_mem, offset) pairs, so no sub-buffers are ever made.
 * Layout is NCHW, row-major; reshape and flatten are views.
 */
#ifndef CT_TENSOR_H
#define CT_TENSOR_H

#include <stddef.h>

#include "cltrain/context.h"
#include "cltrain/opencl.h"

#define CT_MAX_DIMS 4

/* A float32 operand: a device buffer and an offset in elements. */
typedef struct ct_buf {
    cl_mem mem;
    cl_ulong off;
} ct_buf;

static inline ct_buf ct_buf_at(ct_buf b, size_t elements)
{
    b.off += elements;
    return b;
}

typedef struct ct_arena {
    cl_mem mem;
    size_t capacity; /* elements */
    size_t used;     /* elements handed out */
    const char *name;
} ct_arena;

typedef struct ct_tensor {
    ct_buf buf;
    int ndim;
    int shape[CT_MAX_DIMS];
    size_t stride[CT_MAX_DIMS]; /* elements */
} ct_tensor;

int ct_arena_create(ct_context *ctx, ct_arena *arena, const char *name, size_t elements);
void ct_arena_release(ct_arena *arena);
/* A contiguous tensor of the given shape carved from the arena, 64-byte
 * aligned (16 floats) so vector loads stay aligned. */
int ct_arena_tensor(ct_context *ctx, ct_arena *arena, ct_tensor *t, int ndim, const int *shape);

size_t ct_tensor_numel(const ct_tensor *t);
int ct_tensor_is_contiguous(const ct_tensor *t);
/* A contiguous view of the same elements with another shape. */
int ct_tensor_reshape(ct_context *ctx, const ct_tensor *t, ct_tensor *view, int ndim, const int *shape);

#endif /* CT_TENSOR_H */
