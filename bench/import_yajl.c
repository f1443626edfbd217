/* yajl alone on a JSON file, bench/import's floor for enlog's JSON reader: the file read 1 MiB at
 * a time (as `enlog import` reads it) and fed to yajl's push parser with the callbacks enlog sets
 * (numbers as text, strings, keys, containers), each doing nothing but going on. Prints the
 * number of values seen, so the compiler cannot drop the parse.
 * Usage: import_yajl FILE       Build: cc -O2 -o import_yajl import_yajl.c -lyajl */
#include <stdio.h>
#include <stdlib.h>
#include <yajl/yajl_parse.h>

static unsigned long values;

static int on_null(void *context) { (void)context; values++; return 1; }
static int on_boolean(void *context, int value) { (void)context; (void)value; values++; return 1; }
static int on_number(void *context, const char *text, size_t length) { (void)context; (void)text; (void)length; values++; return 1; }
static int on_string(void *context, const unsigned char *text, size_t length) { (void)context; (void)text; (void)length; values++; return 1; }
static int on_key(void *context, const unsigned char *text, size_t length) { (void)context; (void)text; (void)length; return 1; }
static int on_container(void *context) { (void)context; return 1; }

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: import_yajl FILE\n"); return 2; }
    FILE *file = fopen(argv[1], "rb");
    if (!file) { perror(argv[1]); return 2; }
    yajl_callbacks callbacks = {on_null, on_boolean, NULL, NULL, on_number, on_string,
                                on_container, on_key, on_container, on_container, on_container};
    yajl_handle handle = yajl_alloc(&callbacks, NULL, NULL);
    static unsigned char chunk[1 << 20];
    size_t length;
    while ((length = fread(chunk, 1, sizeof chunk, file)) > 0) {
        if (yajl_parse(handle, chunk, length) != yajl_status_ok) { fprintf(stderr, "not valid JSON\n"); return 1; }
    }
    if (yajl_complete_parse(handle) != yajl_status_ok) { fprintf(stderr, "truncated JSON\n"); return 1; }
    yajl_free(handle);
    fclose(file);
    printf("%lu\n", values);
    return 0;
}
