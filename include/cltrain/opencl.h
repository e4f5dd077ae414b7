/*
 * cltrain/opencl.h - the OpenCL headers, targeting the OpenCL 1.2 API that
 * every driver cltrain runs on provides.
 */
#ifndef CLTRAIN_OPENCL_H
#define CLTRAIN_OPENCL_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#ifndef CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#endif

#ifdef __APPLE__
#include <OpenCL/cl.h>
#else
#include <CL/cl.h>
#endif

#endif /* CLTRAIN_OPENCL_H */
