#ifndef ENLOG_CARCHIVE_SHIM_H
#define ENLOG_CARCHIVE_SHIM_H
// libarchive reads the members of a Google Takeout .zip (and a .kmz) as streams for `enlog import`.
#include <archive.h>
#include <archive_entry.h>
#endif
