/*
 * test_headers - the public headers were each compiled alone (the
 * header_*.c objects); this links them and checks a few declarations.
 */
#include <stdio.h>
#include <string.h>

#include <cltrain/cltrain.h>

int main(void)
{
    ct_context_options o;
    ct_context_defaults(&o);
    int ok = o.cache == CT_CACHE_AUTO && o.log_level == CT_LOG_WARN && o.lazy_kernels == 0;
    printf("public headers compile alone and together: %s\n", ok ? "ok" : "defaults wrong");
    return ok ? 0 : 1;
}
