// libexif: a photo's GPS tags and the time it was taken.
#include <libexif/exif-data.h>
#include <libexif/exif-utils.h>
#include "Loading.h"

#define LAZY_LIBRARY LAZY_EXIF
#define EXIF_FUNCTIONS(X, V)                                                                        \
    X(ExifData *, exif_data_new, (void), ())                                                        \
    V(exif_data_unset_option, (ExifData *data, ExifDataOption option), (data, option))             \
    V(exif_data_load_data, (ExifData *data, const unsigned char *bytes, unsigned int size), (data, bytes, size)) \
    X(ExifByteOrder, exif_data_get_byte_order, (ExifData *data), (data))                           \
    X(ExifEntry *, exif_content_get_entry, (ExifContent *content, ExifTag tag), (content, tag))    \
    X(ExifRational, exif_get_rational, (const unsigned char *bytes, ExifByteOrder order), (bytes, order)) \
    V(exif_data_unref, (ExifData *data), (data))

EXIF_FUNCTIONS(LAZY_DEFINE_FUNCTION, LAZY_DEFINE_PROCEDURE)

const char *const lazy_exif_symbols[] = {EXIF_FUNCTIONS(LAZY_NAME_FUNCTION, LAZY_NAME_PROCEDURE) NULL};
