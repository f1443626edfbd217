// libmagic: a photo's or attachment's MIME type from its content.
#include <magic.h>
#include "Loading.h"

#define LAZY_LIBRARY LAZY_MAGIC
#define MAGIC_FUNCTIONS(X, V)                                                                       \
    X(magic_t, magic_open, (int flags), (flags))                                                    \
    X(int, magic_load, (magic_t cookie, const char *database), (cookie, database))                 \
    X(const char *, magic_buffer, (magic_t cookie, const void *buffer, size_t size), (cookie, buffer, size)) \
    V(magic_close, (magic_t cookie), (cookie))

MAGIC_FUNCTIONS(LAZY_DEFINE_FUNCTION, LAZY_DEFINE_PROCEDURE)

const char *const lazy_magic_symbols[] = {MAGIC_FUNCTIONS(LAZY_NAME_FUNCTION, LAZY_NAME_PROCEDURE) NULL};
