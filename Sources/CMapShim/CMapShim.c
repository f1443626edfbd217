#include "CMapShim.h"
#include <cairo-ft.h>
#include <png.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

// Where libpng's error text goes: the caller's buffer (libpng's own default prints to stderr).
typedef struct {
    char *message;
    size_t message_size;
} message_sink;

typedef struct {
    enlog_png_buffer *out;
    size_t capacity;
} writer_state;

static void on_png_error(png_structp png, png_const_charp text) {
    message_sink *sink = png_get_error_ptr(png);
    if (sink->message_size > 0) snprintf(sink->message, sink->message_size, "%s", text);
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
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &sink, on_png_error, on_png_warning);
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

typedef struct {
    const unsigned char *bytes;
    size_t count;
    size_t offset;
} reader_state;

static void on_png_read(png_structp png, png_bytep data, size_t length) {
    reader_state *state = png_get_io_ptr(png);
    if (state->count - state->offset < length) png_error(png, "the PNG ends early");
    memcpy(data, state->bytes + state->offset, length);
    state->offset += length;
}

// A canvas pixel (cairo RGB24: a native-endian xRGB word) seen through `alpha` over `under`.
static uint32_t over(uint32_t red, uint32_t green, uint32_t blue, uint32_t alpha, uint32_t under) {
    uint32_t keep = 255 - alpha;
    red = (red * alpha + ((under >> 16) & 0xFF) * keep + 127) / 255;
    green = (green * alpha + ((under >> 8) & 0xFF) * keep + 127) / 255;
    blue = (blue * alpha + (under & 0xFF) * keep + 127) / 255;
    return 0xFF000000u | red << 16 | green << 8 | blue;
}

// How decoded rows become canvas pixels: 8-bit RGBA, or (palette images, which OSM's tiles
// are) one byte a pixel looked up in the palette, which skips libpng's expansion to RGBA.
typedef struct {
    int has_alpha;
    int indexed;
    uint32_t colors[256];
    unsigned char alphas[256];
} row_format;

// One decoded row into `canvas_row`, columns [first, last) of the image, which starts at the
// canvas's column `origin_x` (indices stay inside the canvas row even when it is negative).
// Opaque pixels replace the canvas's; translucent ones are blended over it (straight alpha).
static void blend_row(const row_format *format, const unsigned char *source, uint32_t *canvas_row, int origin_x,
                      int first, int last) {
    for (int x = first; x < last; x++) {
        uint32_t *target = &canvas_row[origin_x + x];
        if (format->indexed) {
            unsigned char index = source[x], alpha = format->alphas[index];
            if (alpha == 255) {
                *target = format->colors[index];
            } else if (alpha != 0) {
                uint32_t color = format->colors[index];
                *target = over((color >> 16) & 0xFF, (color >> 8) & 0xFF, color & 0xFF, alpha, *target);
            }
            continue;
        }
        const unsigned char *pixel = source + 4 * x;
        if (!format->has_alpha || pixel[3] == 255) {
            *target = 0xFF000000u | (uint32_t)pixel[0] << 16 | (uint32_t)pixel[1] << 8 | pixel[2];
        } else if (pixel[3] != 0) {
            *target = over(pixel[0], pixel[1], pixel[2], pixel[3], *target);
        }
    }
}

// Sets the transformations that bring any PNG to `format`'s kind of rows.
static void choose_row_format(png_structp png, png_infop info, row_format *format) {
    int color_type = png_get_color_type(png, info);
    format->has_alpha = (color_type & PNG_COLOR_MASK_ALPHA) || png_get_valid(png, info, PNG_INFO_tRNS);
    format->indexed = color_type == PNG_COLOR_TYPE_PALETTE;
    if (format->indexed) {
        png_colorp palette = NULL;
        int palette_size = 0;
        png_get_PLTE(png, info, &palette, &palette_size);
        png_bytep transparency = NULL;
        int transparency_size = 0;
        png_get_tRNS(png, info, &transparency, &transparency_size, NULL);
        // An index past the palette is black, as libpng's own expansion makes it.
        for (int index = 0; index < 256; index++) {
            format->colors[index] = index < palette_size
                ? 0xFF000000u | (uint32_t)palette[index].red << 16 | (uint32_t)palette[index].green << 8 | palette[index].blue
                : 0xFF000000u;
            format->alphas[index] = index < transparency_size ? transparency[index] : 255;
        }
        png_set_packing(png);   // 1, 2 and 4-bit indices: a byte each
        return;
    }
    // Every other kind (grey, 16-bit, with or without alpha or tRNS) becomes 8-bit RGBA.
    png_set_expand(png);
    png_set_strip_16(png);
    if (!(color_type & PNG_COLOR_MASK_COLOR)) png_set_gray_to_rgb(png);
    if (!format->has_alpha) png_set_filler(png, 0xFF, PNG_FILLER_AFTER);
}

// One tile into the canvas (see enlog_png_decode_tiles_into_rgb24): 0, 1 or -1 as its status.
static int decode_into_rgb24(const unsigned char *bytes, size_t count, int side,
                             unsigned char *canvas, int canvas_width, int canvas_height, int canvas_stride,
                             int origin_x, int origin_y, char *message, size_t message_size) {
    message_sink sink = { message, message_size };
    reader_state reader = { bytes, count, 0 };
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &sink, on_png_error, on_png_warning);
    if (!png) {
        snprintf(message, message_size, "libpng could not start");
        return -1;
    }
    png_infop info = png_create_info_struct(png);
    if (!info) {
        snprintf(message, message_size, "out of memory");
        png_destroy_read_struct(&png, NULL, NULL);
        return -1;
    }
    // volatile: read after a longjmp back into this frame.
    unsigned char *volatile pixels = NULL;
    png_bytep *volatile rows = NULL;
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_read_struct(&png, &info, NULL);
        free(pixels);
        free(rows);
        return -1;
    }
    png_set_read_fn(png, &reader, on_png_read);
    png_read_info(png, info);
    if ((int)png_get_image_width(png, info) != side || (int)png_get_image_height(png, info) != side) {
        png_destroy_read_struct(&png, &info, NULL);
        return 1;
    }
    row_format format;
    choose_row_format(png, info, &format);
    int passes = png_set_interlace_handling(png);
    png_read_update_info(png, info);
    size_t row_bytes = (size_t)side * (format.indexed ? 1 : 4);
    if (png_get_rowbytes(png, info) != row_bytes) png_error(png, "unexpected row size after expansion");

    int first_row = origin_y < 0 ? -origin_y : 0;
    int end_row = canvas_height - origin_y < side ? canvas_height - origin_y : side;
    int first_column = origin_x < 0 ? -origin_x : 0;
    int end_column = canvas_width - origin_x < side ? canvas_width - origin_x : side;
    if (passes == 1) {
        // Rows are read down to the last one the canvas shows; below it nothing is inflated.
        pixels = malloc(row_bytes);
        if (!pixels) png_error(png, "out of memory");
        for (int y = 0; y < end_row; y++) {
            png_read_row(png, pixels, NULL);
            if (y >= first_row) {
                uint32_t *canvas_row = (uint32_t *)(canvas + (size_t)(origin_y + y) * (size_t)canvas_stride);
                blend_row(&format, pixels, canvas_row, origin_x, first_column, end_column);
            }
        }
    } else {
        // An interlaced PNG fills every row in every pass: read whole, then copied.
        pixels = malloc(row_bytes * (size_t)side);
        rows = malloc(sizeof(png_bytep) * (size_t)side);
        if (!pixels || !rows) png_error(png, "out of memory");
        for (int y = 0; y < side; y++) rows[y] = pixels + (size_t)y * row_bytes;
        png_read_image(png, rows);
        for (int y = first_row; y < end_row; y++) {
            uint32_t *canvas_row = (uint32_t *)(canvas + (size_t)(origin_y + y) * (size_t)canvas_stride);
            blend_row(&format, rows[y], canvas_row, origin_x, first_column, end_column);
        }
    }
    png_destroy_read_struct(&png, &info, NULL);
    free(pixels);
    free(rows);
    return 0;
}

typedef struct {
    enlog_png_tile *tiles;
    int count, side;
    unsigned char *canvas;
    int canvas_width, canvas_height, canvas_stride;
    int next;   // the next tile to take, shared by the workers (atomic)
} tile_batch;

static void *decode_tiles_run(void *argument) {
    tile_batch *batch = argument;
    for (;;) {
        int index = __atomic_fetch_add(&batch->next, 1, __ATOMIC_RELAXED);
        if (index >= batch->count) return NULL;
        enlog_png_tile *tile = &batch->tiles[index];
        tile->status = decode_into_rgb24(tile->bytes, tile->count, batch->side, batch->canvas,
                                         batch->canvas_width, batch->canvas_height, batch->canvas_stride,
                                         tile->x, tile->y, tile->message, sizeof tile->message);
    }
}

void enlog_png_decode_tiles_into_rgb24(enlog_png_tile *tiles, int count, int side,
                                       unsigned char *canvas, int canvas_width, int canvas_height, int canvas_stride,
                                       int workers) {
    tile_batch batch = { tiles, count, side, canvas, canvas_width, canvas_height, canvas_stride, 0 };
    enum { MOST_HELPERS = 3 };
    pthread_t helpers[MOST_HELPERS];
    int started = 0;
    while (started < MOST_HELPERS && started < workers - 1 && started < count - 1
           && pthread_create(&helpers[started], NULL, decode_tiles_run, &batch) == 0) {
        started++;
    }
    decode_tiles_run(&batch);
    for (int index = 0; index < started; index++) pthread_join(helpers[index], NULL);
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
