/*
 * cltrain/device.h - OpenCL platform and device discovery and selection.
 *
 * Every platform and every device is listed, in the order the ICD loader
 * reports them; a device is named by its selector "P:D" (platform index,
 * device index within the platform), as `cltrain --devices` prints it.
 */
#ifndef CLTRAIN_DEVICE_H
#define CLTRAIN_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include "cltrain/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ct_device_type {
    CT_DEVICE_OTHER = 0,
    CT_DEVICE_CPU = 1,
    CT_DEVICE_GPU = 2,
    CT_DEVICE_ACCELERATOR = 3,
} ct_device_type;

typedef struct ct_device_info {
    unsigned platform_index;     /* P in "P:D" */
    unsigned device_index;       /* D in "P:D" */
    ct_device_type type;
    char name[256];
    char vendor[256];
    char platform_name[256];
    char platform_version[256];
    char device_version[256];    /* "OpenCL 3.0 ..." */
    char driver_version[128];
    char opencl_c_version[128];  /* "OpenCL C 1.2 ..." */
    unsigned compute_units;
    unsigned max_clock_mhz;
    uint64_t global_mem_bytes;
    uint64_t max_alloc_bytes;
    uint64_t local_mem_bytes;
    size_t max_work_group_size;
    int fp16;                    /* cl_khr_fp16 */
    int fp64;                    /* cl_khr_fp64 or a double FP config */
    int subgroups;               /* cl_khr_subgroups or a vendor sub-group extension */
    int host_unified_memory;     /* the device shares host memory (CPU devices, iGPUs) */
    void *cl_platform;           /* cl_platform_id */
    void *cl_device;             /* cl_device_id */
    int fma;                     /* single precision fma() in hardware (CL_FP_FMA); without it
                                    the kernels multiply-add with mad() (Mesa's llvmpipe) */
} ct_device_info;

/* Lists every device of every platform. On success *devices is an array of
 * *count entries (count may be 0 when platforms exist but have no devices),
 * to be released with ct_device_list_free. With no OpenCL platform at all it
 * returns CT_ERR_NO_PLATFORM and a message saying how to install one. */
CT_API int ct_device_list(ct_device_info **devices, size_t *count);
CT_API void ct_device_list_free(ct_device_info **devices);

/* "cpu", "gpu", "accelerator" or "other". */
CT_API const char *ct_device_type_str(ct_device_type type);

/*
 * Picks devices from a list by a selector string: a comma list of terms,
 *   P:D            the device as `cltrain --devices` numbers it
 *   gpu | cpu | accelerator
 *                  the best device of that type
 *   best           the best device of any type (GPU > accelerator > CPU, then
 *                  compute units x clock, then memory)
 *   all | all-gpu | all-cpu | all-accelerator
 *                  every device (of that type)
 *   anything else  the best device whose name, vendor or platform name
 *                  contains the term (case-insensitive)
 * NULL or "" means the CLTRAIN_DEVICE environment variable, and "best" when
 * that is unset too. The same device twice is an error. On success the
 * indices into `devices` of the chosen ones are written to `out` (at most
 * `max`) and their number to *n. Errors: CT_ERR_PARSE for a malformed string,
 * CT_ERR_NO_DEVICE when a term matches nothing; ct_last_error says which term.
 */
CT_API int ct_device_select(const ct_device_info *devices, size_t count, const char *selector,
                            size_t *out, size_t max, size_t *n);

#ifdef __cplusplus
}
#endif

#endif /* CLTRAIN_DEVICE_H */
