/*
 * cltrain/cltrain.h - the whole public API.
 */
#ifndef CLTRAIN_CLTRAIN_H
#define CLTRAIN_CLTRAIN_H

#include "cltrain/bench.h"
#include "cltrain/common.h"
#include "cltrain/context.h"
#include "cltrain/data.h"
#include "cltrain/device.h"
#include "cltrain/export.h"
#include "cltrain/gemm.h"
#include "cltrain/model.h"
#include "cltrain/opencl.h"
#include "cltrain/parallel.h"
#include "cltrain/selftest.h"
#include "cltrain/train.h"
#include "cltrain/tune.h"

#endif /* CLTRAIN_CLTRAIN_H */
