// libarchive: the members of a Google Takeout .zip (and a .kmz) for `enlog import`.
#include <archive.h>
#include <archive_entry.h>
#include "Loading.h"

#define LAZY_LIBRARY LAZY_ARCHIVE
#define ARCHIVE_FUNCTIONS(X, V)                                                                     \
    X(struct archive *, archive_read_new, (void), ())                                               \
    X(int, archive_read_support_format_zip, (struct archive *archive), (archive))                  \
    X(int, archive_read_open_filename, (struct archive *archive, const char *path, size_t block), (archive, path, block)) \
    X(int, archive_read_next_header, (struct archive *archive, struct archive_entry **entry), (archive, entry)) \
    X(la_ssize_t, archive_read_data, (struct archive *archive, void *buffer, size_t size), (archive, buffer, size)) \
    X(la_int64_t, archive_filter_bytes, (struct archive *archive, int filter), (archive, filter))  \
    X(const char *, archive_error_string, (struct archive *archive), (archive))                    \
    X(int, archive_read_free, (struct archive *archive), (archive))                                \
    X(__LA_MODE_T, archive_entry_filetype, (struct archive_entry *entry), (entry))                 \
    X(const char *, archive_entry_pathname, (struct archive_entry *entry), (entry))                \
    X(const char *, archive_entry_pathname_utf8, (struct archive_entry *entry), (entry))

ARCHIVE_FUNCTIONS(LAZY_DEFINE_FUNCTION, LAZY_DEFINE_PROCEDURE)

const char *const lazy_archive_symbols[] = {ARCHIVE_FUNCTIONS(LAZY_NAME_FUNCTION, LAZY_NAME_PROCEDURE) NULL};
