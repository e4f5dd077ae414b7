/*
 * common.cl - shared by every program: index helpers and the counter-based
 * RNG (Philox4x32-10, as Salmon et al. 2011 define it). src/core/philox.c
 * computes the same stream on the host, so a seed gives the same numbers on
 * every device and in the host references.
 */

#define CT_PHILOX_M0 0xD2511F53u
#define CT_PHILOX_M1 0xCD9E8D57u
#define CT_PHILOX_W0 0x9E3779B9u
#define CT_PHILOX_W1 0xBB67AE85u

inline uint4 ct_philox4x32(uint4 ctr, uint2 key)
{
    for (int i = 0; i < 10; i++) {
        uint lo0 = CT_PHILOX_M0 * ctr.x, hi0 = mul_hi(CT_PHILOX_M0, ctr.x);
        uint lo1 = CT_PHILOX_M1 * ctr.z, hi1 = mul_hi(CT_PHILOX_M1, ctr.z);
        ctr = (uint4)(hi1 ^ ctr.y ^ key.x, lo1, hi0 ^ ctr.w ^ key.y, lo0);
        key += (uint2)(CT_PHILOX_W0, CT_PHILOX_W1);
    }
    return ctr;
}

/* A uniform float in [0, 1) from 24 random bits. */
inline float ct_u01(uint x)
{
    return (float)(x >> 8) * (1.0f / 16777216.0f);
}
