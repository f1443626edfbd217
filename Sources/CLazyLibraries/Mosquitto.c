// libmosquitto: `enlog serve`'s subscription to OwnTracks' MQTT topics (serve.mqtt_broker).
#include <mosquitto.h>
#include "Loading.h"

#define LAZY_LIBRARY LAZY_MOSQUITTO
#define MOSQUITTO_FUNCTIONS(X, V)                                                                   \
    X(int, mosquitto_lib_init, (void), ())                                                          \
    X(int, mosquitto_lib_version, (int *major, int *minor, int *revision), (major, minor, revision)) \
    X(struct mosquitto *, mosquitto_new, (const char *id, bool clean_session, void *context), (id, clean_session, context)) \
    V(mosquitto_destroy, (struct mosquitto *client), (client))                                      \
    X(int, mosquitto_threaded_set, (struct mosquitto *client, bool threaded), (client, threaded))   \
    X(int, mosquitto_socket, (struct mosquitto *client), (client))                                  \
    X(int, mosquitto_int_option, (struct mosquitto *client, enum mosq_opt_t option, int value), (client, option, value)) \
    X(int, mosquitto_username_pw_set, (struct mosquitto *client, const char *username, const char *password), (client, username, password)) \
    X(int, mosquitto_connect, (struct mosquitto *client, const char *host, int port, int keepalive), (client, host, port, keepalive)) \
    X(int, mosquitto_reconnect, (struct mosquitto *client), (client))                               \
    X(int, mosquitto_disconnect, (struct mosquitto *client), (client))                              \
    X(int, mosquitto_subscribe, (struct mosquitto *client, int *mid, const char *pattern, int qos), (client, mid, pattern, qos)) \
    X(int, mosquitto_loop, (struct mosquitto *client, int timeout, int max_packets), (client, timeout, max_packets)) \
    V(mosquitto_connect_callback_set, (struct mosquitto *client, void (*callback)(struct mosquitto *, void *, int)), (client, callback)) \
    V(mosquitto_disconnect_callback_set, (struct mosquitto *client, void (*callback)(struct mosquitto *, void *, int)), (client, callback)) \
    V(mosquitto_subscribe_callback_set, (struct mosquitto *client, void (*callback)(struct mosquitto *, void *, int, int, const int *)), (client, callback)) \
    V(mosquitto_message_callback_set, (struct mosquitto *client, void (*callback)(struct mosquitto *, void *, const struct mosquitto_message *)), (client, callback)) \
    X(const char *, mosquitto_strerror, (int error), (error))                                       \
    X(const char *, mosquitto_connack_string, (int code), (code))

MOSQUITTO_FUNCTIONS(LAZY_DEFINE_FUNCTION, LAZY_DEFINE_PROCEDURE)

const char *const lazy_mosquitto_symbols[] = {MOSQUITTO_FUNCTIONS(LAZY_NAME_FUNCTION, LAZY_NAME_PROCEDURE) NULL};
