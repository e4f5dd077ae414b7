/*
 * net.h - a model bound to a device at a batch size: the memory plan (one
 * arena each for parameters, gradients, running statistics, activations,
 * activation gradients, scratch and saved float state), initialization,
 * and the forward and backward passes over the layers in file order.
 *
 * With the context's 16-bit activation storage (ct_context_set_act16,
 * taken when every layer has a 16-bit form: ct_net_act16_blocker) the
 * activations and their gradients are 16-bit elements: their arenas count
 * elements of ct_net_arena_esize bytes, the input is converted from the
 * batch slot's floats at the start of the forward, and outputs are read
 * back through ct_net_read_out. Everything else stays float32.
 */
#ifndef CT_NN_NET_H
#define CT_NN_NET_H

#include <stdint.h>

#include "nn/model.h"
#include "tensor.h"

enum ct_arena_id {
    CT_ARENA_PARAMS,
    CT_ARENA_GRADS,
    CT_ARENA_BUFFERS, /* running statistics: saved, not trained */
    CT_ARENA_ACTS,    /* layer outputs and what backward needs */
    CT_ARENA_DACTS,   /* gradients of layer outputs */
    CT_ARENA_SCRATCH, /* workspaces shared by all layers */
    CT_ARENA_SAVED,   /* float state a backward needs (statistics, indices,
                         workspaces) and the loss: float32 whatever the storage */
    CT_ARENA_COUNT
};

#define CT_LAYER_STATE_MAX 96

typedef struct ct_lrt {          /* one layer at run time */
    const struct ct_layer_type *type;
    size_t rows;                 /* batch rows: N, or T*N for sequences */
    size_t out_n;                /* elements of the output */
    ct_buf out, dout;            /* (out_n) */
    ct_buf param, grad;          /* this layer's trainable parameters (flat, PyTorch order) */
    ct_buf buffers;              /* running statistics */
    ct_buf saved;                /* what backward needs beyond inputs and output */
    size_t saved_n;              /* floats, or activations when saved_act */
    int saved_act;               /* saved is an activation (a pre-activation), in the
                                    activation arena and format; else float state */
    int needs_dout;              /* some later layer sends a gradient here */
    size_t last_reader;          /* the last layer reading the output: the first backward
                                    to write dout (ct_net_grad_first) */
    int view;                    /* a view (flatten) whose dout is its producer's too */
    union {                      /* the type's own state, filled by its plan (src/nn/layer.h) */
        unsigned char bytes[CT_LAYER_STATE_MAX];
        double align_double;
        void *align_pointer;
        uint64_t align_u64;
    } state;
} ct_lrt;

typedef struct ct_net {
    ct_context *ctx;
    const ct_model *model;
    int batch;
    int seq;                     /* T of a sequence model, 0 otherwise */
    int act16;                   /* activations stored in 16 bits (the context's storage when
                                    planned: ct_precision), 0: float32 */
    ct_buf input;                /* the current batch slot's input (floats or int32 tokens):
                                    rt[0].out, or what the forward converts into it */
    int grads_zero;              /* the gradients are zero (set by whoever zeroed them with the
                                    optimizer step, ct_optim_step_zero_grads): the next
                                    ct_net_zero_grads only clears this */
    size_t arena_size[CT_ARENA_COUNT]; /* elements (ct_net_arena_esize bytes), all chunks together */
    ct_arena arena[CT_ARENA_COUNT];    /* .mem: the first chunk (the only one of parameters,
                                          gradients and buffers: those stay flat) */
    int nchunks[CT_ARENA_COUNT];       /* buffers of an arena, each within one allocation */
    size_t *chunk_size[CT_ARENA_COUNT]; /* floats per chunk */
    cl_mem *chunk[CT_ARENA_COUNT];
    size_t dacts_unshared;       /* floats activation gradients would take without reuse */
    size_t largest_n[CT_ARENA_COUNT]; /* the largest single tensor of the arena (floats) */
    const char *largest_layer[CT_ARENA_COUNT]; /* and the layer it belongs to */
    uint64_t limit_alloc;        /* bytes per buffer the plan is split for (device or
                                    CLTRAIN_MAX_ALLOC) */
    uint64_t limit_global;       /* bytes in all (device or CLTRAIN_MEM_LIMIT) */
    int limit_env;               /* 1: CLTRAIN_MEM_LIMIT, 2: CLTRAIN_MAX_ALLOC lowered them */
    ct_lrt *rt;
    size_t scratch_n;            /* floats of shared scratch */
    ct_buf scratch;              /* conv columns, LSTM and embedding workspaces */
    ct_buf gtmp;                 /* a gradient on its way to a tensor with several readers */
    ct_buf labels;               /* (label_n) int32 class ids, or float targets of mse */
    size_t label_n;              /* label elements per batch (class ids or targets) */
    ct_buf loss, correct;        /* (1) each; correct: the correct count of a classifier,
                                    the mean absolute error of mse */
    cl_mem slot[2];              /* two batch slots (input, then labels), so the next batch
                                    can be uploaded while the current one computes */
    size_t slot_n;               /* floats per slot */
    size_t slot_label_off;       /* where the labels start in a slot */
    size_t nparams;              /* trainable floats */
    size_t nbuffers;
    int allocated;
    int bn_groups;               /* batch norm: statistics over this many equal parts of the batch */
    size_t row_base;             /* this net's first row in the global batch of a data-parallel
                                    run (0 on one device), plus the micro-batch's offset in the
                                    optimizer step's batch when gradients accumulate: dropout
                                    masks are drawn for it */
    float loss_scale;            /* the loss backward's dloss_scale: 1, or 1/K when K
                                    micro-batches accumulate into one optimizer step */
    /* when profiling (NULL: off): per layer seconds [0, count), then kernel
     * launches [count, 2 count), summed over the profiled passes */
    double *prof_fwd, *prof_bwd;
    /* called in ct_net_backward just before layer i's backward (NULL: off),
     * the one moment its output gradient is complete and still in its memory
     * (the plan lets later gradients reuse it), and when the parameter
     * gradients of every layer above i are final: the non-finite diagnosis
     * (src/train/finite.c) and the bucketed reduction (src/train/bucket.c) */
    int (*probe)(void *user, struct ct_net *net, size_t i);
    void *probe_user;
} ct_net;

/* Per-layer timing: each layer's forward and backward are followed by a
 * clFinish and their host wall time (device work and host-path GEMMs alike)
 * is added up. It serializes the queue, so a profiled step is slower. */
int ct_net_profile(ct_net *net, int on);

/* Computes the plan without allocating (so a dry run can print it). */
int ct_net_plan(ct_context *ctx, const ct_model *m, int batch, ct_net *net);
/* The same with batch-norm statistics over bn_groups equal parts of the
 * batch ("ghost" batch norm): what bn_groups data-parallel replicas with a
 * part each compute, on one device. bn_groups must divide the batch. */
int ct_net_plan_grouped(ct_context *ctx, const ct_model *m, int batch, int bn_groups, ct_net *net);
/* Allocates the arenas of a planned net: first checks the plan against the
 * limits, then creates every chunk and touches it once (a zero fill), so an
 * allocation the driver defers to first use fails here too. Either failure
 * is reported with the arena sizes, the limits and the largest batch that
 * fits. */
int ct_net_alloc(ct_net *net);
/* 0 when the plan meets the limits; otherwise CT_ERR_NO_MEMORY and the
 * message allocation would give. */
int ct_net_check_fit(ct_net *net);
/* Bytes of device memory the plan takes: every arena at its element size
 * and the two batch slots. */
uint64_t ct_net_plan_bytes(const ct_net *net);
/* The largest batch (a multiple of the batch-norm groups) whose plan meets
 * the limits with at most global_bytes in all; 0 when none does. */
int ct_net_largest_batch(const ct_net *net, uint64_t global_bytes);
/* The memory plan as the dry run shows it (arenas, chunks, reuse, limits
 * and whether it fits), as text in buf (cap bytes, always terminated when
 * cap > 0); returns the length the whole text needs, as snprintf does. */
size_t ct_net_format_plan(const ct_net *net, char *buf, size_t cap);
void ct_net_release(ct_net *net);

/* Points the input (net->input) and the labels at batch slot k (0 or 1). */
void ct_net_use_slot(ct_net *net, int k);

/* Bytes of an element of arena a: 2 for the activations and their
 * gradients under 16-bit storage, else 4. */
size_t ct_net_arena_esize(const ct_net *net, int a);
/* The first layer of m without a 16-bit activation form (CT_LAYER_ACT16),
 * or -1 when every layer has one. */
int ct_net_act16_blocker(const ct_model *m);
/* Sets ctx's activation storage for model m, before planning it: the
 * products' 16-bit format where the context runs the GPU class and every
 * layer has a 16-bit form (and CLTRAIN_ACT16 is not 0), float32 otherwise.
 * Returns the status; *act16 (may be NULL): the storage taken. */
int ct_net_choose_storage(ct_context *ctx, const ct_model *m, int *act16);
/* n elements of layer i's output from element off, as floats (converted
 * from the 16-bit storage where the net has it); blocking. */
int ct_net_read_out(ct_net *net, size_t i, size_t off, size_t n, float *dst);

/* PyTorch's default initialization, from a seeded host RNG. */
int ct_net_init_params(ct_net *net, uint64_t seed);

/* The input (rows x features, floats or int32 tokens) is at net->input,
 * the labels at net->labels: the current batch slot. training: batch
 * statistics, dropout on. */
int ct_net_forward(ct_net *net, int training, uint64_t seed, long step);
/* Gradients of the mean loss; parameter gradients accumulate, so zero
 * them first (ct_net_zero_grads). */
int ct_net_backward(ct_net *net, uint64_t seed, long step);
int ct_net_zero_grads(ct_net *net);
/* Whether layer i's backward is the first to write the gradient of its
 * input j where that gradient has several writers (several layers read the
 * output): it then overwrites the gradient, and later writers add to it. A
 * layer that delivers its own gradients (CT_LAYER_OWN_GRADS) asks this. */
int ct_net_grad_first(const ct_net *net, size_t i, int j);

/* Host size of the input of one batch (elements) and of its labels. */
size_t ct_net_input_elems(const ct_net *net);
size_t ct_net_label_elems(const ct_net *net);

/* A random batch for a net ending in a loss, the same for the same seed:
 * inputs uniform in [-0.5, 0.5) (or token ids below the embedding's
 * vocabulary) and labels below the class count (mse: float targets
 * uniform in [-0.5, 0.5), their bits in y).
 * x: (ct_net_input_elems) as float (int32 bits for tokens); y: (ct_net_label_elems) */
void ct_net_random_batch(const ct_net *net, uint64_t seed, float *x, int32_t *y);

/* Between net.c (the plan) and net_alloc.c (its limits, fit and buffers). */
#define CT_NET_MAX_CHUNKS 4096
extern const char *const ct_arena_names[CT_ARENA_COUNT];
int ct_net_plan_limits(ct_context *ctx, ct_net *net);
void ct_net_patch_buffers(ct_net *net);
void ct_net_free_plan(ct_net *net);

#endif /* CT_NN_NET_H */
