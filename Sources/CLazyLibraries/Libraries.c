#include "Loading.h"

// The sonames are the ABI enlog is built against (Debian 12's packages in scripts/apt-packages.txt):
// a new soname is a new ABI, and LazyLibrariesTests fails until it is named here.
struct lazy_library lazy_libraries[LAZY_COUNT] = {
    [LAZY_CURL] = {"libcurl.so.4", "libcurl4", lazy_curl_symbols, NULL},
    [LAZY_ARCHIVE] = {"libarchive.so.13", "libarchive13", lazy_archive_symbols, NULL},
    [LAZY_MAGIC] = {"libmagic.so.1", "libmagic1", lazy_magic_symbols, NULL},
    [LAZY_EXIF] = {"libexif.so.12", "libexif12", lazy_exif_symbols, NULL},
    [LAZY_YAJL] = {"libyajl.so.2", "libyajl2", lazy_yajl_symbols, NULL},
    [LAZY_CAIRO] = {"libcairo.so.2", "libcairo2", lazy_cairo_symbols, NULL},
    [LAZY_PNG] = {"libpng16.so.16", "libpng16-16", lazy_png_symbols, NULL},
    [LAZY_FREETYPE] = {"libfreetype.so.6", "libfreetype6", lazy_freetype_symbols, NULL},
    [LAZY_XML2] = {"libxml2.so.2", "libxml2", lazy_xml2_symbols, NULL},
    [LAZY_MOSQUITTO] = {"libmosquitto.so.1", "libmosquitto1", lazy_mosquitto_symbols, NULL},
};
