#ifndef ENLOG_CCURL_SHIM_H
#define ENLOG_CCURL_SHIM_H
#include <curl/curl.h>

// curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call: one typed
// wrapper per argument kind.
CURLcode enlog_curl_setopt_long(CURL *handle, CURLoption option, long value);
CURLcode enlog_curl_setopt_pointer(CURL *handle, CURLoption option, const void *value);
CURLcode enlog_curl_setopt_write_function(CURL *handle, size_t (*callback)(char *, size_t, size_t, void *));
CURLcode enlog_curl_setopt_header_function(CURL *handle, size_t (*callback)(char *, size_t, size_t, void *));
CURLcode enlog_curl_setopt_xferinfo_function(CURL *handle,
    int (*callback)(void *, curl_off_t, curl_off_t, curl_off_t, curl_off_t));
CURLcode enlog_curl_setopt_prereq_function(CURL *handle, int (*callback)(void *, char *, char *, int, int));
CURLcode enlog_curl_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value);
CURLcode enlog_curl_getinfo_long(CURL *handle, CURLINFO info, long *value);
CURLcode enlog_curl_getinfo_string(CURL *handle, CURLINFO info, const char **value);
CURLcode enlog_curl_getinfo_double(CURL *handle, CURLINFO info, double *value);
#endif
