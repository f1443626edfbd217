"""The obvious Python import of a Records.json, bench/import's baseline: what a user writes in ten
minutes. `json.load` of the whole file, one list of rows, one `executemany` into SQLite in one
transaction, with the essentials of enlog's history: the fix columns, times as the same text,
an index on the time, and a point refused when the history has one at the same millisecond from
the same device (a unique index and INSERT OR IGNORE). SQLite's defaults otherwise (a rollback
journal, synchronous = FULL).

Usage: python3 import_python.py Records.json OUT.sqlite   (prints the number of points added)
"""
import datetime
import json
import sqlite3
import sys

source, database = sys.argv[1], sys.argv[2]
with open(source, encoding="utf-8") as file:
    records = json.load(file)["locations"]

UTC = datetime.timezone.utc
created = datetime.datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S.000")


def when(record):
    if "timestampMs" in record:
        moment = datetime.datetime.fromtimestamp(int(record["timestampMs"]) / 1000, UTC)
    else:
        moment = datetime.datetime.fromisoformat(record["timestamp"].replace("Z", "+00:00")).astimezone(UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S.") + "%03d" % (moment.microsecond // 1000)


rows = [(r["latitudeE7"] / 1e7, r["longitudeE7"] / 1e7, r.get("altitude"), r.get("accuracy"), r.get("velocity"),
         r.get("heading"), when(r), "imported", created, str(r["deviceTag"]) if "deviceTag" in r else None)
        for r in records if "latitudeE7" in r and "longitudeE7" in r]

connection = sqlite3.connect(database)
connection.executescript("""
    CREATE TABLE IF NOT EXISTS fix (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        latitude DOUBLE NOT NULL CHECK (latitude BETWEEN -90 AND 90),
        longitude DOUBLE NOT NULL CHECK (longitude BETWEEN -180 AND 180),
        altitude DOUBLE, horizontalAccuracy DOUBLE, speed DOUBLE, course DOUBLE,
        timestamp DATETIME NOT NULL, source TEXT NOT NULL, createdAt DATETIME NOT NULL, device TEXT);
    CREATE INDEX IF NOT EXISTS fix_on_timestamp ON fix(timestamp);
    CREATE UNIQUE INDEX IF NOT EXISTS fix_identity ON fix(timestamp, ifnull(device, ''));
""")
with connection:
    before = connection.total_changes
    connection.executemany("""INSERT OR IGNORE INTO fix (latitude, longitude, altitude, horizontalAccuracy, speed, course,
                              timestamp, source, createdAt, device) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""", rows)
    print(connection.total_changes - before)
connection.close()
