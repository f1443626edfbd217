/* bench/log's baseline: what `enlog log --at LAT,LON --no-geocode` does to the disk, in C.
 * Opens an existing outbox (the schema enlog made), with the settings enlog uses (WAL, as the
 * file already is; synchronous = FULL; foreign keys; a busy timeout), and stores one fix and one
 * note in one immediate transaction: the same columns enlog's insert fills, the note's title and
 * content given as files and its tags as text (bench/log hands it those of a note enlog
 * rendered; its address is pending, as with --no-geocode), a fresh uid, the
 * row read back as enlog reads it back. No rendering, no validation, no configuration: the floor
 * a C tool would stand on.
 *
 *   cc -O2 -o log_baseline bench/log_baseline.c -lsqlite3
 *   log_baseline OUTBOX TITLE_FILE CONTENT_FILE TAGS LAT LON
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

static void fail(sqlite3 *db, const char *what) {
    fprintf(stderr, "log_baseline: %s: %s\n", what, db ? sqlite3_errmsg(db) : "out of memory");
    exit(1);
}

static char *slurp(const char *path) {
    FILE *file = fopen(path, "rb");
    if (!file) { perror(path); exit(1); }
    fseek(file, 0, SEEK_END);
    long size = ftell(file);
    rewind(file);
    char *text = malloc((size_t)size + 1);
    if (!text || fread(text, 1, (size_t)size, file) != (size_t)size) { perror(path); exit(1); }
    text[size] = 0;
    fclose(file);
    return text;
}

static void exec(sqlite3 *db, const char *sql) {
    if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK) fail(db, sql);
}

int main(int argc, char **argv) {
    if (argc != 7) {
        fprintf(stderr, "usage: log_baseline OUTBOX TITLE_FILE CONTENT_FILE TAGS LAT LON\n");
        return 2;
    }
    char *title = slurp(argv[2]), *content = slurp(argv[3]);
    const char *tags = argv[4];
    double latitude = atof(argv[5]), longitude = atof(argv[6]);

    /* GRDB's date format: "yyyy-MM-dd HH:mm:ss.SSS" in UTC. */
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    struct tm utc;
    gmtime_r(&now.tv_sec, &utc);
    char stamp[32], seconds[24];
    strftime(seconds, sizeof seconds, "%Y-%m-%d %H:%M:%S", &utc);
    snprintf(stamp, sizeof stamp, "%s.%03ld", seconds, now.tv_nsec / 1000000);

    unsigned char random[16];
    if (getrandom(random, sizeof random, 0) != sizeof random) { perror("getrandom"); return 1; }
    random[6] = (random[6] & 0x0f) | 0x40;
    random[8] = (random[8] & 0x3f) | 0x80;
    char uid[37];
    snprintf(uid, sizeof uid, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             random[0], random[1], random[2], random[3], random[4], random[5], random[6], random[7],
             random[8], random[9], random[10], random[11], random[12], random[13], random[14], random[15]);

    sqlite3 *db = NULL;
    if (sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) fail(db, "open");
    sqlite3_busy_timeout(db, 5000);
    exec(db, "PRAGMA synchronous = FULL");
    exec(db, "PRAGMA foreign_keys = ON");
    exec(db, "BEGIN IMMEDIATE");

    sqlite3_stmt *fix = NULL;
    if (sqlite3_prepare_v2(db, "INSERT INTO fix (latitude, longitude, altitude, horizontalAccuracy, speed, course, "
                               "timestamp, source, createdAt) VALUES (?, ?, NULL, NULL, NULL, NULL, ?, 'manual', ?)",
                           -1, &fix, NULL) != SQLITE_OK) fail(db, "prepare fix");
    sqlite3_bind_double(fix, 1, latitude);
    sqlite3_bind_double(fix, 2, longitude);
    sqlite3_bind_text(fix, 3, stamp, -1, SQLITE_STATIC);
    sqlite3_bind_text(fix, 4, stamp, -1, SQLITE_STATIC);
    if (sqlite3_step(fix) != SQLITE_DONE) fail(db, "insert fix");
    sqlite3_finalize(fix);
    sqlite3_int64 fixId = sqlite3_last_insert_rowid(db);

    sqlite3_stmt *note = NULL;
    if (sqlite3_prepare_v2(db, "INSERT INTO note (uid, fixId, title, content, notebookName, tags, latitude, longitude, "
                               "altitude, placeName, subjectDate, source, sourceApplication, addressPending, state, "
                               "attempts, createdAt, updatedAt) VALUES (?, ?, ?, ?, NULL, ?, ?, ?, NULL, NULL, ?, "
                               "'enlog', 'enlog', 1, 'pending', 0, ?, ?)",
                           -1, &note, NULL) != SQLITE_OK) fail(db, "prepare note");
    sqlite3_bind_text(note, 1, uid, -1, SQLITE_STATIC);
    sqlite3_bind_int64(note, 2, fixId);
    sqlite3_bind_text(note, 3, title, -1, SQLITE_STATIC);
    sqlite3_bind_text(note, 4, content, -1, SQLITE_STATIC);
    sqlite3_bind_text(note, 5, tags, -1, SQLITE_STATIC);
    sqlite3_bind_double(note, 6, latitude);
    sqlite3_bind_double(note, 7, longitude);
    sqlite3_bind_text(note, 8, stamp, -1, SQLITE_STATIC);
    sqlite3_bind_text(note, 9, stamp, -1, SQLITE_STATIC);
    sqlite3_bind_text(note, 10, stamp, -1, SQLITE_STATIC);
    if (sqlite3_step(note) != SQLITE_DONE) fail(db, "insert note");
    sqlite3_finalize(note);

    sqlite3_stmt *stored = NULL;
    if (sqlite3_prepare_v2(db, "SELECT * FROM note WHERE id = ?", -1, &stored, NULL) != SQLITE_OK) fail(db, "prepare read");
    sqlite3_bind_int64(stored, 1, sqlite3_last_insert_rowid(db));
    if (sqlite3_step(stored) != SQLITE_ROW) fail(db, "read back");
    sqlite3_finalize(stored);

    exec(db, "COMMIT");
    if (sqlite3_close(db) != SQLITE_OK) fail(db, "close");
    printf("%s\n", uid);
    free(title);
    free(content);
    return 0;
}
