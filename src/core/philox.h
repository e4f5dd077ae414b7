/*
 * philox.h - the counter-based RNG Philox4x32-10 (Salmon et al., "Parallel
 * random numbers: as easy as 1, 2, 3", SC'11) on the host, bit-identical to
 * ct_philox4x32 / ct_u01 in cl_kernels/common.cl, so host references and
 * trainers can reproduce any random stream a kernel draws (dropout masks,
 * initialisations) without reading it back.
 */
#ifndef CT_CORE_PHILOX_H
#define CT_CORE_PHILOX_H

#include <stdint.h>

/* out = Philox4x32-10(ctr, key). out may alias ctr. */
void ct_philox4x32(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);
/* A uniform float in [0, 1) from the top 24 bits of a word (exact in float). */
float ct_philox_u01(uint32_t x);

#endif /* CT_CORE_PHILOX_H */
