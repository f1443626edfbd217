#ifndef ENLOG_PNG_MESSAGES_H
#define ENLOG_PNG_MESSAGES_H
#include <png.h>
#include <stddef.h>

// Where libpng's error text goes: the caller's buffer (libpng's own default prints to stderr).
// The error handler copies the text there and longjmps to the caller's setjmp.
typedef struct {
    char *message;
    size_t message_size;
} message_sink;

void enlog_on_png_error(png_structp png, png_const_charp text);
// Warnings (extra data after an image's last row, chunks skipped) would go to stderr by
// default: dropped.
void enlog_on_png_warning(png_structp png, png_const_charp text);
#endif
