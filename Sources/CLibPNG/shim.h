#ifndef ENLOG_CLIBPNG_SHIM_H
#define ENLOG_CLIBPNG_SHIM_H
// libpng 1.6 (Debian libpng-dev): used only from CMapShim, whose C code can catch libpng's
// longjmp errors, which Swift frames must never be unwound by.
#include <png.h>
#endif
