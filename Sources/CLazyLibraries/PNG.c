// libpng: CMapShim's bounded progressive decoding of tiles, and its writing of PNG chunks.
#include <png.h>
#include "Loading.h"

#define LAZY_LIBRARY LAZY_PNG
// The prototypes are the header's (it is included, so the compiler holds them to it).
#define PNG_FUNCTIONS(X, V) \
    X(png_infop, png_create_info_struct, (png_const_structrp png_ptr), (png_ptr)) \
    X(png_structp, png_create_read_struct, (png_const_charp user_png_ver, png_voidp error_ptr, png_error_ptr error_fn, png_error_ptr warn_fn), (user_png_ver, error_ptr, error_fn, warn_fn)) \
    X(png_structp, png_create_write_struct, (png_const_charp user_png_ver, png_voidp error_ptr, png_error_ptr error_fn, png_error_ptr warn_fn), (user_png_ver, error_ptr, error_fn, warn_fn)) \
    V(png_destroy_read_struct, (png_structpp png_ptr_ptr, png_infopp info_ptr_ptr, png_infopp end_info_ptr_ptr), (png_ptr_ptr, info_ptr_ptr, end_info_ptr_ptr)) \
    V(png_destroy_write_struct, (png_structpp png_ptr_ptr, png_infopp info_ptr_ptr), (png_ptr_ptr, info_ptr_ptr)) \
    X(png_uint_32, png_get_PLTE, (png_const_structrp png_ptr, png_inforp info_ptr, png_colorp *palette, int *num_palette), (png_ptr, info_ptr, palette, num_palette)) \
    X(png_byte, png_get_color_type, (png_const_structrp png_ptr, png_const_inforp info_ptr), (png_ptr, info_ptr)) \
    X(png_voidp, png_get_error_ptr, (png_const_structrp png_ptr), (png_ptr)) \
    X(png_uint_32, png_get_image_height, (png_const_structrp png_ptr, png_const_inforp info_ptr), (png_ptr, info_ptr)) \
    X(png_uint_32, png_get_image_width, (png_const_structrp png_ptr, png_const_inforp info_ptr), (png_ptr, info_ptr)) \
    X(png_voidp, png_get_io_ptr, (png_const_structrp png_ptr), (png_ptr)) \
    X(png_voidp, png_get_progressive_ptr, (png_const_structrp png_ptr), (png_ptr)) \
    X(size_t, png_get_rowbytes, (png_const_structrp png_ptr, png_const_inforp info_ptr), (png_ptr, info_ptr)) \
    X(png_uint_32, png_get_tRNS, (png_const_structrp png_ptr, png_inforp info_ptr, png_bytep *trans_alpha, int *num_trans, png_color_16p *trans_color), (png_ptr, info_ptr, trans_alpha, num_trans, trans_color)) \
    X(png_uint_32, png_get_valid, (png_const_structrp png_ptr, png_const_inforp info_ptr, png_uint_32 flag), (png_ptr, info_ptr, flag)) \
    V(png_process_data, (png_structrp png_ptr, png_inforp info_ptr, png_bytep buffer, size_t buffer_size), (png_ptr, info_ptr, buffer, buffer_size)) \
    X(size_t, png_process_data_pause, (png_structrp png_ptr, int save), (png_ptr, save)) \
    V(png_progressive_combine_row, (png_const_structrp png_ptr, png_bytep old_row, png_const_bytep new_row), (png_ptr, old_row, new_row)) \
    V(png_read_update_info, (png_structrp png_ptr, png_inforp info_ptr), (png_ptr, info_ptr)) \
    V(png_set_IHDR, (png_const_structrp png_ptr, png_inforp info_ptr, png_uint_32 width, png_uint_32 height, int bit_depth, int color_type, int interlace_method, int compression_method, int filter_method), (png_ptr, info_ptr, width, height, bit_depth, color_type, interlace_method, compression_method, filter_method)) \
    V(png_set_chunk_malloc_max, (png_structrp png_ptr, png_alloc_size_t user_chunk_cache_max), (png_ptr, user_chunk_cache_max)) \
    V(png_set_expand, (png_structrp png_ptr), (png_ptr)) \
    V(png_set_filler, (png_structrp png_ptr, png_uint_32 filler, int flags), (png_ptr, filler, flags)) \
    V(png_set_gray_to_rgb, (png_structrp png_ptr), (png_ptr)) \
    X(int, png_set_interlace_handling, (png_structrp png_ptr), (png_ptr)) \
    V(png_set_keep_unknown_chunks, (png_structrp png_ptr, int keep, png_const_bytep chunk_list, int num_chunks), (png_ptr, keep, chunk_list, num_chunks)) \
    X(jmp_buf*, png_set_longjmp_fn, (png_structrp png_ptr, png_longjmp_ptr longjmp_fn, size_t jmp_buf_size), (png_ptr, longjmp_fn, jmp_buf_size)) \
    V(png_set_packing, (png_structrp png_ptr), (png_ptr)) \
    V(png_set_progressive_read_fn, (png_structrp png_ptr, png_voidp progressive_ptr, png_progressive_info_ptr info_fn, png_progressive_row_ptr row_fn, png_progressive_end_ptr end_fn), (png_ptr, progressive_ptr, info_fn, row_fn, end_fn)) \
    V(png_set_strip_16, (png_structrp png_ptr), (png_ptr)) \
    V(png_set_user_limits, (png_structrp png_ptr, png_uint_32 user_width_max, png_uint_32 user_height_max), (png_ptr, user_width_max, user_height_max)) \
    V(png_set_write_fn, (png_structrp png_ptr, png_voidp io_ptr, png_rw_ptr write_data_fn, png_flush_ptr output_flush_fn), (png_ptr, io_ptr, write_data_fn, output_flush_fn)) \
    V(png_write_chunk, (png_structrp png_ptr, png_const_bytep chunk_name, png_const_bytep data, size_t length), (png_ptr, chunk_name, data, length)) \
    V(png_write_info, (png_structrp png_ptr, png_const_inforp info_ptr), (png_ptr, info_ptr))

PNG_FUNCTIONS(LAZY_DEFINE_FUNCTION, LAZY_DEFINE_PROCEDURE)

// The two that never return: libpng's error exits, which longjmp back into CMapShim.
void png_error(png_const_structrp png_ptr, png_const_charp error_message) {
    static void *cached;
    ((void (*)(png_const_structrp, png_const_charp))lazy_cached(&cached, LAZY_PNG, "png_error"))(png_ptr, error_message);
    __builtin_unreachable();
}

void png_longjmp(png_const_structrp png_ptr, int val) {
    static void *cached;
    ((void (*)(png_const_structrp, int))lazy_cached(&cached, LAZY_PNG, "png_longjmp"))(png_ptr, val);
    __builtin_unreachable();
}

const char *const lazy_png_symbols[] = {PNG_FUNCTIONS(LAZY_NAME_FUNCTION, LAZY_NAME_PROCEDURE) "png_error", "png_longjmp", NULL};
