// cairo: the map pictures (tiles stitched, the route, the markers, the attribution), and PNG out.
#include <cairo/cairo.h>
#include <cairo/cairo-ft.h>
#include "Loading.h"

#define LAZY_LIBRARY LAZY_CAIRO
// The prototypes are the header's (it is included, so the compiler holds them to it).
#define CAIRO_FUNCTIONS(X, V) \
    V(cairo_arc, (cairo_t *cr, double xc, double yc, double radius, double angle1, double angle2), (cr, xc, yc, radius, angle1, angle2)) \
    V(cairo_clip, (cairo_t *cr), (cr)) \
    X(cairo_t *, cairo_create, (cairo_surface_t *target), (target)) \
    V(cairo_destroy, (cairo_t *cr), (cr)) \
    V(cairo_fill, (cairo_t *cr), (cr)) \
    V(cairo_fill_preserve, (cairo_t *cr), (cr)) \
    V(cairo_font_face_destroy, (cairo_font_face_t *font_face), (font_face)) \
    X(cairo_status_t, cairo_font_face_status, (cairo_font_face_t *font_face), (font_face)) \
    X(cairo_font_face_t *, cairo_ft_font_face_create_for_ft_face, (FT_Face face, int load_flags), (face, load_flags)) \
    X(cairo_surface_t *, cairo_image_surface_create, (cairo_format_t format, int width, int height), (format, width, height)) \
    X(cairo_surface_t *, cairo_image_surface_create_for_data, (unsigned char *data, cairo_format_t format, int width, int height, int stride), (data, format, width, height, stride)) \
    X(unsigned char *, cairo_image_surface_get_data, (cairo_surface_t *surface), (surface)) \
    X(cairo_format_t, cairo_image_surface_get_format, (cairo_surface_t *surface), (surface)) \
    X(int, cairo_image_surface_get_height, (cairo_surface_t *surface), (surface)) \
    X(int, cairo_image_surface_get_stride, (cairo_surface_t *surface), (surface)) \
    X(int, cairo_image_surface_get_width, (cairo_surface_t *surface), (surface)) \
    V(cairo_line_to, (cairo_t *cr, double x, double y), (cr, x, y)) \
    V(cairo_move_to, (cairo_t *cr, double x, double y), (cr, x, y)) \
    V(cairo_new_path, (cairo_t *cr), (cr)) \
    V(cairo_paint, (cairo_t *cr), (cr)) \
    V(cairo_rectangle, (cairo_t *cr, double x, double y, double width, double height), (cr, x, y, width, height)) \
    V(cairo_restore, (cairo_t *cr), (cr)) \
    V(cairo_save, (cairo_t *cr), (cr)) \
    V(cairo_scale, (cairo_t *cr, double sx, double sy), (cr, sx, sy)) \
    V(cairo_select_font_face, (cairo_t *cr, const char *family, cairo_font_slant_t slant, cairo_font_weight_t weight), (cr, family, slant, weight)) \
    V(cairo_set_font_face, (cairo_t *cr, cairo_font_face_t *font_face), (cr, font_face)) \
    V(cairo_set_font_size, (cairo_t *cr, double size), (cr, size)) \
    V(cairo_set_line_cap, (cairo_t *cr, cairo_line_cap_t line_cap), (cr, line_cap)) \
    V(cairo_set_line_join, (cairo_t *cr, cairo_line_join_t line_join), (cr, line_join)) \
    V(cairo_set_line_width, (cairo_t *cr, double width), (cr, width)) \
    V(cairo_set_source_rgb, (cairo_t *cr, double red, double green, double blue), (cr, red, green, blue)) \
    V(cairo_set_source_rgba, (cairo_t *cr, double red, double green, double blue, double alpha), (cr, red, green, blue, alpha)) \
    V(cairo_set_source_surface, (cairo_t *cr, cairo_surface_t *surface, double x, double y), (cr, surface, x, y)) \
    V(cairo_show_text, (cairo_t *cr, const char *utf8), (cr, utf8)) \
    X(cairo_status_t, cairo_status, (cairo_t *cr), (cr)) \
    X(const char *, cairo_status_to_string, (cairo_status_t status), (status)) \
    V(cairo_stroke, (cairo_t *cr), (cr)) \
    V(cairo_stroke_preserve, (cairo_t *cr), (cr)) \
    V(cairo_surface_destroy, (cairo_surface_t *surface), (surface)) \
    V(cairo_surface_finish, (cairo_surface_t *surface), (surface)) \
    V(cairo_surface_flush, (cairo_surface_t *surface), (surface)) \
    V(cairo_surface_mark_dirty, (cairo_surface_t *surface), (surface)) \
    X(cairo_status_t, cairo_surface_status, (cairo_surface_t *surface), (surface)) \
    X(cairo_status_t, cairo_surface_write_to_png_stream, (cairo_surface_t *surface, cairo_write_func_t write_func, void *closure), (surface, write_func, closure)) \
    V(cairo_text_extents, (cairo_t *cr, const char *utf8, cairo_text_extents_t *extents), (cr, utf8, extents)) \
    V(cairo_translate, (cairo_t *cr, double tx, double ty), (cr, tx, ty))

CAIRO_FUNCTIONS(LAZY_DEFINE_FUNCTION, LAZY_DEFINE_PROCEDURE)

const char *const lazy_cairo_symbols[] = {CAIRO_FUNCTIONS(LAZY_NAME_FUNCTION, LAZY_NAME_PROCEDURE) NULL};
