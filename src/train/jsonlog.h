/*
 * jsonlog.h - the --log file's JSON lines (src/train/jsonlog.c).
 */
#ifndef CT_TRAIN_JSONLOG_H
#define CT_TRAIN_JSONLOG_H

#include "cltrain/train.h"

/* Appends one JSON line of kind "epoch" or "step" from r to path (NULL:
 * nothing); nothing is written when the file cannot be opened. */
void ct_log_json(const char *path, const ct_epoch_report *r, const char *kind);

#endif /* CT_TRAIN_JSONLOG_H */
