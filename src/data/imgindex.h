/*
 * imgindex.h - the index of an image folder (imagefolder:DIR:index=FILE):
 * the class names and files of each of its split folders (train and test,
 * or DIR itself), with each file's size and modification time, so that a
 * later run takes the same list without sorting the folders again, and
 * finds out when the folder no longer matches it.
 *
 * The file is text, one record a line:
 *
 *   cltrain-imagefolder-index 1
 *   split NAME                  NAME: train, test or . (DIR itself)
 *   classes K
 *   CLASS                       K lines, the class folders' names in order
 *   files N
 *   LABEL SIZE MTIME NAME       N lines: class number, bytes, modification
 *                               time in ns since 1970, the file's name in
 *                               its class folder; in class order, then byte
 *                               order of the names
 *   ...                         more split sections
 *   end DIGEST                  16 hex digits: FNV-1a 64 of every byte above
 *
 * Names hold no '/', newline or NUL and are not "." or "..".
 */
#ifndef CT_DATA_IMGINDEX_H
#define CT_DATA_IMGINDEX_H

#include <stddef.h>
#include <stdint.h>

#define CT_IMGINDEX_MAX_SPLITS 2

typedef struct ct_imgfile {
    char *name;       /* in its class folder */
    int32_t label;
    uint64_t size;
    int64_t mtime_ns;
} ct_imgfile;

typedef struct ct_imgsplit {
    char *dir;        /* "train", "test" or "." */
    char **classes;   // (nclasses)
    size_t nclasses;
    ct_imgfile *files; // (nfiles)
    size_t nfiles;
} ct_imgsplit;

typedef struct ct_imgindex {
    ct_imgsplit split[CT_IMGINDEX_MAX_SPLITS];
    int nsplits;
} ct_imgindex;

void ct_imgindex_free(ct_imgindex *ix);

/* Parses len bytes of an index file (path names it in messages, with the
 * line): CT_ERR_CORRUPT for anything but the format above, its digest
 * included. */
int ct_imgindex_parse(const char *text, size_t len, const char *path, ct_imgindex *out);
/* The file's text (malloc'd, NUL-terminated); CT_ERR_INVALID_ARG for a
 * name the format cannot hold. */
int ct_imgindex_format(const ct_imgindex *ix, char **text, size_t *len);

/* Reads and parses path: CT_ERR_IO when it cannot be read (errno_out, if
 * not NULL, says why: ENOENT when it does not exist). */
int ct_imgindex_read(const char *path, ct_imgindex *out, int *errno_out);
/* Writes path through a temporary file renamed over it. */
int ct_imgindex_write(const char *path, const ct_imgindex *ix);

/* The split named dir, or NULL. */
const ct_imgsplit *ct_imgindex_find(const ct_imgindex *ix, const char *dir);

#endif /* CT_DATA_IMGINDEX_H */
