/*
 * device.c - enumerate every OpenCL platform and device, and pick devices
 * by selector strings ("0:1", "gpu", "all-gpu", a name substring, lists).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl/runtime.h"

static void info_string(cl_device_id d, cl_device_info what, char *dst, size_t size)
{
    dst[0] = '\0';
    if (clGetDeviceInfo(d, what, size, dst, NULL) != CL_SUCCESS)
        snprintf(dst, size, "?");
    dst[size - 1] = '\0';
    /* trim trailing blanks some drivers leave */
    size_t n = strlen(dst);
    while (n > 0 && isspace((unsigned char)dst[n - 1]))
        dst[--n] = '\0';
}

static int has_extension(const char *list, const char *ext)
{
    size_t len = strlen(ext);
    for (const char *p = list; (p = strstr(p, ext)) != NULL; p += len) {
        int starts = p == list || p[-1] == ' ';
        int ends = p[len] == '\0' || p[len] == ' ';
        if (starts && ends)
            return 1;
    }
    return 0;
}

int ct_device_query(cl_platform_id platform, cl_device_id d, unsigned p, unsigned di,
                    ct_device_info *info)
{
    memset(info, 0, sizeof *info);
    info->platform_index = p;
    info->device_index = di;
    info->cl_platform = platform;
    info->cl_device = d;

    cl_device_type type = 0;
    clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof type, &type, NULL);
    info->type = (type & CL_DEVICE_TYPE_GPU)           ? CT_DEVICE_GPU
                 : (type & CL_DEVICE_TYPE_ACCELERATOR) ? CT_DEVICE_ACCELERATOR
                 : (type & CL_DEVICE_TYPE_CPU)         ? CT_DEVICE_CPU
                                                       : CT_DEVICE_OTHER;
    info_string(d, CL_DEVICE_NAME, info->name, sizeof info->name);
    info_string(d, CL_DEVICE_VENDOR, info->vendor, sizeof info->vendor);
    info_string(d, CL_DEVICE_VERSION, info->device_version, sizeof info->device_version);
    info_string(d, CL_DRIVER_VERSION, info->driver_version, sizeof info->driver_version);
    info_string(d, CL_DEVICE_OPENCL_C_VERSION, info->opencl_c_version, sizeof info->opencl_c_version);
    if (clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof info->platform_name,
                          info->platform_name, NULL) != CL_SUCCESS)
        snprintf(info->platform_name, sizeof info->platform_name, "?");
    if (clGetPlatformInfo(platform, CL_PLATFORM_VERSION, sizeof info->platform_version,
                          info->platform_version, NULL) != CL_SUCCESS)
        snprintf(info->platform_version, sizeof info->platform_version, "?");
    info->platform_name[sizeof info->platform_name - 1] = '\0';
    info->platform_version[sizeof info->platform_version - 1] = '\0';

    cl_uint u = 0;
    cl_ulong ul = 0;
    size_t sz = 0;
    if (clGetDeviceInfo(d, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof u, &u, NULL) == CL_SUCCESS)
        info->compute_units = u;
    u = 0;
    if (clGetDeviceInfo(d, CL_DEVICE_MAX_CLOCK_FREQUENCY, sizeof u, &u, NULL) == CL_SUCCESS)
        info->max_clock_mhz = u;
    if (clGetDeviceInfo(d, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof ul, &ul, NULL) == CL_SUCCESS)
        info->global_mem_bytes = ul;
    ul = 0;
    if (clGetDeviceInfo(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof ul, &ul, NULL) == CL_SUCCESS)
        info->max_alloc_bytes = ul;
    ul = 0;
    if (clGetDeviceInfo(d, CL_DEVICE_LOCAL_MEM_SIZE, sizeof ul, &ul, NULL) == CL_SUCCESS)
        info->local_mem_bytes = ul;
    if (clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof sz, &sz, NULL) == CL_SUCCESS)
        info->max_work_group_size = sz;
    cl_bool unified = CL_FALSE;
    if (clGetDeviceInfo(d, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof unified, &unified, NULL) == CL_SUCCESS)
        info->host_unified_memory = unified == CL_TRUE;

    size_t ext_size = 0;
    char *ext = NULL;
    if (clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, 0, NULL, &ext_size) == CL_SUCCESS &&
        (ext = calloc(ext_size + 1, 1)) != NULL &&
        clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, ext_size, ext, NULL) == CL_SUCCESS) {
        info->fp16 = has_extension(ext, "cl_khr_fp16");
        info->fp64 = has_extension(ext, "cl_khr_fp64") || has_extension(ext, "cl_amd_fp64");
        info->subgroups = has_extension(ext, "cl_khr_subgroups") ||
                          has_extension(ext, "cl_intel_subgroups");
    }
    free(ext);
    cl_device_fp_config fp = 0;
    if (!info->fp64 && clGetDeviceInfo(d, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fp, &fp, NULL) == CL_SUCCESS)
        info->fp64 = fp != 0;
    fp = 0;
    info->fma = clGetDeviceInfo(d, CL_DEVICE_SINGLE_FP_CONFIG, sizeof fp, &fp, NULL) == CL_SUCCESS &&
                (fp & CL_FP_FMA) != 0;
    return CT_OK;
}

const char *ct_device_type_str(ct_device_type type)
{
    switch (type) {
    case CT_DEVICE_CPU: return "cpu";
    case CT_DEVICE_GPU: return "gpu";
    case CT_DEVICE_ACCELERATOR: return "accelerator";
    default: return "other";
    }
}

static const char no_platform_hint[] =
    "HINT: install an OpenCL driver. On Debian or Ubuntu, `apt-get install pocl-opencl-icd` "
    "gives a CPU device; for a GPU install its vendor's OpenCL driver (mesa-opencl-icd or "
    "rocm-opencl-icd for AMD, intel-opencl-icd for Intel, nvidia-opencl-icd for NVIDIA). "
    "The ICD loader looks for .icd files in /etc/OpenCL/vendors (or in $OCL_ICD_VENDORS); "
    "`cltrain doctor` checks each one.";

int ct_device_list(ct_device_info **devices, size_t *count)
{
    CT_VALIDATE(NULL, devices && count);
    *devices = NULL;
    *count = 0;

    cl_uint np = 0;
    cl_int err = clGetPlatformIDs(0, NULL, &np);
    if (err == -1001 /* CL_PLATFORM_NOT_FOUND_KHR */ || (err == CL_SUCCESS && np == 0)) {
        const char *vendors = getenv("OCL_ICD_VENDORS");
        return ct_fail(NULL, CT_ERR_NO_PLATFORM, "no OpenCL platform found%s%s%s. %s",
                       vendors ? " (OCL_ICD_VENDORS=" : "", vendors ? vendors : "",
                       vendors ? ")" : "", no_platform_hint);
    }
    if (err != CL_SUCCESS)
        return ct_fail(NULL, err, "clGetPlatformIDs failed: %s. %s", ct_status_str(err),
                       no_platform_hint);

    cl_platform_id *plats = calloc(np, sizeof *plats);
    if (!plats)
        return ct_fail(NULL, CT_ERR_NO_MEMORY, "out of host memory listing platforms");
    err = clGetPlatformIDs(np, plats, NULL);
    if (err != CL_SUCCESS) {
        free(plats);
        return ct_fail(NULL, err, "clGetPlatformIDs failed: %s", ct_status_str(err));
    }

    ct_device_info *list = NULL;
    size_t n = 0;
    int status = CT_OK;
    for (cl_uint p = 0; p < np; p++) {
        cl_uint nd = 0;
        /* A platform without devices (or one that fails) keeps its index, so
         * "P:D" selectors stay stable; it contributes no entries. */
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd) != CL_SUCCESS || nd == 0)
            continue;
        cl_device_id *ids = calloc(nd, sizeof *ids);
        ct_device_info *grown = realloc(list, (n + nd) * sizeof *list);
        if (!ids || !grown) {
            free(ids);
            if (grown)
                list = grown;
            status = ct_fail(NULL, CT_ERR_NO_MEMORY, "out of host memory listing devices");
            break;
        }
        list = grown;
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, nd, ids, NULL) == CL_SUCCESS) {
            for (cl_uint d = 0; d < nd; d++)
                ct_device_query(plats[p], ids[d], p, d, &list[n++]);
        }
        free(ids);
    }
    free(plats);
    if (status != CT_OK) {
        free(list);
        return status;
    }
    *devices = list;
    *count = n;
    return CT_OK;
}

void ct_device_list_free(ct_device_info **devices)
{
    if (devices) {
        free(*devices);
        *devices = NULL;
    }
}

/* ---- selection ---- */

static int type_rank(ct_device_type t)
{
    return t == CT_DEVICE_GPU ? 3 : t == CT_DEVICE_ACCELERATOR ? 2 : t == CT_DEVICE_CPU ? 1 : 0;
}

/* Nonzero when a is a better device to train on than b. */
static int better(const ct_device_info *a, const ct_device_info *b)
{
    if (type_rank(a->type) != type_rank(b->type))
        return type_rank(a->type) > type_rank(b->type);
    uint64_t pa = (uint64_t)a->compute_units * (a->max_clock_mhz ? a->max_clock_mhz : 1);
    uint64_t pb = (uint64_t)b->compute_units * (b->max_clock_mhz ? b->max_clock_mhz : 1);
    if (pa != pb)
        return pa > pb;
    return a->global_mem_bytes > b->global_mem_bytes;
}

static int contains_nocase(const char *hay, const char *needle)
{
    size_t nl = strlen(needle);
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < nl && hay[i] && tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
            i++;
        if (i == nl)
            return 1;
    }
    return nl == 0;
}

static int type_by_name(const char *s, ct_device_type *t)
{
    if (!strcmp(s, "gpu")) *t = CT_DEVICE_GPU;
    else if (!strcmp(s, "cpu")) *t = CT_DEVICE_CPU;
    else if (!strcmp(s, "accelerator")) *t = CT_DEVICE_ACCELERATOR;
    else return 0;
    return 1;
}

/* Parses "P:D" strictly: digits, a colon, digits. Returns 0 if `s` is not of
 * that shape at all, -1 if it looks like one but is malformed, 1 if parsed. */
static int parse_pd(const char *s, unsigned long *p, unsigned long *d)
{
    const char *colon = strchr(s, ':');
    if (!colon)
        return 0;
    for (const char *c = s; *c; c++)
        if (!isdigit((unsigned char)*c) && c != colon)
            return -1;
    if (colon == s || colon[1] == '\0' || strchr(colon + 1, ':'))
        return -1;
    errno = 0;
    char *end = NULL;
    *p = strtoul(s, &end, 10);
    if (errno || end != colon)
        return -1;
    *d = strtoul(colon + 1, &end, 10);
    if (errno || *end)
        return -1;
    return 1;
}

static int push(size_t idx, size_t *out, size_t max, size_t *n, const ct_device_info *devs,
                const char *term)
{
    for (size_t i = 0; i < *n; i++)
        if (out[i] == idx)
            return ct_fail(NULL, CT_ERR_INVALID_ARG,
                           "device selector term '%s' names device %u:%u a second time", term,
                           devs[idx].platform_index, devs[idx].device_index);
    if (*n >= max)
        return ct_fail(NULL, CT_ERR_INVALID_ARG,
                       "device selector names more than %zu device(s)", max);
    out[(*n)++] = idx;
    return CT_OK;
}

static int select_term(const ct_device_info *devs, size_t count, const char *term, size_t *out,
                       size_t max, size_t *n)
{
    unsigned long p = 0, d = 0;
    int pd = parse_pd(term, &p, &d);
    if (pd < 0)
        return ct_fail(NULL, CT_ERR_PARSE,
                       "malformed device selector term '%s': expected P:D with two numbers, "
                       "e.g. 0:1. HINT: `cltrain --devices` lists the selectors",
                       term);
    if (pd > 0) {
        int platform_seen = 0;
        for (size_t i = 0; i < count; i++) {
            if (devs[i].platform_index == p) {
                platform_seen = 1;
                if (devs[i].device_index == d)
                    return push(i, out, max, n, devs, term);
            }
        }
        if (platform_seen)
            return ct_fail(NULL, CT_ERR_NO_DEVICE,
                           "no device %lu:%lu: platform %lu has no device %lu. "
                           "HINT: `cltrain --devices` lists the selectors", p, d, p, d);
        return ct_fail(NULL, CT_ERR_NO_DEVICE,
                       "no device %lu:%lu: there is no platform %lu with devices. "
                       "HINT: `cltrain --devices` lists the selectors", p, d, p);
    }

    ct_device_type t;
    int all = !strncmp(term, "all", 3) && (term[3] == '\0' || term[3] == '-');
    if (all) {
        const char *rest = term[3] ? term + 4 : NULL;
        if (rest && !type_by_name(rest, &t))
            return ct_fail(NULL, CT_ERR_PARSE,
                           "unknown device selector '%s': expected all, all-gpu, all-cpu or "
                           "all-accelerator", term);
        size_t before = *n;
        for (size_t i = 0; i < count; i++) {
            if (rest && devs[i].type != t)
                continue;
            int st = push(i, out, max, n, devs, term);
            if (st)
                return st;
        }
        if (*n == before)
            return ct_fail(NULL, CT_ERR_NO_DEVICE, "device selector '%s' matches no device. "
                           "HINT: `cltrain --devices` lists the devices", term);
        return CT_OK;
    }

    int by_type = type_by_name(term, &t);
    int any = !strcmp(term, "best");
    size_t best = count;
    for (size_t i = 0; i < count; i++) {
        int match = any ? 1
                    : by_type ? devs[i].type == t
                              : contains_nocase(devs[i].name, term) ||
                                    contains_nocase(devs[i].vendor, term) ||
                                    contains_nocase(devs[i].platform_name, term);
        if (!match)
            continue;
        /* skip devices already chosen by an earlier term, so "gpu,gpu" picks two */
        int taken = 0;
        for (size_t j = 0; j < *n; j++)
            taken |= out[j] == i;
        if (taken)
            continue;
        if (best == count || better(&devs[i], &devs[best]))
            best = i;
    }
    if (best == count)
        return ct_fail(NULL, CT_ERR_NO_DEVICE,
                       "no %s device matches '%s'%s. HINT: `cltrain --devices` lists the "
                       "devices; select one by P:D, gpu, cpu or a part of its name",
                       by_type ? term : "", term, *n ? " (besides those already selected)" : "");
    return push(best, out, max, n, devs, term);
}

int ct_device_select(const ct_device_info *devices, size_t count, const char *selector,
                     size_t *out, size_t max, size_t *n)
{
    CT_VALIDATE(NULL, n && (out || max == 0) && (devices || count == 0));
    *n = 0;
    const char *from = "selector";
    if (!selector || !*selector) {
        selector = getenv("CLTRAIN_DEVICE");
        from = "CLTRAIN_DEVICE";
        if (!selector || !*selector) {
            selector = "best";
            from = "default";
        }
    }
    if (count == 0)
        return ct_fail(NULL, CT_ERR_NO_DEVICE,
                       "no OpenCL device found on any platform. %s", no_platform_hint);

    size_t len = strlen(selector);
    char *copy = malloc(len + 1);
    if (!copy)
        return ct_fail(NULL, CT_ERR_NO_MEMORY, "out of host memory");
    memcpy(copy, selector, len + 1);

    int status = CT_OK;
    char *term = copy;
    for (;;) {
        char *comma = strchr(term, ',');
        if (comma)
            *comma = '\0';
        /* trim blanks around the term */
        while (isspace((unsigned char)*term))
            term++;
        char *end = term + strlen(term);
        while (end > term && isspace((unsigned char)end[-1]))
            *--end = '\0';
        if (!*term) {
            status = ct_fail(NULL, CT_ERR_PARSE,
                             "empty term in device selector '%s' (from %s) at column %zu",
                             selector, from, (size_t)(term - copy) + 1);
            break;
        }
        for (char *c = term; *c; c++)
            *c = (char)tolower((unsigned char)*c);
        status = select_term(devices, count, term, out, max, n);
        if (status) {
            /* prefix the message with where the selector came from */
            char msg[CT_ERROR_MAX];
            snprintf(msg, sizeof msg, "%s", ct_last_error());
            ct_fail(NULL, status, "%s '%s': %s", from, selector, msg);
            break;
        }
        if (!comma)
            break;
        term = comma + 1;
    }
    free(copy);
    if (status)
        *n = 0;
    return status;
}
