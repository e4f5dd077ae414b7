/*
 * cltrain/common.h - export macro, status codes and their text.
 *
 * Status codes are plain ints. 0 is success. OpenCL's own error codes
 * (CL_INVALID_VALUE, CL_OUT_OF_RESOURCES, ...) and CLBlast's (-1024 .. -2050)
 * pass through unchanged; the library's own codes sit in -3000 .. -3099.
 */
#ifndef CLTRAIN_COMMON_H
#define CLTRAIN_COMMON_H

#if defined(_WIN32) && defined(CLTRAIN_BUILDING_DLL)
#define CT_API __declspec(dllexport)
#elif defined(_WIN32) && !defined(CLTRAIN_STATIC)
#define CT_API __declspec(dllimport)
#elif defined(__GNUC__)
#define CT_API __attribute__((visibility("default")))
#else
#define CT_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

enum ct_status {
    CT_OK = 0,
    CT_ERR_INVALID_ARG = -3001,  /* a bad argument or option value */
    CT_ERR_NO_PLATFORM = -3002,  /* no OpenCL platform is installed */
    CT_ERR_NO_DEVICE = -3003,    /* no device matches the selector */
    CT_ERR_NO_MEMORY = -3004,    /* host allocation failed */
    CT_ERR_IO = -3005,           /* a file could not be read or written */
    CT_ERR_BUILD = -3006,        /* an OpenCL program failed to build */
    CT_ERR_PARSE = -3007,        /* malformed text input (selector, model file, ...) */
    CT_ERR_UNSUPPORTED = -3008,  /* the device or build lacks a needed feature */
    CT_ERR_CORRUPT = -3009,      /* a file is truncated or its contents are invalid */
    CT_ERR_SHAPE = -3010,        /* tensor shapes do not fit together */
    CT_ERR_INTERNAL = -3011,     /* a bug in cltrain: please report it */
};

/* The name and meaning of any status code: cltrain's, OpenCL's or CLBlast's.
 * Never NULL; the string is static. */
CT_API const char *ct_status_str(int status);

/* The message of the last error raised on this thread by any cltrain call,
 * or "" if none. Calls that take a context also keep their last error in it
 * (ct_context_last_error). The string stays valid until the next failing
 * call on this thread. */
CT_API const char *ct_last_error(void);

/* The library's version string, "MAJOR.MINOR.PATCH". */
CT_API const char *ct_version(void);

#ifdef __cplusplus
}
#endif

#endif /* CLTRAIN_COMMON_H */
