"""Reads track files the way other software does, for enlog's tests: GPX through gpxpy, GeoJSON
through json, CSV through csv, and a pixel of a PNG through Pillow. Prints JSON on stdout.

    track_peer.py gpx FILE       [{"lat", "lon", "ele", "time" (epoch seconds), "hdop", "segment"}...]
    track_peer.py geojson FILE   the same keys from Point features
    track_peer.py csv FILE       the same keys from the CSV rows
    track_peer.py pixels PNG X,Y [X,Y...]   [[r, g, b]...]
"""
import csv
import datetime
import json
import sys


def epoch(time):
    """Seconds since 1970 of an aware datetime, or of ISO 8601 text (Python 3.11 reads "Z")."""
    if time is None:
        return None
    if isinstance(time, str):
        time = datetime.datetime.fromisoformat(time)
    assert time.tzinfo is not None, "a time without a zone"
    return time.timestamp()


def gpx(path):
    import gpxpy
    with open(path, encoding="utf-8") as handle:
        document = gpxpy.parse(handle)
    points = []
    for track in document.tracks:
        for number, segment in enumerate(track.segments):
            for point in segment.points:
                points.append({"lat": point.latitude, "lon": point.longitude, "ele": point.elevation,
                               "time": epoch(point.time), "hdop": point.horizontal_dilution, "segment": number})
    return {"version": document.version, "creator": document.creator, "points": points}


def geojson(path):
    with open(path, encoding="utf-8") as handle:
        document = json.load(handle)
    assert document["type"] == "FeatureCollection", document["type"]
    points = []
    for feature in document["features"]:
        assert feature["geometry"]["type"] == "Point"
        coordinates = feature["geometry"]["coordinates"]
        points.append({"lat": coordinates[1], "lon": coordinates[0],
                       "ele": coordinates[2] if len(coordinates) > 2 else None,
                       "time": epoch(feature["properties"]["time"]), "accuracy": feature["properties"].get("accuracy")})
    return {"points": points}


def table(path):
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    number = lambda text: float(text) if text else None
    return {"points": [{"lat": float(row["latitude"]), "lon": float(row["longitude"]), "ele": number(row["altitude"]),
                        "time": epoch(row["time"]), "accuracy": number(row["accuracy"])} for row in rows]}


def pixels(path, positions):
    from PIL import Image
    image = Image.open(path).convert("RGB")
    found = []
    for position in positions:
        x, y = (int(float(v)) for v in position.split(","))
        found.append(list(image.getpixel((x, y))))
    return {"width": image.width, "height": image.height, "pixels": found}


if __name__ == "__main__":
    kind, path = sys.argv[1], sys.argv[2]
    if kind == "gpx":
        result = gpx(path)
    elif kind == "geojson":
        result = geojson(path)
    elif kind == "csv":
        result = table(path)
    elif kind == "pixels":
        result = pixels(path, sys.argv[3:])
    else:
        raise SystemExit("unknown kind " + kind)
    print(json.dumps(result))
