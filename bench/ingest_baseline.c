/* bench/ingest's baseline: the durable inserts `enlog serve` makes for the phones' points, in C,
 * with nothing else (no HTTP, no parsing, no authentication): the floor a receiver stands on.
 * Opens an existing outbox (the schema enlog made) with the settings enlog uses (WAL, as the file
 * already is; synchronous = FULL; a busy timeout) and stores POINTS points from DEVICES devices in
 * transactions of BATCH points (200: an Overland batch; 1: an OwnTracks point), each point an
 * INSERT … ON CONFLICT DO NOTHING against the unique (device, timestamp) index, as enlog's receiver
 * does (a resent point adds nothing), each transaction BEGIN IMMEDIATE … COMMIT, durable when
 * COMMIT returns.
 * Prints: points, seconds, points per second, and the transactions' p50 and p99 in milliseconds.
 *
 *   cc -O2 -o ingest_baseline bench/ingest_baseline.c -lsqlite3
 *   ingest_baseline OUTBOX POINTS BATCH DEVICES
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void fail(sqlite3 *db, const char *what) {
    fprintf(stderr, "ingest_baseline: %s: %s\n", what, db ? sqlite3_errmsg(db) : "out of memory");
    exit(1);
}

static void exec(sqlite3 *db, const char *sql) {
    if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK) fail(db, sql);
}

static double seconds_now(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* GRDB's date format, "yyyy-MM-dd HH:mm:ss.SSS" in UTC, as enlog stores times. */
static void stamp(char *out, size_t size, long long milliseconds) {
    time_t seconds = (time_t)(milliseconds / 1000);
    struct tm utc;
    gmtime_r(&seconds, &utc);
    char whole[24];
    strftime(whole, sizeof whole, "%Y-%m-%d %H:%M:%S", &utc);
    snprintf(out, size, "%s.%03lld", whole, milliseconds % 1000);
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: ingest_baseline OUTBOX POINTS BATCH DEVICES\n");
        return 2;
    }
    long points = atol(argv[2]), batch = atol(argv[3]), devices = atol(argv[4]);
    if (points < 1 || batch < 1 || devices < 1) { fprintf(stderr, "ingest_baseline: POINTS, BATCH and DEVICES must be positive\n"); return 2; }

    sqlite3 *db = NULL;
    if (sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) fail(db, "open");
    sqlite3_busy_timeout(db, 5000);
    exec(db, "PRAGMA synchronous = FULL");
    sqlite3_stmt *insert = NULL;
    if (sqlite3_prepare_v2(db, "INSERT INTO fix (latitude, longitude, altitude, horizontalAccuracy, speed, course, timestamp, "
                               "source, createdAt, device) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'phone', ?8, ?9) "
                               "ON CONFLICT DO NOTHING",
                           -1, &insert, NULL) != SQLITE_OK) fail(db, "prepare insert");

    long transactions = (points + batch - 1) / batch;
    double *latency = malloc(sizeof(double) * (size_t)transactions);
    if (!latency) fail(NULL, "latencies");
    char created[32], time_text[32], device[32];
    long long base = 1764201600000LL; /* 2025-11-27 00:00 UTC */
    long stored = 0;
    double start = seconds_now();
    for (long t = 0; t < transactions; t++) {
        double begun = seconds_now();
        snprintf(device, sizeof device, "phone%ld", t % devices);
        stamp(created, sizeof created, base);
        exec(db, "BEGIN IMMEDIATE");
        for (long i = 0; i < batch && stored < points; i++, stored++) {
            stamp(time_text, sizeof time_text, base + stored * 1000);
            sqlite3_bind_double(insert, 1, 48.8584 + (double)(stored % 1000) * 1e-5);
            sqlite3_bind_double(insert, 2, 2.2945 + (double)(stored % 997) * 1e-5);
            sqlite3_bind_double(insert, 3, 35.0);
            sqlite3_bind_double(insert, 4, 10.0);
            sqlite3_bind_double(insert, 5, 1.2);
            sqlite3_bind_double(insert, 6, 90.0);
            sqlite3_bind_text(insert, 7, time_text, -1, SQLITE_STATIC);
            sqlite3_bind_text(insert, 8, created, -1, SQLITE_STATIC);
            sqlite3_bind_text(insert, 9, device, -1, SQLITE_STATIC);
            if (sqlite3_step(insert) != SQLITE_DONE) fail(db, "insert");
            sqlite3_reset(insert);
        }
        exec(db, "COMMIT");
        latency[t] = (seconds_now() - begun) * 1000;
    }
    double elapsed = seconds_now() - start;
    qsort(latency, (size_t)transactions, sizeof(double), by_value);
    printf("%ld %.3f %.1f %.3f %.3f\n", stored, elapsed, (double)stored / elapsed,
           latency[transactions / 2], latency[(long)((double)transactions * 0.99) < transactions ? (long)((double)transactions * 0.99) : transactions - 1]);
    sqlite3_finalize(insert);
    if (sqlite3_close(db) != SQLITE_OK) fail(db, "close");
    free(latency);
    return 0;
}
