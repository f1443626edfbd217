#ifndef ENLOG_CCAIRO_SHIM_H
#define ENLOG_CCAIRO_SHIM_H
// cairo's image surfaces and PNG reader/writer (built with PNG support on Debian).
#include <cairo/cairo.h>
#endif
