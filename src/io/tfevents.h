/*
 * tfevents.h - writing TensorBoard event files (the format of TensorFlow's
 * summary writers, which TensorBoard reads).
 *
 * A file is a sequence of records: a little-endian uint64 length, the
 * masked CRC-32C of those 8 bytes, the data, the masked CRC-32C of the data
 * (src/core/crc32c.h). Each record's data is a serialized `Event` protobuf
 * (src/io/tfevents.proto); the first holds file_version "brain.Event:2",
 * the others one summary value each: a scalar or a histogram, with the wall
 * time and the step.
 *
 * Writes go through a stdio buffer; ct_tfevents_flush hands them to the
 * kernel and fsyncs the file. Every failure is CT_ERR_IO naming the file
 * and the cause; after one, the writer refuses further writes with the
 * same error, so a caller that goes on without it loses nothing silently.
 */
#ifndef CT_IO_TFEVENTS_H
#define CT_IO_TFEVENTS_H

#include <stddef.h>
#include <stdint.h>

typedef struct ct_tfevents ct_tfevents;

#define CT_TFEVENTS_VERSION "brain.Event:2"
/* bytes a record adds around its data: length, its CRC, the data's CRC */
#define CT_TFEVENTS_FRAMING 16

/* Creates `dir` (and its parents) if missing and a new file in it named as
 * TensorFlow's writers name theirs, events.out.tfevents.<unix time>.<host>
 * (with .1, .2, ... appended when a file of that name exists: nothing is
 * overwritten), and writes the version event. */
int ct_tfevents_open(const char *dir, ct_tfevents **out);
/* The file's path. */
const char *ct_tfevents_path(const ct_tfevents *w);

/* One scalar (stored as a float, as TensorBoard keeps them). */
int ct_tfevents_scalar(ct_tfevents *w, const char *tag, int64_t step, double value);

/* A histogram of n values: min, max, count, sum and sum of squares of the
 * finite ones (NaN and Inf are left out), and `buckets` equal-width buckets
 * from min to max, bucket i counting the values in [limit[i - 1], limit[i])
 * as TensorFlow's histograms do (the last limit is DBL_MAX, as there). All
 * values equal: one bucket. No finite value: nothing is written. */
int ct_tfevents_histogram(ct_tfevents *w, const char *tag, int64_t step, const float *v, size_t n,
                          int buckets);

/* Hands buffered records to the kernel and fsyncs the file. */
int ct_tfevents_flush(ct_tfevents *w);
/* Flushes and closes; *w becomes NULL. Returns the flush's or the close's
 * failure (the writer is freed either way). */
int ct_tfevents_close(ct_tfevents **w);

/* Frames `len` bytes of record data: out gets the 12-byte header, the data
 * and the 4-byte footer (len + CT_TFEVENTS_FRAMING bytes). */
void ct_tfevents_frame(const void *data, size_t len, uint8_t *out);

#endif /* CT_IO_TFEVENTS_H */
