/*
 * clblast_params.h - CLBlast's SGEMM tuning parameters for a device: read
 * (CLBlast's C API has no reader; src/ops/clblast_params.cc reaches its C++
 * one) and set (CLBlastOverrideParameters). Parameters apply to every
 * context on that device in this process; CLBlast keys its compiled
 * programs by them, so switching back and forth recompiles nothing twice.
 */
#ifndef CT_OPS_CLBLAST_PARAMS_H
#define CT_OPS_CLBLAST_PARAMS_H

#include "cltrain/opencl.h"
#include "ops/tune_file.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The parameters CLBlast uses now for kernel ("Xgemm", "XgemmDirect",
 * "GemmRoutine") in single precision on dev, sorted by name: CLBlast's
 * status code (0: success). */
int ct_clblast_params_get(cl_device_id dev, const char *kernel, ct_tune_params *p);
/* Makes CLBlast use p on dev: CLBlast's status code. */
int ct_clblast_params_set(cl_device_id dev, const ct_tune_params *p);

#ifdef __cplusplus
}
#endif

#endif /* CT_OPS_CLBLAST_PARAMS_H */
