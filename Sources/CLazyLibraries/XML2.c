// libxml2: the ENML validator, and the GPX and KML readers of `enlog import`. Loading it (with
// ICU, liblzma and zlib behind it) cost every run about 1.3 ms of CPU, `--version` included.
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/tree.h>
#include <libxml/valid.h>
#include <libxml/xmlerror.h>
#include <libxml/xmlIO.h>
#include <libxml/SAX2.h>
#include "CLazyLibraries.h"
#include "Loading.h"

#define LAZY_LIBRARY LAZY_XML2
#define XML2_FUNCTIONS(X, V)                                                                        \
    X(xmlParserCtxtPtr, xmlCreateMemoryParserCtxt, (const char *buffer, int size), (buffer, size))  \
    X(xmlParserCtxtPtr, xmlCreatePushParserCtxt, (xmlSAXHandlerPtr sax, void *user, const char *chunk, int size, const char *filename), \
      (sax, user, chunk, size, filename))                                                           \
    X(xmlErrorPtr, xmlCtxtGetLastError, (void *context), (context))                                 \
    X(int, xmlCtxtUseOptions, (xmlParserCtxtPtr context, int options), (context, options))          \
    X(xmlNodePtr, xmlDocGetRootElement, (const xmlDoc *document), (document))                       \
    V(xmlFreeDoc, (xmlDocPtr document), (document))                                                 \
    V(xmlFreeNodeList, (xmlNodePtr node), (node))                                                   \
    V(xmlFreeParserCtxt, (xmlParserCtxtPtr context), (context))                                     \
    V(xmlFreeParserInputBuffer, (xmlParserInputBufferPtr buffer), (buffer))                         \
    X(long, xmlGetLineNo, (const xmlNode *node), (node))                                            \
    V(xmlInitParser, (void), ())                                                                    \
    X(xmlParserInputPtr, xmlNewIOInputStream, (xmlParserCtxtPtr context, xmlParserInputBufferPtr input, xmlCharEncoding encoding), \
      (context, input, encoding))                                                                   \
    X(xmlChar *, xmlNodeListGetString, (xmlDocPtr document, const xmlNode *list, int inLine), (document, list, inLine)) \
    X(int, xmlParseChunk, (xmlParserCtxtPtr context, const char *chunk, int size, int terminate), (context, chunk, size, terminate)) \
    X(xmlDtdPtr, xmlParseDTD, (const xmlChar *externalID, const xmlChar *systemID), (externalID, systemID)) \
    X(int, xmlParseDocument, (xmlParserCtxtPtr context), (context))                                 \
    X(xmlParserInputBufferPtr, xmlParserInputBufferCreateMem, (const char *memory, int size, xmlCharEncoding encoding), \
      (memory, size, encoding))                                                                     \
    V(xmlSAX2StartElementNs, (void *context, const xmlChar *localName, const xmlChar *prefix, const xmlChar *uri, \
      int namespaceCount, const xmlChar **namespaces, int attributeCount, int defaultedCount, const xmlChar **attributes), \
      (context, localName, prefix, uri, namespaceCount, namespaces, attributeCount, defaultedCount, attributes)) \
    V(xmlSAX2EndElementNs, (void *context, const xmlChar *localName, const xmlChar *prefix, const xmlChar *uri), \
      (context, localName, prefix, uri))                                                            \
    V(xmlSAX2ExternalSubset, (void *context, const xmlChar *name, const xmlChar *externalID, const xmlChar *systemID), \
      (context, name, externalID, systemID))                                                        \
    V(xmlSetExternalEntityLoader, (xmlExternalEntityLoader loader), (loader))                       \
    V(xmlSetStructuredErrorFunc, (void *context, xmlStructuredErrorFunc handler), (context, handler)) \
    V(xmlStopParser, (xmlParserCtxtPtr context), (context))                                         \
    X(int, xmlStrlen, (const xmlChar *text), (text))                                                \
    /* The tests read the pooled DTD's declarations. */                                             \
    X(xmlElementPtr, xmlGetDtdElementDesc, (xmlDtdPtr dtd, const xmlChar *name), (dtd, name))

XML2_FUNCTIONS(LAZY_DEFINE_FUNCTION, LAZY_DEFINE_PROCEDURE)

// xmlFree is not a function but libxml2's allocator hook, a variable holding one.
void enlog_xml_free(void *pointer) {
    static void *cached;
    xmlFreeFunc *hook = lazy_cached(&cached, LAZY_LIBRARY, "xmlFree");
    (*hook)(pointer);
}

const char *const lazy_xml2_symbols[] = {XML2_FUNCTIONS(LAZY_NAME_FUNCTION, LAZY_NAME_PROCEDURE) "xmlFree", NULL};
