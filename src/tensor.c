/*
 * tensor.c - arenas and views.
 */
#include <string.h>

#include "cl/runtime.h"
#include "tensor.h"

int ct_arena_create(ct_context *ctx, ct_arena *arena, const char *name, size_t elements)
{
    memset(arena, 0, sizeof *arena);
    arena->name = name;
    if (elements == 0)
        elements = 16;
    int st = ct_buffer_create(ctx, elements * sizeof(float), &arena->mem);
    if (st)
        return ct_fail(ctx, st, "arena '%s' (%zu bytes): %s", name, elements * sizeof(float),
                       ct_context_last_error(ctx));
    arena->capacity = elements;
    return CT_OK;
}

void ct_arena_release(ct_arena *arena)
{
    ct_buffer_release(&arena->mem);
    arena->capacity = arena->used = 0;
}

static void set_shape(ct_tensor *t, int ndim, const int *shape)
{
    t->ndim = ndim;
    size_t s = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        t->shape[i] = shape[i];
        t->stride[i] = s;
        s *= (size_t)shape[i];
    }
    for (int i = ndim; i < CT_MAX_DIMS; i++) {
        t->shape[i] = 1;
        t->stride[i] = 1;
    }
}

static int check_shape(ct_context *ctx, int ndim, const int *shape)
{
    if (ndim < 1 || ndim > CT_MAX_DIMS)
        return ct_fail(ctx, CT_ERR_SHAPE, "a tensor has 1 to %d dimensions, not %d", CT_MAX_DIMS, ndim);
    for (int i = 0; i < ndim; i++)
        if (shape[i] < 1)
            return ct_fail(ctx, CT_ERR_SHAPE, "dimension %d of a tensor is %d", i, shape[i]);
    return CT_OK;
}

int ct_arena_tensor(ct_context *ctx, ct_arena *arena, ct_tensor *t, int ndim, const int *shape)
{
    int st = check_shape(ctx, ndim, shape);
    if (st)
        return st;
    size_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= (size_t)shape[i];
    size_t at = (arena->used + 15) & ~(size_t)15;
    if (at + n > arena->capacity)
        return ct_fail(ctx, CT_ERR_NO_MEMORY,
                       "arena '%s' is full: %zu of %zu elements used, %zu more asked",
                       arena->name ? arena->name : "?", at, arena->capacity, n);
    t->buf.mem = arena->mem;
    t->buf.off = at;
    set_shape(t, ndim, shape);
    arena->used = at + n;
    return CT_OK;
}

size_t ct_tensor_numel(const ct_tensor *t)
{
    size_t n = 1;
    for (int i = 0; i < t->ndim; i++)
        n *= (size_t)t->shape[i];
    return n;
}

int ct_tensor_is_contiguous(const ct_tensor *t)
{
    size_t s = 1;
    for (int i = t->ndim - 1; i >= 0; i--) {
        if (t->shape[i] != 1 && t->stride[i] != s)
            return 0;
        s *= (size_t)t->shape[i];
    }
    return 1;
}

int ct_tensor_reshape(ct_context *ctx, const ct_tensor *t, ct_tensor *view, int ndim, const int *shape)
{
    int st = check_shape(ctx, ndim, shape);
    if (st)
        return st;
    if (!ct_tensor_is_contiguous(t))
        return ct_fail(ctx, CT_ERR_SHAPE, "reshape of a non-contiguous tensor");
    size_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= (size_t)shape[i];
    if (n != ct_tensor_numel(t))
        return ct_fail(ctx, CT_ERR_SHAPE, "reshape from %zu to %zu elements", ct_tensor_numel(t), n);
    view->buf = t->buf;
    set_shape(view, ndim, shape);
    return CT_OK;
}
