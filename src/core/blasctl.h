/*
 * blasctl.h - the host BLAS's threads, where it is OpenBLAS (looked up at
 * run time, so that another CBLAS links too). cltrain calls the BLAS
 * single-threaded on its own host pool (src/host/gemm_host.c): OpenBLAS's
 * worker threads spin (sched_yield) after every call they serve, and for
 * about a tenth of a second after the library loads, taking cores from the
 * pool and from the OpenCL runtime's threads (a short `bench` ran its first
 * 25 steps of the mlp 1.6x slower while they spun).
 */
#ifndef CT_CORE_BLASCTL_H
#define CT_CORE_BLASCTL_H

/* Whether the process's BLAS is OpenBLAS (its thread count can be set). */
int ct_blas_is_openblas(void);

/* OpenBLAS at one thread for the calls that follow, until the matching
 * ct_blas_restore; returns what to give it (0: not OpenBLAS, nothing
 * changed). Calls from several threads at once nest: the count stays 1
 * until the last of them restores (data-parallel replicas); the
 * application's own BLAS calls meanwhile run single-threaded too. */
int ct_blas_single(void);
void ct_blas_restore(int prev);

/* Stops OpenBLAS's idle worker threads once per process (they would spin
 * at start-up); a later multithreaded call of the application's own starts
 * them again. Nothing where the BLAS is not OpenBLAS. Called by
 * ct_context_create: an application that runs BLAS in other threads
 * creates its contexts before it starts them (as for ct_blas_single). */
void ct_blas_quiet(void);

/* OpenBLAS's name for the kernels it chose ("Haswell", "SkylakeX"), or
 * NULL where the BLAS does not say. */
const char *ct_blas_core_name(void);

#endif /* CT_CORE_BLASCTL_H */
