#include "CMapShim.h"
#include "PNGMessages.h"
#include <cairo/cairo-ft.h>
#include <png.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

typedef struct {
    enlog_png_buffer *out;
    size_t capacity;
} writer_state;

void enlog_on_png_error(png_structp png, png_const_charp text) {
    message_sink *sink = png_get_error_ptr(png);
    if (sink->message_size > 0) snprintf(sink->message, sink->message_size, "%s", text);
    png_longjmp(png, 1);
}

void enlog_on_png_warning(png_structp png, png_const_charp text) { (void)png; (void)text; }

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

// The image data of a PNG is one zlib stream of its rows, each a filter byte and the pixels.
// It is deflated in two halves side by side, as pigz does: each half a raw deflate stream, the
// first ended by a sync flush (so the second starts on a byte boundary), the second primed with
// the last 32 KB of the first half's rows (so it finds repeats across the seam), then joined
// under one zlib header and the Adler-32 of the whole. Always two halves, on one core or more,
// so the same image gives the same bytes on every machine.
enum { DEFLATE_PARTS = 2, DEFLATE_WINDOW = 32768 };

typedef struct {
    const unsigned char *rows;      // all filtered rows
    size_t start, end;              // this part's bytes of `rows`
    int level, last;
    unsigned char *out;
    size_t out_count;
    unsigned long adler;
    int status;
} deflate_part;

static void *deflate_part_run(void *argument) {
    deflate_part *part = argument;
    z_stream stream;
    memset(&stream, 0, sizeof stream);
    part->status = -1;
    if (deflateInit2(&stream, part->level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) return NULL;
    size_t window = part->start < DEFLATE_WINDOW ? part->start : DEFLATE_WINDOW;
    if (window > 0 && deflateSetDictionary(&stream, part->rows + part->start - window, (uInt)window) != Z_OK) {
        deflateEnd(&stream);
        return NULL;
    }
    size_t count = part->end - part->start;
    size_t capacity = deflateBound(&stream, (uLong)count) + 64;   // room for the sync flush's marker too
    part->out = malloc(capacity);
    if (part->out) {
        stream.next_in = (Bytef *)(part->rows + part->start);
        stream.avail_in = (uInt)count;
        stream.next_out = part->out;
        stream.avail_out = (uInt)capacity;
        int result = deflate(&stream, part->last ? Z_FINISH : Z_SYNC_FLUSH);
        if ((part->last ? result == Z_STREAM_END : result == Z_OK) && stream.avail_in == 0 && stream.avail_out > 0) {
            part->out_count = capacity - stream.avail_out;
            part->adler = adler32(1L, part->rows + part->start, (uInt)count);
            part->status = 0;
        }
    }
    deflateEnd(&stream);
    return NULL;
}

// The zlib stream (RFC 1950) of `rows`: header, the parts deflated on up to `workers` threads,
// Adler-32. Returns a malloc'ed buffer, or NULL.
static unsigned char *deflate_rows(const unsigned char *rows, size_t count, int level, int workers, size_t *stream_count) {
    deflate_part parts[DEFLATE_PARTS];
    for (int index = 0; index < DEFLATE_PARTS; index++) {
        parts[index] = (deflate_part){ rows, count * index / DEFLATE_PARTS, count * (index + 1) / DEFLATE_PARTS,
                                       level, index == DEFLATE_PARTS - 1, NULL, 0, 0, -1 };
    }
    pthread_t helper;
    int helped = workers > 1 && pthread_create(&helper, NULL, deflate_part_run, &parts[0]) == 0;
    if (!helped) deflate_part_run(&parts[0]);
    for (int index = 1; index < DEFLATE_PARTS; index++) deflate_part_run(&parts[index]);
    if (helped) pthread_join(helper, NULL);

    unsigned char *stream = NULL;
    int ok = 1;
    size_t total = 2 + 4;
    for (int index = 0; index < DEFLATE_PARTS; index++) {
        ok = ok && parts[index].status == 0;
        total += parts[index].out_count;
    }
    if (ok && (stream = malloc(total))) {
        // CMF: deflate with a 32 KB window; FLG: the level's class as zlib writes it, and the
        // check bits that make the pair a multiple of 31.
        unsigned header = 0x78u << 8 | (unsigned)(level < 2 ? 0 : level < 6 ? 1 : level == 6 ? 2 : 3) << 6;
        header += 31 - header % 31;
        stream[0] = (unsigned char)(header >> 8);
        stream[1] = (unsigned char)header;
        size_t offset = 2;
        unsigned long adler = 1L;
        for (int index = 0; index < DEFLATE_PARTS; index++) {
            memcpy(stream + offset, parts[index].out, parts[index].out_count);
            offset += parts[index].out_count;
            adler = index == 0 ? parts[index].adler
                               : adler32_combine(adler, parts[index].adler, (z_off_t)(parts[index].end - parts[index].start));
        }
        for (int shift = 24; shift >= 0; shift -= 8) stream[offset++] = (unsigned char)(adler >> shift);
        *stream_count = offset;
    }
    for (int index = 0; index < DEFLATE_PARTS; index++) free(parts[index].out);
    return stream;
}

int enlog_png_encode_rgb24(const unsigned char *pixels, int width, int height, int stride,
                           int zlib_level, int workers, enlog_png_buffer *out, char *message, size_t message_size) {
    out->bytes = NULL;
    out->count = 0;
    // The rows as PNG stores them: filter byte 0 ("none"), then RGB. No filter: libpng's
    // default tries all five on every row and keeps the best, which costs more time than it
    // saves bytes on map images. Maps are drawn from palette tiles: few colours in flat areas
    // and sharp edges, which deflate finds as repeats in the raw rows (a busy city map: 178 KB
    // unfiltered at level 3 in 8 ms on one core; filtered "Up" at level 6, 238 KB in 21 ms).
    size_t row_bytes = 1 + (size_t)width * 3;
    unsigned char *rows = malloc(row_bytes * (size_t)height);
    if (!rows) {
        snprintf(message, message_size, "out of memory");
        return -1;
    }
    for (int y = 0; y < height; y++) {
        // cairo's RGB24 pixel is a native-endian 32-bit xRGB word: unpacked here, so the
        // result does not depend on the machine's byte order.
        const uint32_t *source = (const uint32_t *)(pixels + (size_t)y * (size_t)stride);
        unsigned char *target = rows + (size_t)y * row_bytes;
        *target++ = 0;
        for (int x = 0; x < width; x++) {
            uint32_t pixel = source[x];
            *target++ = (unsigned char)(pixel >> 16);
            *target++ = (unsigned char)(pixel >> 8);
            *target++ = (unsigned char)pixel;
        }
    }
    size_t stream_count = 0;
    unsigned char *volatile stream = deflate_rows(rows, row_bytes * (size_t)height, zlib_level, workers, &stream_count);
    free(rows);
    if (!stream) {
        snprintf(message, message_size, "zlib could not compress the image");
        return -1;
    }

    // libpng writes the file around the stream: signature, IHDR, the IDAT chunk, IEND.
    writer_state state = { out, 0 };
    message_sink sink = { message, message_size };
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &sink, enlog_on_png_error, enlog_on_png_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!png || !info) {
        snprintf(message, message_size, "libpng could not start");
        png_destroy_write_struct(&png, info ? &info : NULL);
        free(stream);
        return -1;
    }
    // setjmp alone as the controlling expression: the only place C lets its value be used here.
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        free(stream);
        enlog_png_buffer_free(out);
        return -1;
    }
    png_set_write_fn(png, &state, on_png_write, on_png_flush);
    png_set_IHDR(png, info, (png_uint_32)width, (png_uint_32)height, 8, PNG_COLOR_TYPE_RGB,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    png_write_chunk(png, (png_const_bytep)"IDAT", stream, stream_count);
    png_write_chunk(png, (png_const_bytep)"IEND", NULL, 0);
    png_destroy_write_struct(&png, &info);
    free(stream);
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
