// libcurl: every HTTP exchange (sync, sign-in, tiles, the geocoder, reachability).
#define CURL_DISABLE_TYPECHECK // its macros would wrap the two variadic definitions below
#include <curl/curl.h>
#include <stdarg.h>
#include "Loading.h"

#define LAZY_LIBRARY LAZY_CURL
#define CURL_FUNCTIONS(X, V)                                                                        \
    X(CURLcode, curl_global_init, (long flags), (flags))                                            \
    X(CURL *, curl_easy_init, (void), ())                                                           \
    X(CURLcode, curl_easy_perform, (CURL *curl), (curl))                                            \
    V(curl_easy_reset, (CURL *curl), (curl))                                                        \
    V(curl_easy_cleanup, (CURL *curl), (curl))                                                      \
    X(const char *, curl_easy_strerror, (CURLcode code), (code))                                    \
    V(curl_free, (void *pointer), (pointer))                                                        \
    X(struct curl_slist *, curl_slist_append, (struct curl_slist *list, const char *text), (list, text)) \
    V(curl_slist_free_all, (struct curl_slist *list), (list))                                       \
    X(CURLU *, curl_url, (void), ())                                                                \
    V(curl_url_cleanup, (CURLU *url), (url))                                                        \
    X(CURLUcode, curl_url_get, (CURLU *url, CURLUPart what, char **part, unsigned int flags), (url, what, part, flags)) \
    X(CURLUcode, curl_url_set, (CURLU *url, CURLUPart what, const char *part, unsigned int flags), (url, what, part, flags))

CURL_FUNCTIONS(LAZY_DEFINE_FUNCTION, LAZY_DEFINE_PROCEDURE)

const char *const lazy_curl_symbols[] = {
    CURL_FUNCTIONS(LAZY_NAME_FUNCTION, LAZY_NAME_PROCEDURE) "curl_easy_setopt", "curl_easy_getinfo", NULL,
};

// The variadic two pass their one argument on with the type libcurl reads it as, which the
// option's number encodes (curl.h: CURLOPTTYPE_* and CURLINFO_* ranges).
CURLcode curl_easy_setopt(CURL *curl, CURLoption option, ...) {
    static void *cached;
    CURLcode (*setopt)(CURL *, CURLoption, ...) =
        (CURLcode (*)(CURL *, CURLoption, ...))lazy_cached(&cached, LAZY_CURL, "curl_easy_setopt");
    va_list arguments;
    va_start(arguments, option);
    CURLcode result;
    if (option < CURLOPTTYPE_OBJECTPOINT) {
        result = setopt(curl, option, va_arg(arguments, long));
    } else if (option < CURLOPTTYPE_FUNCTIONPOINT) {
        result = setopt(curl, option, va_arg(arguments, void *));
    } else if (option < CURLOPTTYPE_OFF_T) {
        result = setopt(curl, option, va_arg(arguments, void (*)(void)));
    } else if (option < CURLOPTTYPE_BLOB) {
        result = setopt(curl, option, va_arg(arguments, curl_off_t));
    } else {
        result = setopt(curl, option, va_arg(arguments, struct curl_blob *));
    }
    va_end(arguments);
    return result;
}

CURLcode curl_easy_getinfo(CURL *curl, CURLINFO info, ...) {
    static void *cached;
    CURLcode (*getinfo)(CURL *, CURLINFO, ...) =
        (CURLcode (*)(CURL *, CURLINFO, ...))lazy_cached(&cached, LAZY_CURL, "curl_easy_getinfo");
    // Every CURLINFO_* answers into a pointer the caller passes.
    va_list arguments;
    va_start(arguments, info);
    CURLcode result = getinfo(curl, info, va_arg(arguments, void *));
    va_end(arguments);
    return result;
}
