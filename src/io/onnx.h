/*
 * onnx.h - building an ONNX model and writing it: a graph of nodes over
 * named tensors, with initializers (constant tensors), the graph's inputs
 * and outputs, and metadata; opset 17 of the default domain, IR version 8.
 * It hides protobuf-c: the file is packed by the code protoc-c generates
 * at build time from onnx.proto (meson.build), so nothing here knows the
 * wire format.
 *
 * Errors are sticky: the first failure (out of host memory, or one a
 * caller records with ct_onnx_fail) is kept, every later call does
 * nothing and returns it, and ct_onnx_write reports it. A caller can make
 * a run of calls and check once. Every string and array passed in is
 * copied; the graph owns what it holds.
 */
#ifndef CT_IO_ONNX_H
#define CT_IO_ONNX_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

#define CT_ONNX_OPSET 17
#define CT_ONNX_IR_VERSION 8

/* Element types, as onnx.proto's TensorProto.DataType numbers them. */
enum {
    CT_ONNX_FLOAT = 1,
    CT_ONNX_INT64 = 7,
    CT_ONNX_BOOL = 9,
};

/* A dimension of CT_ONNX_BATCH in a graph input or output is the symbolic
 * batch dimension "N". */
#define CT_ONNX_BATCH (-1)

typedef struct ct_onnx ct_onnx;

/* A graph named `name`; NULL when out of host memory. */
ct_onnx *ct_onnx_new(const char *name);
void ct_onnx_free(ct_onnx **g);

/* The first error so far (CT_OK: none). */
int ct_onnx_status(const ct_onnx *g);
/* How many nodes and initializers the graph holds. */
void ct_onnx_counts(const ct_onnx *g, size_t *nodes, size_t *initializers);
/* Records a failure (its message already set with ct_fail) and returns it. */
int ct_onnx_fail(ct_onnx *g, int status);

/* A name the graph owns, printf-style, for intermediate tensors and
 * constants ("fc1/flat"); "" after an error. */
const char *ct_onnx_name(ct_onnx *g, const char *fmt, ...) CT_PRINTF(2, 3);

/* The graph's inputs and outputs: element type and dimensions (a dim of
 * CT_ONNX_BATCH is "N"). */
int ct_onnx_input(ct_onnx *g, const char *name, int type, int ndim, const int64_t *dims);
int ct_onnx_output(ct_onnx *g, const char *name, int type, int ndim, const int64_t *dims);

/* Initializers: F32 from little-endian bytes (data need not be aligned),
 * and int64 values; numel is the product of dims (1 for ndim 0). */
int ct_onnx_init_float(ct_onnx *g, const char *name, int ndim, const int64_t *dims, const void *data);
int ct_onnx_init_int64(ct_onnx *g, const char *name, int ndim, const int64_t *dims, const int64_t *data);
/* Shorthands that return the name: a 1-D int64 constant of n values (the
 * shapes, axes and pads ops take as inputs), and a float scalar. */
const char *ct_onnx_ints(ct_onnx *g, const char *name, int n, const int64_t *v);
const char *ct_onnx_scalar(ct_onnx *g, const char *name, float v);

/* A node's attribute. */
enum { CT_ONNX_ATTR_INT, CT_ONNX_ATTR_FLOAT, CT_ONNX_ATTR_INTS, CT_ONNX_ATTR_STRING };

typedef struct ct_onnx_attr {
    const char *name;
    int kind;
    int64_t i;
    float f;
    const int64_t *ints;
    int n;
    const char *s;
} ct_onnx_attr;

#define CT_ONNX_INT(nm, v) { .name = (nm), .kind = CT_ONNX_ATTR_INT, .i = (v) }
#define CT_ONNX_FLOAT(nm, v) { .name = (nm), .kind = CT_ONNX_ATTR_FLOAT, .f = (float)(v) }
#define CT_ONNX_STR(nm, v) { .name = (nm), .kind = CT_ONNX_ATTR_STRING, .s = (v) }
#define CT_ONNX_INTS(nm, ...)                                                                        \
    { .name = (nm), .kind = CT_ONNX_ATTR_INTS, .ints = (const int64_t[]){ __VA_ARGS__ },              \
      .n = (int)(sizeof((const int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t)) }

/* Argument lists for ct_onnx_node: CT_ONNX_NAMES("x", "w") is an array and
 * its count, CT_ONNX_ATTRS(CT_ONNX_INT("axis", 1), ...) likewise, and
 * CT_ONNX_NO_ATTRS none. An input named "" is an omitted optional one. */
#define CT_ONNX_NAMES(...)                                                                           \
    (const char *const[]){ __VA_ARGS__ },                                                            \
        (int)(sizeof((const char *const[]){ __VA_ARGS__ }) / sizeof(const char *))
#define CT_ONNX_ATTRS(...)                                                                           \
    (const ct_onnx_attr[]){ __VA_ARGS__ },                                                           \
        (int)(sizeof((const ct_onnx_attr[]){ __VA_ARGS__ }) / sizeof(ct_onnx_attr))
#define CT_ONNX_NO_ATTRS NULL, 0

/* Appends a node of operator `op` (default domain); nodes must come in
 * an order where every input is defined before it is read. The node is
 * named after its first output. */
int ct_onnx_node(ct_onnx *g, const char *op, const char *const *in, int nin, const char *const *out, int nout,
                 const ct_onnx_attr *attrs, int nattrs);

/* Shorthands for nodes without attributes: one input or two, one output. */
int ct_onnx_unary(ct_onnx *g, const char *op, const char *x, const char *y);
int ct_onnx_binary(ct_onnx *g, const char *op, const char *a, const char *b, const char *y);

/* The model's metadata_props (key, value) and the graph's doc_string. */
int ct_onnx_meta(ct_onnx *g, const char *key, const char *value);
int ct_onnx_doc(ct_onnx *g, const char *doc);

/* Writes the model to `path` atomically (a temporary file, fsync, rename:
 * on any failure `path` is untouched), or returns the graph's error. A
 * model over protobuf's 2 GiB limit is refused. */
int ct_onnx_write(ct_onnx *g, const char *path, const char *producer_version);

#endif /* CT_IO_ONNX_H */
