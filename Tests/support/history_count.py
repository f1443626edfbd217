"""Counts the points a location-history file really holds, independently of enlog, for the
real-data import test. Reads each format with its usual Python reader (gpxpy for GPX, xml.etree for
KML and TCX, csv, json, zipfile) and applies the rules enlog documents: a point needs a time
between 1980 and 2100 and a position that is not 0,0; a GPX track point without a time makes the
file wrong; a KML Placemark with a TimeSpan is a stay.

    history_count.py FORMAT:FILE...   prints {FILE: {"points": N, "visits": V} | {"refuse": WORDS}
                                              | {"nothing": WORDS} | {"pending": WHY}}

"refuse" gives words the refusal must contain (one of several, separated by |: a JSON Schema may
be taken for the format it describes, and then holds no point). "nothing" is a file that by its
nature holds no point (Takeout's Settings.json, a Timeline Edits file of place aggregates only):
enlog names it "nothing to import" with these words and does not fail. The JSON formats are
counted by history_counts.py (json.load, the rules of the JSON readers).
"""
import csv
import datetime
import io
import json
import sys
import xml.etree.ElementTree as ET
import zipfile

LOW = datetime.datetime(1980, 1, 6, tzinfo=datetime.timezone.utc).timestamp()
HIGH = datetime.datetime(2100, 1, 1, tzinfo=datetime.timezone.utc).timestamp()
# SOURCES.tsv's JSON formats → history_counts.py's reader (None: no location history).
JSON_FAMILY = {"records-json": "google-records", "semantic-history": "google-semantic",
               "android-timeline": "android-timeline", "ios-location-history": "ios-timeline",
               "timeline-edits": "timeline-edits", "owntracks-json": "owntracks-json", "geojson": "geojson",
               "geojson-coordtimes": "geojson", "overland-geojson": "geojson", "polarsteps": None, "settings-json": "settings"}


def epoch(value):
    if value is None:
        return None
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=datetime.timezone.utc)
        return value.timestamp()
    text = str(value).strip()
    if not text:
        return None
    if text.replace(".", "", 1).isdigit():
        number = float(text)
        return number / 1000 if len(text.split(".")[0]) >= 12 else number
    text = text.replace("Z", "+00:00")
    if len(text) > 10 and text[10] == " ":
        text = text[:10] + "T" + text[11:]
    text = text.replace(" +", "+").replace(" -", "-")
    try:
        parsed = datetime.datetime.fromisoformat(text)
    except ValueError:
        return None
    return epoch(parsed)


def good(lat, lon, time):
    if lat is None or lon is None or time is None:
        return False
    return -90 <= lat <= 90 and -180 <= lon <= 180 and not (lat == 0 and lon == 0) and LOW <= time < HIGH


def result(points, visits=0, empty="nothing to import", moves=None):
    if not points and not visits and not moves:
        return {"refuse": empty}
    return {"points": points, "visits": visits} if moves is None else {"points": points, "visits": visits, "moves": moves}


def gpx(path):
    import gpxpy
    with open(path, encoding="utf-8-sig") as handle:
        text = handle.read().lstrip()
    try:
        document = gpxpy.parse(text)
    except Exception:
        return {"refuse": "not a location history"}
    count = 0
    for track in document.tracks:
        for segment in track.segments:
            for point in segment.points:
                if point.time is None:
                    return {"refuse": "has no <time>"}
                count += good(point.latitude, point.longitude, epoch(point.time))
    for route in document.routes:
        count += sum(good(p.latitude, p.longitude, epoch(p.time)) for p in route.points if p.time)
    count += sum(good(p.latitude, p.longitude, epoch(p.time)) for p in document.waypoints if p.time)
    return result(count)


def local(tag):
    return tag.rsplit("}", 1)[-1]


def kml_text(text):
    root = ET.fromstring(text)
    points = visits = 0
    for element in root.iter():
        name = local(element.tag)
        if name == "Track":
            whens = [epoch(child.text) for child in element if local(child.tag) == "when"]
            coords = [(child.text or "").split() for child in element if local(child.tag) == "coord"]
            for when, coord in zip(whens, coords):
                if len(coord) >= 2:
                    points += good(float(coord[1]), float(coord[0]), when)
        elif name == "Placemark":
            stamp = [w for s in element.iter() if local(s.tag) == "TimeStamp" for w in s if local(w.tag) == "when"]
            span = [s for s in element.iter() if local(s.tag) == "TimeSpan"]
            positions = []
            for point in (p for p in element.iter() if local(p.tag) == "Point"):
                for coordinates in (c for c in point if local(c.tag) == "coordinates"):
                    parts = (coordinates.text or "").replace(",", " ").split()
                    positions.append((float(parts[1]), float(parts[0])) if len(parts) >= 2 else None)
            if stamp:
                time = epoch(stamp[0].text)
                points += sum(1 for p in positions if p and good(p[0], p[1], time))
            elif span and len(positions) == 1 and positions[0]:
                visits += 1
    return result(points, visits)


def kml(path):
    with open(path, "rb") as handle:
        return kml_text(handle.read().lstrip())


def kmz(path):
    try:
        with zipfile.ZipFile(path) as archive:
            names = [n for n in archive.namelist() if n.lower().endswith(".kml")]
            return kml_text(archive.read(names[0]).lstrip())
    except zipfile.BadZipFile:
        return {"refuse": "zip archive that cannot be read"}


def tcx(path):
    with open(path, "rb") as handle:
        root = ET.fromstring(handle.read().lstrip())
    count = 0
    for point in (e for e in root.iter() if local(e.tag) == "Trackpoint"):
        values = {local(e.tag): e.text for e in point.iter()}
        if "LatitudeDegrees" in values:
            count += good(float(values["LatitudeDegrees"]), float(values["LongitudeDegrees"]), epoch(values.get("Time")))
    return result(count)


def csv_file(path):
    with open(path, encoding="utf-8-sig", newline="") as handle:
        text = handle.read()
    header = text.splitlines()[0]
    delimiter = max(",;\t", key=header.count)
    rows = list(csv.reader(io.StringIO(text), delimiter=delimiter))
    names = [n.strip().lower() for n in rows[0]]

    def find(*candidates):
        for candidate in candidates:
            if candidate in names:
                return names.index(candidate)
        return None

    time = find("time", "timestamp", "datetime", "start time", "date")
    e7 = find("latitudee7") is not None
    lat = find("latitudee7", "lat", "latitude", "latitude n/s")
    lon = find("longitudee7", "lon", "lng", "longitude", "longitude e/w")
    geom = find("geom")

    def number(text, negative):
        text = text.strip().replace(",", ".") if delimiter == ";" else text.strip()
        sign = 1
        if text[-1:].upper() in ("N", "S", "E", "W"):
            sign = -1 if text[-1].upper() == negative else 1
            text = text[:-1]
        return float(text) * sign * (1e-7 if e7 else 1)

    kind, end = find("type"), find("end time")
    count = visits = 0
    for row in rows[1:]:
        if not row:
            continue
        if kind is not None and end is not None and row[kind].lower() == "visit" and epoch(row[end]):
            visits += 1
        if geom is not None and lat is None:
            x, y = row[geom].split("(")[1].rstrip(")").split()
            position = (float(y), float(x))
        else:
            position = (number(row[lat], "S"), number(row[lon], "W"))
        count += good(position[0], position[1], epoch(row[time]))
    return result(count, visits)


def owntracks_rec(path):
    count = 0
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if "{" not in line:
                continue
            message = json.loads(line[line.index("{"):])
            if message.get("_type") == "location":
                count += good(message.get("lat"), message.get("lon"), epoch(message.get("tst")))
    return result(count)


def fit(path):
    with open(path, "rb") as handle:
        head = handle.read(12)
    return {"refuse": "Garmin FIT" if head[8:12] == b".FIT" else "not a location history"}


READERS = {"gpx": gpx, "gpslogger-gpx": gpx, "strava-gpx": gpx, "kml": kml, "kmz": kmz, "tcx": tcx, "csv": csv_file,
           "owntracks-rec": owntracks_rec, "fit": fit, "schema": lambda path: {"refuse": "not a location history|nothing to import"}}


def json_file(kind, path):
    import history_counts
    reader = JSON_FAMILY[kind]
    with open(path, encoding="utf-8-sig") as handle:
        text = handle.read()
    if not text.strip():
        return {"refuse": "is empty"}
    if reader is None:
        return {"refuse": "not a location history"}
    if reader == "settings":
        # Google's Location History settings: devices, never a point.
        document = json.loads(text)
        return {"nothing": "Settings.json"} if isinstance(document, dict) and "deviceSettings" in document else {"refuse": "not a location history"}
    out = history_counts.Out()
    out.refused = False
    history_counts.READERS[reader](json.loads(text), out)
    if out.refused:
        return {"nothing": "no raw-signal positions"}
    return result(len(out.points), len(out.visits), moves=out.moves)


def count(kind, path):
    if kind in JSON_FAMILY:
        return json_file(kind, path)
    return READERS[kind](path)


if __name__ == "__main__":
    answers = {}
    for argument in sys.argv[1:]:
        kind, path = argument.split(":", 1)
        answers[path] = count(kind, path)
    json.dump(answers, sys.stdout)
