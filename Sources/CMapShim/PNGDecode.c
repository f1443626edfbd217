#include "CMapShim.h"
#include "PNGMessages.h"
#include <png.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

// Decoding PNGs (map tiles, static maps) under limits: see enlog_png_decode_tiles_into_rgb24
// and enlog_png_decode_image in CMapShim.h.

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

// What a decoder writes rows to: a canvas it blends a tile into (clipped to the canvas), or an
// image of the PNG's own size it fills.
typedef struct {
    // The canvas, or the image's pixels once made (cairo RGB24, or ARGB32 premultiplied).
    unsigned char *pixels;
    int width, height, stride;
    int origin_x, origin_y;
    // Canvas: the side a tile must have. 0: an image of any size up to `most_side`.
    int side, most_side;
    cairo_surface_t *image;
    row_format format;
    int png_height, interlaced;
    size_t row_bytes;
    int first_row, end_row, first_column, end_column;
    unsigned char *rows;   // an interlaced PNG's rows, filled pass by pass
    int outcome;
} png_decoder;

enum { DECODING, DECODED, OTHER_SIZE };

// Ancillary chunks are never needed here and larger ones are not read into memory.
enum { MOST_CHUNK_BYTES = 64 * 1024 };

// One decoded row into an image of the PNG's own size, as cairo's PNG reader stores it.
static void store_row(const png_decoder *decoder, const unsigned char *source, uint32_t *target, int width) {
    const row_format *format = &decoder->format;
    for (int x = 0; x < width; x++) {
        uint32_t red, green, blue, alpha;
        if (format->indexed) {
            uint32_t color = format->colors[source[x]];
            red = (color >> 16) & 0xFF, green = (color >> 8) & 0xFF, blue = color & 0xFF;
            alpha = format->alphas[source[x]];
        } else {
            const unsigned char *pixel = source + 4 * x;
            red = pixel[0], green = pixel[1], blue = pixel[2], alpha = format->has_alpha ? pixel[3] : 255;
        }
        if (!format->has_alpha) {
            target[x] = 0xFF000000u | red << 16 | green << 8 | blue;
            continue;
        }
        // Premultiplied, rounded as cairo's own reader rounds.
        uint32_t products[3] = { red * alpha + 0x80, green * alpha + 0x80, blue * alpha + 0x80 };
        for (int index = 0; index < 3; index++) products[index] = (products[index] + (products[index] >> 8)) >> 8;
        target[x] = alpha << 24 | products[0] << 16 | products[1] << 8 | products[2];
    }
}

static void emit_row(png_decoder *decoder, const unsigned char *source, int y) {
    uint32_t *target = (uint32_t *)(decoder->pixels + (size_t)(decoder->origin_y + y) * (size_t)decoder->stride);
    if (decoder->image) {
        store_row(decoder, source, target, decoder->width);
    } else {
        blend_row(&decoder->format, source, target, decoder->origin_x, decoder->first_column, decoder->end_column);
    }
}

// Ends the decoding with `outcome` at once, from any callback: libpng returns to run_decoder's
// setjmp, so that neither rows below the canvas nor data trailing the image (which may inflate to
// gigabytes, or be chunks without end) are read. Not png_process_data_pause: called from the row
// callback, it zeroes the count of bytes left, from which the IDAT reader then subtracts the
// chunk it is in the middle of; the count wraps around to 2^64, and the reader reads chunks out
// of nothing (a CRC of no bytes each) until an IEND or an error comes, which may be never.
static void stop(png_structp png, png_decoder *decoder, int outcome) {
    decoder->outcome = outcome;
    png_longjmp(png, 1);
}

static void finish(png_structp png, png_decoder *decoder) {
    stop(png, decoder, DECODED);
}

static void on_png_info(png_structp png, png_infop info) {
    png_decoder *decoder = png_get_progressive_ptr(png);
    int width = (int)png_get_image_width(png, info), height = (int)png_get_image_height(png, info);
    if (decoder->side && (width != decoder->side || height != decoder->side)) stop(png, decoder, OTHER_SIZE);
    choose_row_format(png, info, &decoder->format);
    decoder->interlaced = png_set_interlace_handling(png) > 1;
    png_read_update_info(png, info);
    decoder->png_height = height;
    decoder->row_bytes = (size_t)width * (decoder->format.indexed ? 1 : 4);
    if (png_get_rowbytes(png, info) != decoder->row_bytes) png_error(png, "unexpected row size after expansion");
    if (!decoder->side) {
        if (width > decoder->most_side || height > decoder->most_side) png_error(png, "the image is too large");
        decoder->image = cairo_image_surface_create(decoder->format.has_alpha ? CAIRO_FORMAT_ARGB32 : CAIRO_FORMAT_RGB24,
                                                    width, height);
        if (cairo_surface_status(decoder->image) != CAIRO_STATUS_SUCCESS) png_error(png, "no memory for the image");
        cairo_surface_flush(decoder->image);
        decoder->pixels = cairo_image_surface_get_data(decoder->image);
        decoder->width = width, decoder->height = height;
        decoder->stride = cairo_image_surface_get_stride(decoder->image);
    }
    decoder->first_row = decoder->origin_y < 0 ? -decoder->origin_y : 0;
    decoder->end_row = decoder->height - decoder->origin_y < height ? decoder->height - decoder->origin_y : height;
    decoder->first_column = decoder->origin_x < 0 ? -decoder->origin_x : 0;
    decoder->end_column = decoder->width - decoder->origin_x < width ? decoder->width - decoder->origin_x : width;
    if (decoder->interlaced) {
        // Every pass fills rows all over the image: kept whole until the last one.
        decoder->rows = calloc((size_t)height, decoder->row_bytes);
        if (!decoder->rows) png_error(png, "no memory for the image's rows");
    }
    if (decoder->end_row <= decoder->first_row) finish(png, decoder);   // nothing of it in the canvas
}

static void on_png_row(png_structp png, png_bytep row, png_uint_32 number, int pass) {
    png_decoder *decoder = png_get_progressive_ptr(png);
    int y = (int)number;
    if (decoder->outcome != DECODING || y >= decoder->png_height) return;
    if (!decoder->interlaced) {
        if (y >= decoder->first_row) emit_row(decoder, row, y);
        if (y + 1 >= decoder->end_row) finish(png, decoder);
        return;
    }
    if (row) png_progressive_combine_row(png, decoder->rows + (size_t)y * decoder->row_bytes, row);
    if (pass == 6 && y == decoder->png_height - 1) {
        for (int visible = decoder->first_row; visible < decoder->end_row; visible++) {
            emit_row(decoder, decoder->rows + (size_t)visible * decoder->row_bytes, visible);
        }
        finish(png, decoder);
    }
}

// IEND: an image too small for Adam7's last pass (one row) is complete only here.
static void on_png_end(png_structp png, png_infop info) {
    (void)info;
    png_decoder *decoder = png_get_progressive_ptr(png);
    if (decoder->outcome != DECODING || !decoder->interlaced) return;
    for (int visible = decoder->first_row; visible < decoder->end_row; visible++) {
        emit_row(decoder, decoder->rows + (size_t)visible * decoder->row_bytes, visible);
    }
    finish(png, decoder);
}

// Runs `decoder` over the PNG in `bytes`: 0 when decoded, 1 when a tile is not `side` square,
// -1 with a reason in `message`. libpng's progressive reader is given all the bytes at once
// (it reads through the caller's buffer, copying nothing) and stopped by `stop`; an error
// returns the same way, with the outcome still DECODING.
static int run_decoder(png_decoder *decoder, const unsigned char *bytes, size_t count, char *message, size_t message_size) {
    message_sink sink = { message, message_size };
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &sink, enlog_on_png_error, enlog_on_png_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!png || !info) {
        snprintf(message, message_size, "libpng could not start");
        png_destroy_read_struct(&png, NULL, NULL);
        return -1;
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_read_struct(&png, &info, NULL);
        return decoder->outcome == DECODING ? -1 : decoder->outcome == OTHER_SIZE ? 1 : 0;
    }
    // A tile of another size is not an error here (its caller decodes it whole, under its own
    // limit), so only a whole image's size is limited.
    if (!decoder->side) png_set_user_limits(png, (png_uint_32)decoder->most_side, (png_uint_32)decoder->most_side);
    png_set_chunk_malloc_max(png, MOST_CHUNK_BYTES);
    // Every chunk but IHDR, PLTE, tRNS, IDAT and IEND is skipped unread: no text, profile or
    // other compressed chunk is ever inflated.
    png_set_keep_unknown_chunks(png, PNG_HANDLE_CHUNK_NEVER, NULL, -1);
    png_set_progressive_read_fn(png, decoder, on_png_info, on_png_row, on_png_end);
    png_process_data(png, info, (png_bytep)bytes, count);
    png_error(png, "the image data ends before its last row");
}

// One tile into the canvas (see enlog_png_decode_tiles_into_rgb24): 0, 1 or -1 as its status.
static int decode_into_rgb24(const unsigned char *bytes, size_t count, int side,
                             unsigned char *canvas, int canvas_width, int canvas_height, int canvas_stride,
                             int origin_x, int origin_y, char *message, size_t message_size) {
    png_decoder decoder = { .pixels = canvas, .width = canvas_width, .height = canvas_height, .stride = canvas_stride,
                            .origin_x = origin_x, .origin_y = origin_y, .side = side, .outcome = DECODING };
    int status = run_decoder(&decoder, bytes, count, message, message_size);
    free(decoder.rows);
    return status;
}

cairo_surface_t *enlog_png_decode_image(const unsigned char *bytes, size_t count, int most_side,
                                        char *message, size_t message_size) {
    png_decoder decoder = { .most_side = most_side, .outcome = DECODING };
    int status = run_decoder(&decoder, bytes, count, message, message_size);
    free(decoder.rows);
    if (status != 0) {
        if (decoder.image) cairo_surface_destroy(decoder.image);
        return NULL;
    }
    cairo_surface_mark_dirty(decoder.image);
    return decoder.image;
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
