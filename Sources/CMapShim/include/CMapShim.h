#ifndef ENLOG_CMAPSHIM_H
#define ENLOG_CMAPSHIM_H
#include <stddef.h>
#include <cairo.h>

// What the map renderer needs from C: PNG encoding through libpng, whose errors arrive by
// longjmp (which must not cross Swift frames), and a cairo font face loaded by FreeType from a
// font file, which skips fontconfig's start-up (reading its configuration and font caches).

typedef struct {
    unsigned char *bytes;   // malloc'ed; free with enlog_png_buffer_free
    size_t count;
} enlog_png_buffer;

// Encodes a cairo CAIRO_FORMAT_RGB24 image (32 bits per pixel, native-endian xRGB, `stride`
// bytes per row) as an 8-bit RGB PNG with one filter for every row and the given zlib level.
// Returns 0 and fills `out`, or -1 with a message in `message` (`out` is then empty).
int enlog_png_encode_rgb24(const unsigned char *pixels, int width, int height, int stride,
                           int zlib_level, enlog_png_buffer *out, char *message, size_t message_size);
void enlog_png_buffer_free(enlog_png_buffer *buffer);

// A cairo font face for the first of `paths` that FreeType can open, made once per process and
// kept for its lifetime (cairo's font caches may hold it past any canvas); NULL when none can
// be opened. The first call's `paths` decide; later calls return the same face.
cairo_font_face_t *enlog_font_face_from_files(const char *const *paths, int count);
#endif
