/*
 * ref.h - conventions of the host references (src/ref/<family>.c).
 *
 * Plain C, double precision throughout, no OpenCL: the ground truth the
 * OpenCL kernels are compared with (tests, `cltrain selftest`), itself
 * checked against central finite differences and PyTorch's golden vectors.
 * Same argument order and layouts as the launchers in src/ops/; backward
 * references follow the same gradient contract (parameter gradients +=,
 * input gradients =).
 */
#ifndef CT_REF_REF_H
#define CT_REF_REF_H

#include <math.h>
#include <stddef.h>

/* A product a b of 16-bit operands (relative rounding error u, absolute s:
 * fp16's subnormal step) whose device values lie within ea and eb of the
 * exact a and b: each rounded operand within ra = ea + u (|a| + ea) + s of
 * its exact value, so the product within ra |b| + |a| rb + ra rb of a b.
 * The 16-bit bounds (ref/attention.h, ref/rnn_bound.h) sum these. */
static inline double ct_ref_perr16(double u, double s, double a, double ea, double b, double eb)
{
    double ra = ea + u * (fabs(a) + ea) + s, rb = eb + u * (fabs(b) + eb) + s;
    return ra * fabs(b) + fabs(a) * rb + ra * rb;
}

#endif /* CT_REF_REF_H */
