/*
 * onnx.c - the ONNX graph builder (src/io/onnx.h) over the protobuf-c code
 * generated from onnx.proto. Every message, string and array the graph
 * holds is allocated through the graph (`alloc`) and freed with it; the
 * growing lists (nodes, initializers, inputs, outputs, metadata) are
 * arrays of message pointers, as protobuf-c's repeated fields are, so the
 * model message points straight at them when it is packed.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "io/onnx.h"
#include "onnx.pb-c.h"

/* a growing array of message pointers */
#define VEC(T)                                                                                       \
    struct {                                                                                         \
        T **v;                                                                                       \
        size_t n, cap;                                                                               \
    }

struct ct_onnx {
    int err;
    void **mem; /* every allocation the messages point into */
    size_t nmem, capmem;
    char *name, *doc;
    VEC(Onnx__NodeProto) nodes;
    VEC(Onnx__TensorProto) inits;
    VEC(Onnx__ValueInfoProto) inputs, outputs;
    VEC(Onnx__StringStringEntryProto) props;
};

static int oom(ct_onnx *g)
{
    if (!g->err)
        g->err = ct_fail(NULL, CT_ERR_NO_MEMORY, "out of host memory building the ONNX graph");
    return g->err;
}

/* n zeroed bytes the graph frees; NULL (and the error set) when out of memory */
static void *alloc(ct_onnx *g, size_t n)
{
    if (g->err)
        return NULL;
    if (g->nmem == g->capmem) {
        size_t cap = g->capmem ? 2 * g->capmem : 256;
        void **m = realloc(g->mem, cap * sizeof *m);
        if (!m) {
            oom(g);
            return NULL;
        }
        g->mem = m;
        g->capmem = cap;
    }
    void *p = calloc(1, n ? n : 1);
    if (!p) {
        oom(g);
        return NULL;
    }
    g->mem[g->nmem++] = p;
    return p;
}

static char *str(ct_onnx *g, const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = alloc(g, n);
    if (d)
        memcpy(d, s, n);
    return d;
}

#define PUSH(g, vec, item)                                                                           \
    do {                                                                                             \
        if ((vec).n == (vec).cap) {                                                                  \
            size_t cap_ = (vec).cap ? 2 * (vec).cap : 64;                                            \
            void *p_ = realloc((vec).v, cap_ * sizeof *(vec).v);                                     \
            if (!p_) {                                                                               \
                oom(g);                                                                              \
                break;                                                                               \
            }                                                                                        \
            (vec).v = p_;                                                                            \
            (vec).cap = cap_;                                                                        \
        }                                                                                            \
        (vec).v[(vec).n++] = (item);                                                                 \
    } while (0)

ct_onnx *ct_onnx_new(const char *name)
{
    ct_onnx *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->name = str(g, name ? name : "cltrain");
    if (g->err)
        ct_onnx_free(&g);
    return g;
}

void ct_onnx_free(ct_onnx **gp)
{
    ct_onnx *g = gp ? *gp : NULL;
    if (!g)
        return;
    for (size_t i = 0; i < g->nmem; i++)
        free(g->mem[i]);
    free(g->mem);
    free(g->nodes.v);
    free(g->inits.v);
    free(g->inputs.v);
    free(g->outputs.v);
    free(g->props.v);
    free(g);
    *gp = NULL;
}

int ct_onnx_status(const ct_onnx *g)
{
    return g->err;
}

void ct_onnx_counts(const ct_onnx *g, size_t *nodes, size_t *initializers)
{
    *nodes = g->nodes.n;
    *initializers = g->inits.n;
}

int ct_onnx_fail(ct_onnx *g, int status)
{
    if (!g->err)
        g->err = status;
    return g->err;
}

const char *ct_onnx_name(ct_onnx *g, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof buf) {
        if (!g->err)
            g->err = ct_fail(NULL, CT_ERR_INTERNAL, "ONNX tensor name too long: %.64s...", buf);
        return "";
    }
    const char *s = str(g, buf);
    return s ? s : "";
}

/* ---- values: the graph's inputs and outputs ---- */

static Onnx__ValueInfoProto *value_info(ct_onnx *g, const char *name, int type, int ndim, const int64_t *dims)
{
    Onnx__ValueInfoProto *vi = alloc(g, sizeof *vi);
    Onnx__TypeProto *tp = alloc(g, sizeof *tp);
    Onnx__TypeProto__Tensor *tt = alloc(g, sizeof *tt);
    Onnx__TensorShapeProto *sh = alloc(g, sizeof *sh);
    Onnx__TensorShapeProto__Dimension **dv = alloc(g, (size_t)ndim * sizeof *dv);
    if (g->err)
        return NULL;
    Onnx__ValueInfoProto vi0 = ONNX__VALUE_INFO_PROTO__INIT;
    Onnx__TypeProto tp0 = ONNX__TYPE_PROTO__INIT;
    Onnx__TypeProto__Tensor tt0 = ONNX__TYPE_PROTO__TENSOR__INIT;
    Onnx__TensorShapeProto sh0 = ONNX__TENSOR_SHAPE_PROTO__INIT;
    *vi = vi0;
    *tp = tp0;
    *tt = tt0;
    *sh = sh0;
    for (int d = 0; d < ndim; d++) {
        Onnx__TensorShapeProto__Dimension *dim = alloc(g, sizeof *dim);
        if (!dim)
            return NULL;
        Onnx__TensorShapeProto__Dimension dim0 = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT;
        *dim = dim0;
        if (dims[d] == CT_ONNX_BATCH) {
            dim->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
            dim->dim_param = str(g, "N");
        } else {
            dim->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
            dim->dim_value = dims[d];
        }
        dv[d] = dim;
    }
    sh->n_dim = (size_t)ndim;
    sh->dim = dv;
    tt->has_elem_type = 1;
    tt->elem_type = type;
    tt->shape = sh;
    tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp->tensor_type = tt;
    vi->name = str(g, name);
    vi->type = tp;
    return g->err ? NULL : vi;
}

int ct_onnx_input(ct_onnx *g, const char *name, int type, int ndim, const int64_t *dims)
{
    Onnx__ValueInfoProto *vi = value_info(g, name, type, ndim, dims);
    if (vi)
        PUSH(g, g->inputs, vi);
    return g->err;
}

int ct_onnx_output(ct_onnx *g, const char *name, int type, int ndim, const int64_t *dims)
{
    Onnx__ValueInfoProto *vi = value_info(g, name, type, ndim, dims);
    if (vi)
        PUSH(g, g->outputs, vi);
    return g->err;
}

/* ---- initializers ---- */

/* An initializer of elem_size-byte elements from little-endian bytes. */
static int init_raw(ct_onnx *g, const char *name, int type, size_t elem_size, int ndim, const int64_t *dims,
                    const void *data)
{
    if (g->err)
        return g->err;
    size_t numel = 1;
    for (int d = 0; d < ndim; d++)
        numel *= (size_t)dims[d];
    Onnx__TensorProto *t = alloc(g, sizeof *t);
    int64_t *dv = alloc(g, (size_t)ndim * sizeof *dv);
    uint8_t *bytes = alloc(g, numel * elem_size);
    if (g->err)
        return g->err;
    Onnx__TensorProto t0 = ONNX__TENSOR_PROTO__INIT;
    *t = t0;
    if (ndim)
        memcpy(dv, dims, (size_t)ndim * sizeof *dv);
    memcpy(bytes, data, numel * elem_size); /* ONNX's raw_data is little-endian, as the host */
    t->n_dims = (size_t)ndim;
    t->dims = dv;
    t->has_data_type = 1;
    t->data_type = type;
    t->name = str(g, name);
    t->has_raw_data = 1;
    t->raw_data.len = numel * elem_size;
    t->raw_data.data = bytes;
    if (!g->err)
        PUSH(g, g->inits, t);
    return g->err;
}

int ct_onnx_init_float(ct_onnx *g, const char *name, int ndim, const int64_t *dims, const void *data)
{
    return init_raw(g, name, CT_ONNX_FLOAT, sizeof(float), ndim, dims, data);
}

int ct_onnx_init_int64(ct_onnx *g, const char *name, int ndim, const int64_t *dims, const int64_t *data)
{
    return init_raw(g, name, CT_ONNX_INT64, sizeof(int64_t), ndim, dims, data);
}

const char *ct_onnx_ints(ct_onnx *g, const char *name, int n, const int64_t *v)
{
    int64_t dim = n;
    ct_onnx_init_int64(g, name, 1, &dim, v);
    return name;
}

const char *ct_onnx_scalar(ct_onnx *g, const char *name, float v)
{
    ct_onnx_init_float(g, name, 0, NULL, &v);
    return name;
}

/* ---- nodes ---- */

static char **strs(ct_onnx *g, const char *const *s, int n)
{
    char **v = alloc(g, (size_t)n * sizeof *v);
    for (int i = 0; v && i < n; i++)
        v[i] = str(g, s[i]);
    return g->err ? NULL : v;
}

static Onnx__AttributeProto *attribute(ct_onnx *g, const ct_onnx_attr *a)
{
    Onnx__AttributeProto *p = alloc(g, sizeof *p);
    if (!p)
        return NULL;
    Onnx__AttributeProto p0 = ONNX__ATTRIBUTE_PROTO__INIT;
    *p = p0;
    p->name = str(g, a->name);
    p->has_type = 1;
    switch (a->kind) {
    case CT_ONNX_ATTR_INT:
        p->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
        p->has_i = 1;
        p->i = a->i;
        break;
    case CT_ONNX_ATTR_FLOAT:
        p->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
        p->has_f = 1;
        p->f = a->f;
        break;
    case CT_ONNX_ATTR_INTS:
        p->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
        p->n_ints = (size_t)a->n;
        p->ints = alloc(g, (size_t)a->n * sizeof *p->ints);
        if (p->ints)
            memcpy(p->ints, a->ints, (size_t)a->n * sizeof *p->ints);
        break;
    case CT_ONNX_ATTR_STRING:
        p->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
        p->has_s = 1;
        p->s.data = (uint8_t *)str(g, a->s);
        p->s.len = strlen(a->s);
        break;
    default:
        if (!g->err)
            g->err = ct_fail(NULL, CT_ERR_INTERNAL, "ONNX attribute %s of unknown kind %d", a->name, a->kind);
    }
    return g->err ? NULL : p;
}

int ct_onnx_node(ct_onnx *g, const char *op, const char *const *in, int nin, const char *const *out, int nout,
                 const ct_onnx_attr *attrs, int nattrs)
{
    if (g->err)
        return g->err;
    Onnx__NodeProto *n = alloc(g, sizeof *n);
    Onnx__AttributeProto **av = alloc(g, (size_t)nattrs * sizeof *av);
    if (g->err)
        return g->err;
    Onnx__NodeProto n0 = ONNX__NODE_PROTO__INIT;
    *n = n0;
    n->op_type = str(g, op);
    n->name = str(g, nout ? out[0] : op);
    n->n_input = (size_t)nin;
    n->input = strs(g, in, nin);
    n->n_output = (size_t)nout;
    n->output = strs(g, out, nout);
    for (int i = 0; i < nattrs && !g->err; i++)
        av[i] = attribute(g, &attrs[i]);
    n->n_attribute = (size_t)nattrs;
    n->attribute = av;
    if (!g->err)
        PUSH(g, g->nodes, n);
    return g->err;
}

int ct_onnx_unary(ct_onnx *g, const char *op, const char *x, const char *y)
{
    return ct_onnx_node(g, op, CT_ONNX_NAMES(x), CT_ONNX_NAMES(y), CT_ONNX_NO_ATTRS);
}

int ct_onnx_binary(ct_onnx *g, const char *op, const char *a, const char *b, const char *y)
{
    return ct_onnx_node(g, op, CT_ONNX_NAMES(a, b), CT_ONNX_NAMES(y), CT_ONNX_NO_ATTRS);
}

int ct_onnx_meta(ct_onnx *g, const char *key, const char *value)
{
    Onnx__StringStringEntryProto *e = alloc(g, sizeof *e);
    if (!e)
        return g->err;
    Onnx__StringStringEntryProto e0 = ONNX__STRING_STRING_ENTRY_PROTO__INIT;
    *e = e0;
    e->key = str(g, key);
    e->value = str(g, value);
    if (!g->err)
        PUSH(g, g->props, e);
    return g->err;
}

int ct_onnx_doc(ct_onnx *g, const char *doc)
{
    g->doc = str(g, doc);
    return g->err;
}

/* ---- writing ---- */

/* protobuf-c packs into this: each piece goes straight to the file, so
 * the weights are not copied once more into one buffer */
typedef struct file_buffer {
    ProtobufCBuffer base;
    FILE *f;
    int err; /* errno of the first failed write */
} file_buffer;

static void file_append(ProtobufCBuffer *b, size_t len, const uint8_t *data)
{
    file_buffer *fb = (file_buffer *)b;
    if (!fb->err && len && fwrite(data, 1, len, fb->f) != len)
        fb->err = errno ? errno : EIO;
}

int ct_onnx_write(ct_onnx *g, const char *path, const char *producer_version)
{
    if (g->err)
        return g->err;
    Onnx__OperatorSetIdProto opset = ONNX__OPERATOR_SET_ID_PROTO__INIT;
    opset.domain = (char *)"";
    opset.has_version = 1;
    opset.version = CT_ONNX_OPSET;
    Onnx__OperatorSetIdProto *opsets[1] = { &opset };
    Onnx__GraphProto graph = ONNX__GRAPH_PROTO__INIT;
    graph.name = g->name;
    graph.doc_string = g->doc;
    graph.n_node = g->nodes.n;
    graph.node = g->nodes.v;
    graph.n_initializer = g->inits.n;
    graph.initializer = g->inits.v;
    graph.n_input = g->inputs.n;
    graph.input = g->inputs.v;
    graph.n_output = g->outputs.n;
    graph.output = g->outputs.v;
    Onnx__ModelProto model = ONNX__MODEL_PROTO__INIT;
    model.has_ir_version = 1;
    model.ir_version = CT_ONNX_IR_VERSION;
    model.n_opset_import = 1;
    model.opset_import = opsets;
    model.producer_name = (char *)"cltrain";
    model.producer_version = (char *)(producer_version ? producer_version : "");
    model.graph = &graph;
    model.n_metadata_props = g->props.n;
    model.metadata_props = g->props.v;

    size_t size = onnx__model_proto__get_packed_size(&model);
    if (size > (size_t)INT32_MAX)
        return g->err = ct_fail(NULL, CT_ERR_UNSUPPORTED, "cannot write %s: the model takes %.2f GiB, and "
                                "a protobuf file holds at most 2 GiB (ONNX's external data is not "
                                "supported)", path, (double)size / (1024.0 * 1024.0 * 1024.0));
    ct_atomic_file af;
    int st = ct_atomic_open(&af, path);
    if (st)
        return st;
    file_buffer fb = { { file_append }, af.f, 0 };
    errno = 0;
    size_t wrote = onnx__model_proto__pack_to_buffer(&model, &fb.base);
    if (!fb.err && wrote != size)
        fb.err = EIO;
    return ct_atomic_commit(&af, fb.err);
}
