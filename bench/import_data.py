"""Location histories in Google's real layouts, of a given size, for bench/import.

The shapes are those of the exports in ../shared/location-history-real/ (the values are made
up, from a seeded random walk):

- Records.json as Takeout wrote it: pretty-printed with two spaces and `}, {` between records;
  the older `timestampMs` era (a string of milliseconds) for the first 60 % of the records, the
  later ISO `timestamp` era after; a nested `activity` list (each entry with its own time and a
  list of typed confidences) on every fourth record; `deviceTag`, `source`, `accuracy`, and
  altitude, heading and velocity on some. Two phones, the second for one record in ten.
- A year of Semantic Location History, one file a month (`2019/2019_JANUARY.json`): placeVisit
  and activitySegment objects with durations, candidates, waypoints.
- An Android on-device `Timeline.json` (Jackson's `"key" : value` layout): semanticSegments
  with timelinePath points, activities and visits, a year of them.

Usage: python3 import_data.py records OUT.json MEGABYTES [SEED]
       python3 import_data.py semantic OUT_DIR [SEED]
       python3 import_data.py timeline OUT.json [SEED]
Prints the number of points written (records, timeline) or files (semantic).
"""
import datetime
import os
import random
import sys

UTC = datetime.timezone.utc
ACTIVITIES = ["STILL", "ON_FOOT", "WALKING", "IN_VEHICLE", "ON_BICYCLE", "UNKNOWN", "TILTING", "RUNNING"]
MODES = ["WALKING", "IN_PASSENGER_VEHICLE", "CYCLING", "IN_BUS", "IN_TRAIN"]
SOURCES = ["WIFI", "GPS", "CELL", "UNKNOWN"]


def iso(milliseconds, with_millis=True):
    moment = datetime.datetime.fromtimestamp(milliseconds / 1000, UTC)
    text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    return text + (".%03dZ" % (milliseconds % 1000) if with_millis else "Z")


def records(path, megabytes, seed):
    rng = random.Random(seed)
    target = int(megabytes * 1_000_000)
    lat, lon = 52.52, 13.40
    time_ms = 1_420_070_400_000  # 2015-01-01
    devices = [1433424142, 335552189]
    # The era switch: the first 60 % of the bytes in timestampMs, then ISO (the 2019+ layout).
    switch = target * 6 // 10
    written = 0
    count = 0
    with open(path, "w", buffering=1 << 20) as out:
        out.write('{\n  "locations": [')
        written += 17
        while written < target:
            lat += rng.uniform(-3e-4, 3e-4)
            lon += rng.uniform(-3e-4, 3e-4)
            time_ms += rng.randint(15_000, 120_000)
            ms_era = written < switch
            parts = ['{\n    "latitudeE7": %d,\n    "longitudeE7": %d,\n    "accuracy": %d'
                     % (round(lat * 1e7), round(lon * 1e7), rng.randint(3, 60))]
            if count % 5 == 0:
                parts.append(',\n    "altitude": %d,\n    "verticalAccuracy": %d' % (rng.randint(20, 120), rng.randint(1, 10)))
            if count % 7 == 0:
                parts.append(',\n    "velocity": %d,\n    "heading": %d' % (rng.randint(0, 30), rng.randint(0, 359)))
            if count % 4 == 3:
                entries = []
                for _ in range(rng.randint(1, 2)):
                    kinds = rng.sample(ACTIVITIES, rng.randint(1, 4))
                    confidences = ", {".join('\n        "type": "%s",\n        "confidence": %d\n      }'
                                             % (kind, rng.randint(1, 100)) for kind in kinds)
                    stamp = time_ms + rng.randint(-30_000, 30_000)
                    when = ('"timestampMs": "%d"' % stamp) if ms_era else ('"timestamp": "%s"' % iso(stamp))
                    entries.append('{\n      "activity": [{%s],\n      %s\n    }' % (confidences, when))
                parts.append(',\n    "activity": [%s]' % ", ".join(entries))
            parts.append(',\n    "source": "%s",\n    "deviceTag": %d' % (rng.choice(SOURCES), devices[1 if count % 10 == 9 else 0]))
            if ms_era:
                parts.append(',\n    "timestampMs": "%d"\n  }' % time_ms)
            else:
                parts.append(',\n    "timestamp": "%s"\n  }' % iso(time_ms))
            record = ("" if count == 0 else ", ") + "".join(parts)
            out.write(record)
            written += len(record)
            count += 1
        out.write("]\n}\n")
    return count


MONTHS = ["JANUARY", "FEBRUARY", "MARCH", "APRIL", "MAY", "JUNE", "JULY", "AUGUST", "SEPTEMBER",
          "OCTOBER", "NOVEMBER", "DECEMBER"]


def semantic(folder, seed):
    """A year (2019): each day home → work → home, two visits and two segments a day."""
    rng = random.Random(seed)
    home = (52.5200, 13.4050)
    work = (52.5070, 13.3900)
    os.makedirs(os.path.join(folder, "2019"), exist_ok=True)
    files = 0
    for month in range(1, 13):
        objects = []
        day = datetime.datetime(2019, month, 1, tzinfo=UTC)
        while day.month == month:
            start = int(day.timestamp() * 1000)
            legs = [(home, work, start + 7 * 3600_000), (work, home, start + 17 * 3600_000)]
            for origin, destination, leave in legs:
                arrive = leave + rng.randint(20, 50) * 60_000
                mode = rng.choice(MODES)
                waypoints = ", ".join('{\n              "latE7": %d,\n              "lngE7": %d\n            }'
                                      % (round((origin[0] + (destination[0] - origin[0]) * k / 6) * 1e7),
                                         round((origin[1] + (destination[1] - origin[1]) * k / 6) * 1e7))
                                      for k in range(1, 6))
                objects.append('''{
      "activitySegment": {
        "startLocation": {
          "latitudeE7": %d,
          "longitudeE7": %d,
          "sourceInfo": {
            "deviceTag": 566860671
          }
        },
        "endLocation": {
          "latitudeE7": %d,
          "longitudeE7": %d
        },
        "duration": {
          "startTimestamp": "%s",
          "endTimestamp": "%s"
        },
        "distance": %d,
        "activityType": "%s",
        "confidence": "HIGH",
        "activities": [{
          "activityType": "%s",
          "probability": %.10f
        }, {
          "activityType": "STILL",
          "probability": %.10f
        }],
        "waypointPath": {
          "waypoints": [%s],
          "source": "INFERRED",
          "distanceMeters": %.1f
        }
      }
    }''' % (round(origin[0] * 1e7), round(origin[1] * 1e7), round(destination[0] * 1e7), round(destination[1] * 1e7),
            iso(leave), iso(arrive), rng.randint(1500, 3000), mode, mode, rng.uniform(80, 99), rng.uniform(0, 5),
            waypoints, rng.uniform(1500, 3000)))
                stay_end = start + (17 if destination == work else 31) * 3600_000
                name, address = ("Office", "Unter den Linden 1, 10117 Berlin") if destination == work else ("Home", "Alexanderplatz 5, 10178 Berlin")
                objects.append('''{
      "placeVisit": {
        "location": {
          "latitudeE7": %d,
          "longitudeE7": %d,
          "placeId": "ChIJ%s",
          "address": "%s",
          "name": "%s",
          "semanticType": "%s",
          "sourceInfo": {
            "deviceTag": 566860671
          },
          "locationConfidence": %.6f,
          "calibratedProbability": %.6f
        },
        "duration": {
          "startTimestamp": "%s",
          "endTimestamp": "%s"
        },
        "placeConfidence": "HIGH_CONFIDENCE",
        "centerLatE7": %d,
        "centerLngE7": %d,
        "visitConfidence": %d,
        "otherCandidateLocations": [{
          "latitudeE7": %d,
          "longitudeE7": %d,
          "placeId": "ChIJother%d",
          "locationConfidence": %.6f,
          "calibratedProbability": %.6f
        }],
        "editConfirmationStatus": "NOT_CONFIRMED",
        "locationConfidence": %d,
        "placeVisitType": "SINGLE_PLACE",
        "placeVisitImportance": "MAIN"
      }
    }''' % (round(destination[0] * 1e7), round(destination[1] * 1e7), "work0000" if destination == work else "home0000",
            address, name, "TYPE_WORK" if destination == work else "TYPE_HOME", rng.uniform(50, 99), rng.uniform(40, 90),
            iso(arrive), iso(stay_end), round(destination[0] * 1e7) + rng.randint(-50, 50),
            round(destination[1] * 1e7) + rng.randint(-50, 50), rng.randint(60, 99),
            round(destination[0] * 1e7) + 300, round(destination[1] * 1e7) - 200, rng.randint(0, 999),
            rng.uniform(0, 5), rng.uniform(0, 5), rng.randint(60, 99)))
            day += datetime.timedelta(days=1)
        with open(os.path.join(folder, "2019", "2019_%s.json" % MONTHS[month - 1]), "w") as out:
            out.write('{\n  "timelineObjects": [%s]\n}\n' % ", ".join(objects))
        files += 1
    return files


def timeline(path, seed):
    """A year (2023) of the on-device export: per day a path of 30 points, an activity, a visit."""
    rng = random.Random(seed)
    segments = []
    points = 0
    day = datetime.datetime(2023, 1, 1, tzinfo=datetime.timezone(datetime.timedelta(hours=1)))
    lat, lon = 48.8566, 2.3522
    while day.year == 2023:
        start = day + datetime.timedelta(hours=8)
        path_points = []
        for minute in range(0, 120, 4):
            lat += rng.uniform(-2e-4, 2e-4)
            lon += rng.uniform(-2e-4, 2e-4)
            path_points.append('{\n      "point" : "%.7f°, %.7f°",\n      "time" : "%s"\n    }'
                               % (lat, lon, (start + datetime.timedelta(minutes=minute)).isoformat(timespec="milliseconds")))
            points += 1
        end = start + datetime.timedelta(hours=2)
        segments.append('{\n    "startTime" : "%s",\n    "endTime" : "%s",\n    "timelinePath" : [ %s ]\n  }'
                        % (start.isoformat(timespec="milliseconds"), end.isoformat(timespec="milliseconds"), ", ".join(path_points)))
        segments.append('''{
    "startTime" : "%s",
    "endTime" : "%s",
    "startTimeTimezoneUtcOffsetMinutes" : 60,
    "endTimeTimezoneUtcOffsetMinutes" : 60,
    "activity" : {
      "start" : {
        "latLng" : "%.7f°, %.7f°"
      },
      "end" : {
        "latLng" : "%.7f°, %.7f°"
      },
      "distanceMeters" : %.13f,
      "topCandidate" : {
        "type" : "%s",
        "probability" : %.16f
      }
    }
  }''' % (start.isoformat(timespec="milliseconds"), end.isoformat(timespec="milliseconds"), lat - 0.01, lon - 0.01, lat, lon,
          rng.uniform(500, 5000), rng.choice(["WALKING", "IN_PASSENGER_VEHICLE", "CYCLING"]), rng.uniform(0.5, 1)))
        points += 2
        visit_end = end + datetime.timedelta(hours=rng.randint(2, 8))
        segments.append('''{
    "startTime" : "%s",
    "endTime" : "%s",
    "startTimeTimezoneUtcOffsetMinutes" : 60,
    "endTimeTimezoneUtcOffsetMinutes" : 60,
    "visit" : {
      "hierarchyLevel" : 0,
      "probability" : %.16f,
      "topCandidate" : {
        "placeId" : "ChIJplace%04d",
        "semanticType" : "%s",
        "probability" : %.16f,
        "placeLocation" : {
          "latLng" : "%.7f°, %.7f°"
        }
      }
    }
  }''' % (end.isoformat(timespec="milliseconds"), visit_end.isoformat(timespec="milliseconds"), rng.uniform(0.5, 1),
          rng.randint(0, 40), rng.choice(["UNKNOWN", "HOME", "WORK", "INFERRED_HOME"]), rng.uniform(0.1, 1), lat, lon))
        day += datetime.timedelta(days=1)
    with open(path, "w", encoding="utf-8") as out:
        out.write('{\n  "semanticSegments" : [ %s ],\n  "rawSignals" : [ ],\n  "userLocationProfile" : {\n'
                  '    "frequentPlaces" : [ ]\n  }\n}\n' % ", ".join(segments))
    return points


if __name__ == "__main__":
    kind = sys.argv[1]
    if kind == "records":
        print(records(sys.argv[2], float(sys.argv[3]), int(sys.argv[4]) if len(sys.argv) > 4 else 7))
    elif kind == "semantic":
        print(semantic(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 7))
    elif kind == "timeline":
        print(timeline(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 7))
    else:
        sys.exit("usage: import_data.py records|semantic|timeline …")
