#ifndef ENLOG_CMAPSHIM_H
#define ENLOG_CMAPSHIM_H
#include <stddef.h>
#include <cairo/cairo.h>

// What the map renderer needs from C: PNG decoding and encoding through libpng, whose errors
// arrive by longjmp (which must not cross Swift frames) and whose limits (image size, chunk
// sizes, which chunks are read) only its own caller can set, and a cairo font face loaded by
// FreeType from a font file, which skips fontconfig's start-up (its configuration and caches).

typedef struct {
    unsigned char *bytes;   // malloc'ed; free with enlog_png_buffer_free
    size_t count;
} enlog_png_buffer;

// Encodes a cairo CAIRO_FORMAT_RGB24 image (32 bits per pixel, native-endian xRGB, `stride`
// bytes per row) as an 8-bit RGB PNG, rows unfiltered, deflated at `zlib_level` in two halves
// on up to `workers` threads (the bytes do not depend on `workers`).
// Returns 0 and fills `out`, or -1 with a message in `message` (`out` is then empty).
int enlog_png_encode_rgb24(const unsigned char *pixels, int width, int height, int stride,
                           int zlib_level, int workers, enlog_png_buffer *out, char *message, size_t message_size);
void enlog_png_buffer_free(enlog_png_buffer *buffer);

// One tile of a batch: its PNG bytes and where its top-left corner goes in the canvas.
// `status` is 0 when drawn, 1 when the image is not `side` pixels square (nothing drawn), or -1
// with libpng's reason in `message` (the canvas may then be partly drawn).
typedef struct {
    const unsigned char *bytes;
    size_t count;
    int x, y;
    int status;
    char message[160];
} enlog_png_tile;

// Decodes every tile of `tiles` (`side`×`side` PNGs of any colour type, bit depth or
// interlacing) straight into a cairo CAIRO_FORMAT_RGB24 canvas, on up to `workers` threads (at
// most 4), each taking the next tile not yet taken. Only the part of a tile inside the canvas is
// written, translucent pixels are blended over what is there, and a tile is inflated no further
// than the canvas's last row: what lies past it (rows, trailing image data) is not read. Tiles
// must not overlap: each thread writes only its tiles' pixels.
void enlog_png_decode_tiles_into_rgb24(enlog_png_tile *tiles, int count, int side,
                                       unsigned char *canvas, int canvas_width, int canvas_height, int canvas_stride,
                                       int workers);

// Decodes a PNG of any kind, at most `most_side` pixels wide and high, into a new cairo image
// surface as cairo's own reader would (RGB24, or ARGB32 premultiplied when it has alpha), its
// image data inflated no further than its last row and every chunk but the image's own skipped
// unread. NULL with libpng's reason in `message` when it cannot be decoded.
cairo_surface_t *enlog_png_decode_image(const unsigned char *bytes, size_t count, int most_side,
                                        char *message, size_t message_size);

// A cairo font face for the first of `paths` that FreeType can open, made once per process and
// kept for its lifetime (cairo's font caches may hold it past any canvas); NULL when none can
// be opened. The first call's `paths` decide; later calls return the same face.
cairo_font_face_t *enlog_font_face_from_files(const char *const *paths, int count);
#endif
