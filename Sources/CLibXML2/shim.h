#ifndef ENLOG_CLIBXML2_SHIM_H
#define ENLOG_CLIBXML2_SHIM_H
// Debian's libxml2 is built with ICU; its headers then pull in ICU types that clash with the
// copy Foundation carries ("'UErrorCode' has different definitions"). Nothing here needs ICU.
#include <libxml/xmlversion.h>
#undef LIBXML_ICU_ENABLED
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/tree.h>
#include <libxml/valid.h>
#include <libxml/xmlerror.h>
#include <libxml/xmlIO.h>
#include <libxml/uri.h>
#include <libxml/SAX2.h>

// xmlFree is a global function pointer (libxml2's allocator hook, set once at start-up), which
// Swift 6 sees as shared mutable state; calling it from C reads it where C reads it. libxml2 is
// loaded on first use (CLazyLibraries, which defines this and every libxml2 function enlog calls).
void enlog_xml_free(void *pointer);
#endif
