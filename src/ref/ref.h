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

#include <stddef.h>

#endif /* CT_REF_REF_H */
