#include "CMapShim.h"
#include <cairo-ft.h>
#include <png.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    enlog_png_buffer *out;
    size_t capacity;
    char *message;
    size_t message_size;
} writer_state;

static void on_png_error(png_structp png, png_const_charp text) {
    writer_state *state = png_get_error_ptr(png);
    if (state->message_size > 0) snprintf(state->message, state->message_size, "%s", text);
    png_longjmp(png, 1);
}

// Warnings (none expected for images built here) would go to stderr by default: dropped.
static void on_png_warning(png_structp png, png_const_charp text) { (void)png; (void)text; }

static void on_png_write(png_structp png, png_bytep data, size_t length) {
    writer_state *state = png_get_io_ptr(png);
    enlog_png_buffer *out = state->out;
    if (out->count + length > state->capacity) {
        size_t capacity = state->capacity ? state->capacity : 64 * 1024;
        while (capacity < out->count + length) capacity *= 2;
        unsigned char *grown = realloc(out->bytes, capacity);
        if (!grown) png_error(png, "out of memory");
        out->bytes = grown;
        state->capacity = capacity;
    }
    memcpy(out->bytes + out->count, data, length);
    out->count += length;
}

static void on_png_flush(png_structp png) { (void)png; }

int enlog_png_encode_rgb24(const unsigned char *pixels, int width, int height, int stride,
                           int zlib_level, enlog_png_buffer *out, char *message, size_t message_size) {
    out->bytes = NULL;
    out->count = 0;
    writer_state state = { out, 0, message, message_size };
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &state, on_png_error, on_png_warning);
    if (!png) {
        snprintf(message, message_size, "libpng could not start");
        return -1;
    }
    png_infop info = png_create_info_struct(png);
    // volatile: read after a longjmp back into this frame.
    unsigned char *volatile row = malloc((size_t)width * 3);
    if (!info || !row) {
        snprintf(message, message_size, "out of memory");
        png_destroy_write_struct(&png, info ? &info : NULL);
        free(row);
        return -1;
    }
    // setjmp alone as the controlling expression: the only place C lets its value be used here.
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        free(row);
        enlog_png_buffer_free(out);
        return -1;
    }
    png_set_write_fn(png, &state, on_png_write, on_png_flush);
    png_set_compression_level(png, zlib_level);
    // One filter for all rows: libpng's default tries all five on every row and keeps the best,
    // which costs more time than it saves bytes on map images. "Up" suits their flat areas.
    png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_UP);
    png_set_IHDR(png, info, (png_uint_32)width, (png_uint_32)height, 8, PNG_COLOR_TYPE_RGB,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    for (int y = 0; y < height; y++) {
        // cairo's RGB24 pixel is a native-endian 32-bit xRGB word: unpacked here, so the
        // result does not depend on the machine's byte order.
        const uint32_t *source = (const uint32_t *)(pixels + (size_t)y * (size_t)stride);
        unsigned char *target = row;
        for (int x = 0; x < width; x++) {
            uint32_t pixel = source[x];
            *target++ = (unsigned char)(pixel >> 16);
            *target++ = (unsigned char)(pixel >> 8);
            *target++ = (unsigned char)pixel;
        }
        png_write_row(png, row);
    }
    png_write_end(png, info);
    png_destroy_write_struct(&png, &info);
    free(row);
    return 0;
}

void enlog_png_buffer_free(enlog_png_buffer *buffer) {
    free(buffer->bytes);
    buffer->bytes = NULL;
    buffer->count = 0;
}

static pthread_mutex_t font_lock = PTHREAD_MUTEX_INITIALIZER;
static int font_tried;
static cairo_font_face_t *font_face;

static cairo_font_face_t *load_font_face(const char *const *paths, int count) {
    FT_Library library;
    if (FT_Init_FreeType(&library) != 0) return NULL;
    for (int index = 0; index < count; index++) {
        FT_Face face;
        if (FT_New_Face(library, paths[index], 0, &face) != 0) continue;
        cairo_font_face_t *created = cairo_ft_font_face_create_for_ft_face(face, 0);
        if (cairo_font_face_status(created) == CAIRO_STATUS_SUCCESS) {
            return created;   // the library and face live as long as the process
        }
        cairo_font_face_destroy(created);
        FT_Done_Face(face);
    }
    FT_Done_FreeType(library);
    return NULL;
}

cairo_font_face_t *enlog_font_face_from_files(const char *const *paths, int count) {
    pthread_mutex_lock(&font_lock);
    if (!font_tried) {
        font_tried = 1;
        font_face = load_font_face(paths, count);
    }
    cairo_font_face_t *face = font_face;
    pthread_mutex_unlock(&font_lock);
    return face;
}
