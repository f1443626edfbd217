// FreeType: the attribution's font, handed to cairo.
#include <ft2build.h>
#include FT_FREETYPE_H
#include "Loading.h"

#define LAZY_LIBRARY LAZY_FREETYPE
#define FREETYPE_FUNCTIONS(X, V) \
    X(FT_Error, FT_Done_Face, (FT_Face face), (face)) \
    X(FT_Error, FT_Done_FreeType, (FT_Library library), (library)) \
    X(FT_Error, FT_Init_FreeType, (FT_Library *alibrary), (alibrary)) \
    X(FT_Error, FT_New_Face, (FT_Library library, const char* filepathname, FT_Long face_index, FT_Face *aface), (library, filepathname, face_index, aface))

FREETYPE_FUNCTIONS(LAZY_DEFINE_FUNCTION, LAZY_DEFINE_PROCEDURE)

const char *const lazy_freetype_symbols[] = {FREETYPE_FUNCTIONS(LAZY_NAME_FUNCTION, LAZY_NAME_PROCEDURE) NULL};
