/*
 * status.c - status codes to text, and the error message buffers.
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "cltrain/opencl.h"

static _Thread_local char tl_error[CT_ERROR_MAX];

/* The context floor's copy of a message; every context it makes installs
 * the same function, so after the first this never changes. */
static _Atomic(ct_error_sink) context_sink;

void ct_error_set_sink(ct_error_sink sink)
{
    atomic_store_explicit(&context_sink, sink, memory_order_release);
}

static void to_context(struct ct_context *ctx)
{
    ct_error_sink sink = atomic_load_explicit(&context_sink, memory_order_acquire);
    if (ctx && sink)
        sink(ctx, tl_error);
}

const char *ct_version(void)
{
    return CT_VERSION_STRING;
}

const char *ct_last_error(void)
{
    return tl_error;
}

int ct_fail(struct ct_context *ctx, int status, const char *fmt, ...)
{
    /* format aside first: an argument may be ct_last_error() itself */
    char msg[CT_ERROR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    memcpy(tl_error, msg, sizeof msg);
    to_context(ctx);
    return status;
}

int ct_fail_keep(struct ct_context *ctx, int status)
{
    to_context(ctx);
    return status;
}

const char *ct_status_str(int status)
{
    switch (status) {
    case CT_OK: return "CT_OK: success";
    case CT_ERR_INVALID_ARG: return "CT_ERR_INVALID_ARG: invalid argument";
    case CT_ERR_NO_PLATFORM: return "CT_ERR_NO_PLATFORM: no OpenCL platform found";
    case CT_ERR_NO_DEVICE: return "CT_ERR_NO_DEVICE: no device matches the selection";
    case CT_ERR_NO_MEMORY: return "CT_ERR_NO_MEMORY: out of host memory";
    case CT_ERR_IO: return "CT_ERR_IO: input/output error";
    case CT_ERR_BUILD: return "CT_ERR_BUILD: OpenCL program build failed";
    case CT_ERR_PARSE: return "CT_ERR_PARSE: malformed input";
    case CT_ERR_UNSUPPORTED: return "CT_ERR_UNSUPPORTED: not supported on this device or build";
    case CT_ERR_CORRUPT: return "CT_ERR_CORRUPT: corrupt or truncated data";
    case CT_ERR_SHAPE: return "CT_ERR_SHAPE: tensor shapes do not fit";
    case CT_ERR_INTERNAL: return "CT_ERR_INTERNAL: internal error (a bug in cltrain)";
#define CL_CODE(c) case c: return #c
    CL_CODE(CL_DEVICE_NOT_FOUND);
    CL_CODE(CL_DEVICE_NOT_AVAILABLE);
    CL_CODE(CL_COMPILER_NOT_AVAILABLE);
    CL_CODE(CL_MEM_OBJECT_ALLOCATION_FAILURE);
    CL_CODE(CL_OUT_OF_RESOURCES);
    CL_CODE(CL_OUT_OF_HOST_MEMORY);
    CL_CODE(CL_PROFILING_INFO_NOT_AVAILABLE);
    CL_CODE(CL_MEM_COPY_OVERLAP);
    CL_CODE(CL_IMAGE_FORMAT_MISMATCH);
    CL_CODE(CL_IMAGE_FORMAT_NOT_SUPPORTED);
    CL_CODE(CL_BUILD_PROGRAM_FAILURE);
    CL_CODE(CL_MAP_FAILURE);
    CL_CODE(CL_MISALIGNED_SUB_BUFFER_OFFSET);
    CL_CODE(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    CL_CODE(CL_COMPILE_PROGRAM_FAILURE);
    CL_CODE(CL_LINKER_NOT_AVAILABLE);
    CL_CODE(CL_LINK_PROGRAM_FAILURE);
    CL_CODE(CL_DEVICE_PARTITION_FAILED);
    CL_CODE(CL_KERNEL_ARG_INFO_NOT_AVAILABLE);
    CL_CODE(CL_INVALID_VALUE);
    CL_CODE(CL_INVALID_DEVICE_TYPE);
    CL_CODE(CL_INVALID_PLATFORM);
    CL_CODE(CL_INVALID_DEVICE);
    CL_CODE(CL_INVALID_CONTEXT);
    CL_CODE(CL_INVALID_QUEUE_PROPERTIES);
    CL_CODE(CL_INVALID_COMMAND_QUEUE);
    CL_CODE(CL_INVALID_HOST_PTR);
    CL_CODE(CL_INVALID_MEM_OBJECT);
    CL_CODE(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR);
    CL_CODE(CL_INVALID_IMAGE_SIZE);
    CL_CODE(CL_INVALID_SAMPLER);
    CL_CODE(CL_INVALID_BINARY);
    CL_CODE(CL_INVALID_BUILD_OPTIONS);
    CL_CODE(CL_INVALID_PROGRAM);
    CL_CODE(CL_INVALID_PROGRAM_EXECUTABLE);
    CL_CODE(CL_INVALID_KERNEL_NAME);
    CL_CODE(CL_INVALID_KERNEL_DEFINITION);
    CL_CODE(CL_INVALID_KERNEL);
    CL_CODE(CL_INVALID_ARG_INDEX);
    CL_CODE(CL_INVALID_ARG_VALUE);
    CL_CODE(CL_INVALID_ARG_SIZE);
    CL_CODE(CL_INVALID_KERNEL_ARGS);
    CL_CODE(CL_INVALID_WORK_DIMENSION);
    CL_CODE(CL_INVALID_WORK_GROUP_SIZE);
    CL_CODE(CL_INVALID_WORK_ITEM_SIZE);
    CL_CODE(CL_INVALID_GLOBAL_OFFSET);
    CL_CODE(CL_INVALID_EVENT_WAIT_LIST);
    CL_CODE(CL_INVALID_EVENT);
    CL_CODE(CL_INVALID_OPERATION);
    CL_CODE(CL_INVALID_GL_OBJECT);
    CL_CODE(CL_INVALID_BUFFER_SIZE);
    CL_CODE(CL_INVALID_MIP_LEVEL);
    CL_CODE(CL_INVALID_GLOBAL_WORK_SIZE);
    CL_CODE(CL_INVALID_PROPERTY);
    CL_CODE(CL_INVALID_IMAGE_DESCRIPTOR);
    CL_CODE(CL_INVALID_COMPILER_OPTIONS);
    CL_CODE(CL_INVALID_LINKER_OPTIONS);
    CL_CODE(CL_INVALID_DEVICE_PARTITION_COUNT);
#undef CL_CODE
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR: no OpenCL platform (ICD) found";
    case -1024: return "CLBlast: routine not implemented";
    case -1022: return "CLBlast: matrix A is not a valid OpenCL buffer";
    case -1021: return "CLBlast: matrix B is not a valid OpenCL buffer";
    case -1020: return "CLBlast: matrix C is not a valid OpenCL buffer";
    case -1017: return "CLBlast: dimensions M, N and K must be larger than zero";
    case -1016: return "CLBlast: leading dimension of A too small";
    case -1015: return "CLBlast: leading dimension of B too small";
    case -1014: return "CLBlast: leading dimension of C too small";
    case -1011: return "CLBlast: buffer of matrix A too small";
    case -1010: return "CLBlast: buffer of matrix B too small";
    case -1009: return "CLBlast: buffer of matrix C too small";
    case -2050: return "CLBlast: temporary GEMM buffer too small";
    case -2049: return "CLBlast: batch count must be positive";
    case -2046: return "CLBlast: not enough local memory on this device";
    case -2045: return "CLBlast: no half precision on this device";
    case -2044: return "CLBlast: no double precision on this device";
    case -2041: return "CLBlast: no database entry for this device";
    case -2040: return "CLBlast: unknown error";
    case -2039: return "CLBlast: unexpected error";
    default: break;
    }
    if (status <= -1000 && status > -3000)
        return "CLBlast or OpenCL extension error";
    return "unknown status code";
}
