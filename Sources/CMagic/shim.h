#ifndef ENLOG_CMAGIC_SHIM_H
#define ENLOG_CMAGIC_SHIM_H
// libmagic: a file's MIME type from its content (the same database file(1) uses).
#include <magic.h>
#endif
