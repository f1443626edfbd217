#ifndef ENLOG_CEXIF_SHIM_H
#define ENLOG_CEXIF_SHIM_H
// libexif: a photo's EXIF tags (the GPS IFD and the time it was taken).
#include <libexif/exif-data.h>
#include <libexif/exif-loader.h>
#include <libexif/exif-utils.h>
#endif
