// clblast_params.cc - the one C++ file: CLBlast reads back a device's
// tuning parameters only through its C++ API (clblast::RetrieveParameters),
// which the tuner needs to restore the defaults after trying others. No
// exception leaves this file.
#include "ops/clblast_params.h" /* first: sets the OpenCL target version */

#include <algorithm>
#include <clblast.h>
#include <clblast_c.h>
#include <cstdio>
#include <string>
#include <unordered_map>
#include <vector>


extern "C" int ct_clblast_params_get(cl_device_id dev, const char *kernel, ct_tune_params *p)
{
    try {
        std::unordered_map<std::string, size_t> m;
        clblast::StatusCode s = clblast::RetrieveParameters(dev, kernel, clblast::Precision::kSingle, m);
        if (s != clblast::StatusCode::kSuccess)
            return static_cast<int>(s);
        std::vector<std::string> names;
        for (const auto &e : m)
            names.push_back(e.first);
        std::sort(names.begin(), names.end());
        if (names.size() > CT_TUNE_MAX_PARAMS)
            return static_cast<int>(clblast::StatusCode::kUnexpectedError);
        *p = ct_tune_params{};
        std::snprintf(p->kernel, sizeof p->kernel, "%s", kernel);
        for (const auto &n : names) {
            if (n.size() >= sizeof p->names[0])
                return static_cast<int>(clblast::StatusCode::kUnexpectedError);
            std::snprintf(p->names[p->n], sizeof p->names[0], "%s", n.c_str());
            p->values[p->n++] = static_cast<uint32_t>(m[n]);
        }
        return 0;
    } catch (...) {
        return static_cast<int>(clblast::StatusCode::kUnexpectedError);
    }
}

extern "C" int ct_clblast_params_set(cl_device_id dev, const ct_tune_params *p)
{
    const char *names[CT_TUNE_MAX_PARAMS];
    size_t values[CT_TUNE_MAX_PARAMS];
    for (int i = 0; i < p->n && i < CT_TUNE_MAX_PARAMS; i++) {
        names[i] = p->names[i];
        values[i] = p->values[i];
    }
    return static_cast<int>(CLBlastOverrideParameters(dev, p->kernel, CLBlastPrecisionSingle,
                                                      static_cast<size_t>(p->n), names, values));
}
