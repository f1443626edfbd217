#!/usr/bin/env python3
"""What a JSON location-history file holds, read the obvious way (json.load) and independently of
enlog's streaming readers: the points (lat, lon, epoch seconds, device), the visits and the skipped
records by reason, under the rules enlog documents (HistoryJSONMachine.swift, PointFields.item).

usage: history_counts.py FORMAT FILE   (FORMAT: google-records, google-semantic, android-timeline,
ios-timeline, timeline-edits, owntracks-json, geojson). Prints one JSON object.
"""
import json
import math
import re
import sys
from datetime import datetime, timezone

TIME_MIN, TIME_MAX = 315_964_800, 4_102_444_799.999
NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


class Out:
    def __init__(self):
        self.points, self.visits, self.skipped = [], [], {}
        self.moves = 0

    def skip(self, reason):
        self.skipped[reason] = self.skipped.get(reason, 0) + 1


def number(value):
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str) and NUMBER.match(value):
        result = float(value)
        return result if math.isfinite(result) else None
    return None


def epoch(value):
    """Seconds since 1970: epoch digits (ms when >= 1e11) or ISO 8601 (no offset = UTC)."""
    n = number(value)
    if n is not None:
        return n / 1000 if abs(n) >= 1e11 else n
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.timestamp()


def e7(value, latitude):
    n = number(value)
    if n is None:
        return None
    if n > (900_000_000 if latitude else 1_800_000_000):
        n -= 4_294_967_296
    return n / 1e7


def pair(text):
    if not isinstance(text, str):
        return None, None
    if text.startswith("geo:"):
        text = text[4:]
    if "," not in text:
        return None, None
    lat, lon = text.split(",", 1)
    lat, lon = (number(part.strip().removesuffix("°").strip()) for part in (lat, lon))
    return lat, lon


class Record:
    """One would-be point: the same checks, in the same order, as PointFields.item."""

    def __init__(self, lat=None, lon=None, time=None, device=None, lat_given=False, lon_given=False,
                 time_given=False):
        self.lat, self.lon, self.time, self.device = lat, lon, time, device
        self.position_given = lat_given or lon_given or lat is not None or lon is not None
        self.time_given = time_given

    def emit(self, out):
        if not self.position_given:
            return out.skip("record that is not a point")
        if self.lat is None or self.lon is None or not -90 <= self.lat <= 90 or not -180 <= self.lon <= 180:
            return out.skip("position that cannot be")
        if self.lat == 0 and self.lon == 0:
            return out.skip("0,0 position")
        if self.time is None:
            return out.skip("time that is no date" if self.time_given else "no time")
        if not TIME_MIN <= self.time <= TIME_MAX:
            return out.skip("time out of range")
        out.points.append([self.lat, self.lon, self.time, self.device])


def given(obj, key):
    return isinstance(obj, dict) and key in obj and obj[key] is not None


def move(out, start, end):
    """An activity segment enlog keeps as a move: both times, in order, within the years a fix may have."""
    if start is not None and end is not None and end >= start and TIME_MIN <= start <= TIME_MAX and TIME_MIN <= end <= TIME_MAX:
        out.moves += 1


def visit(out, start, end, lat, lon, place_id=None, lat_given=False):
    if start is None:
        return out.skip("no time")
    check = Out()
    Record(lat, lon, start, lat_given=lat_given).emit(check)
    if check.skipped:
        return out.skip(next(iter(check.skipped)))
    end = start if end is None else end
    if not TIME_MIN <= end <= TIME_MAX:
        return out.skip("time out of range")
    if end < start:
        return out.skip("time that is no date")
    out.visits.append([start, end, lat, lon, place_id])


def records(doc, out):
    for r in doc.get("locations") or []:
        time_key = next((k for k in ("timestamp", "timestampMs") if given(r, k)), None)
        if time_key is None:
            time_key = next((k for k in ("deviceTimestamp", "serverTimestamp") if given(r, k)), None)
        device = r.get("deviceTag")
        Record(e7(r.get("latitudeE7"), True), e7(r.get("longitudeE7"), False),
               epoch(r[time_key]) if time_key else None, None if device is None else str(device),
               given(r, "latitudeE7"), given(r, "longitudeE7"), time_key is not None).emit(out)


def raw_path(points, out):
    for p in points or []:
        lat = e7(p.get("latE7", p.get("latitudeE7")), True)
        lon = e7(p.get("lngE7", p.get("longitudeE7")), False)
        t = p.get("timestampMs", p.get("timestamp"))
        Record(lat, lon, epoch(t), lat_given=lat is not None, time_given=t is not None).emit(out)


def semantic(doc, out):
    for obj in doc.get("timelineObjects") or []:
        for kind in ("placeVisit", "activitySegment"):
            if kind not in obj:
                continue
            body = obj[kind]
            duration = body.get("duration") or {}
            start = epoch(duration.get("startTimestamp", duration.get("startTimestampMs")))
            end = epoch(duration.get("endTimestamp", duration.get("endTimestampMs")))
            if kind == "placeVisit":
                raw_path((body.get("simplifiedRawPath") or {}).get("points"), out)
                loc = body.get("location") or {}
                if "latitudeE7" in loc or "longitudeE7" in loc:
                    lat, lon = e7(loc.get("latitudeE7"), True), e7(loc.get("longitudeE7"), False)
                else:
                    lat, lon = e7(body.get("centerLatE7"), True), e7(body.get("centerLngE7"), False)
                visit(out, start, end, lat, lon, loc.get("placeId"))
            else:
                # waypointPath: untimed, the segment's own path (enlog keeps them with it), not points.
                move(out, start, end)
                raw_path((body.get("simplifiedRawPath") or {}).get("points"), out)
                for where, time in (("startLocation", start), ("endLocation", end)):
                    if isinstance(body.get(where), dict):
                        loc = body[where]
                        Record(e7(loc.get("latitudeE7"), True), e7(loc.get("longitudeE7"), False), time,
                               lat_given=given(loc, "latitudeE7"), lon_given=given(loc, "longitudeE7")).emit(out)


def lat_lng(obj):
    if isinstance(obj, dict):
        obj = obj.get("latLng", obj.get("LatLng"))
    return pair(obj)


def android(doc, out):
    for seg in doc.get("semanticSegments") or []:
        start, end = epoch(seg.get("startTime")), epoch(seg.get("endTime"))
        for p in seg.get("timelinePath") or []:
            lat, lon = pair(p.get("point"))
            Record(lat, lon, epoch(p.get("time")), lat_given=given(p, "point"), time_given=given(p, "time")).emit(out)
        if isinstance(seg.get("visit"), dict):
            cand = seg["visit"].get("topCandidate") or {}
            lat, lon = lat_lng(cand.get("placeLocation"))
            visit(out, start, end, lat, lon, cand.get("placeId"), lat_given=given(cand, "placeLocation"))
        if isinstance(seg.get("activity"), dict):
            move(out, start, end)
            for where, time in (("start", start), ("end", end)):
                raw = seg["activity"].get(where)
                lat, lon = lat_lng(raw)
                Record(lat, lon, time, lat_given=lat is not None or (raw is not None and raw != {})).emit(out)
    for signal in doc.get("rawSignals") or []:
        if not isinstance(signal.get("position"), dict):
            out.skip("record that is not a point")
            continue
        pos = signal["position"]
        raw = pos.get("LatLng", pos.get("latLng"))
        lat, lon = pair(raw)
        Record(lat, lon, epoch(pos.get("timestamp")), lat_given=raw is not None,
               time_given=given(pos, "timestamp")).emit(out)
    for _ in (doc.get("userLocationProfile") or {}).get("frequentPlaces") or []:
        out.skip("no time")


def ios(doc, out):
    for seg in doc:
        start, end = epoch(seg.get("startTime")), epoch(seg.get("endTime"))
        for p in seg.get("timelinePath") or []:
            lat, lon = pair(p.get("point"))
            offset = number(p.get("durationMinutesOffsetFromStartTime"))
            time = start + offset * 60 if start is not None and offset is not None else None
            Record(lat, lon, time, lat_given=given(p, "point")).emit(out)
        if isinstance(seg.get("visit"), dict):
            cand = seg["visit"].get("topCandidate") or {}
            lat, lon = pair(cand.get("placeLocation"))
            visit(out, start, end, lat, lon, cand.get("placeID", cand.get("placeId")),
                  lat_given=given(cand, "placeLocation"))
        if isinstance(seg.get("activity"), dict):
            move(out, start, end)
            for where, time in (("start", start), ("end", end)):
                raw = seg["activity"].get(where)
                lat, lon = pair(raw)
                Record(lat, lon, time, lat_given=raw is not None).emit(out)


def timeline_edits(doc, out):
    for edit in doc.get("timelineEdits") or []:
        pos = ((edit.get("rawSignal") or {}).get("signal") or {}).get("position")
        if not isinstance(pos, dict):
            continue
        point = pos.get("point") or {}
        Record(e7(point.get("latE7"), True), e7(point.get("lngE7"), False), epoch(pos.get("timestamp")),
               edit.get("deviceId"), given(point, "latE7"), given(point, "lngE7"), given(pos, "timestamp")).emit(out)
    if not out.points and not out.skipped:
        out.refused = True


def owntracks(doc, out):
    def message(m):
        kind = m.get("_type", m.get("type"))
        if kind is not None and kind != "location":
            return out.skip("record that is not a point")
        if kind is None and not any(k in m for k in ("lat", "lon", "tst")):
            return walk(m)
        device = m.get("tid")
        Record(number(m.get("lat")), number(m.get("lon")), epoch(m.get("tst")),
               None if device in (None, "") else str(device), given(m, "lat"), given(m, "lon"),
               given(m, "tst")).emit(out)

    def walk(value):
        if isinstance(value, list):
            for item in value:
                if isinstance(item, dict):
                    message(item)
        elif isinstance(value, dict):
            for item in value.values():
                if isinstance(item, (list, dict)):
                    walk(item) if isinstance(item, list) else walk_object(item)

    def walk_object(obj):
        for item in obj.values():
            if isinstance(item, list):
                walk(item)
            elif isinstance(item, dict):
                walk_object(item)

    if isinstance(doc, dict):
        message(doc)
    else:
        walk(doc)


TIME_PROPERTIES = ("timestamp", "time", "datetime", "date", "when", "recorded_at")


def flatten_positions(coords):
    if isinstance(coords, list) and coords and not isinstance(coords[0], list):
        return [coords]
    result = []
    for item in coords if isinstance(coords, list) else []:
        result.extend(flatten_positions(item))
    return result


def geometry_positions(geometry):
    if not isinstance(geometry, dict):
        return []
    result = flatten_positions(geometry.get("coordinates"))
    for part in geometry.get("geometries") or []:
        result.extend(geometry_positions(part))
    return result


def flatten_times(times):
    if not isinstance(times, list):
        return [times]
    result = []
    for item in times:
        result.extend(flatten_times(item))
    return result


def geojson(doc, out):
    features = doc.get("features", doc.get("locations"))
    if features is None:
        features = [doc] if doc.get("type") == "Feature" else []
    for feature in features:
        positions = geometry_positions(feature.get("geometry"))
        if not positions:
            out.skip("record that is not a point")
            continue
        props = feature.get("properties") or {}
        key = next((k for k in TIME_PROPERTIES if k in props), None)
        times = flatten_times(props["coordTimes"]) if "coordTimes" in props else []
        device = next((props[k] for k in ("device_id", "deviceId", "device", "tid") if k in props), None)
        for index, position in enumerate(positions):
            lat = number(position[1]) if len(position) > 1 else None
            lon = number(position[0]) if position else None
            if len(times) == len(positions):
                time, time_given = epoch(times[index]), True
            elif len(positions) == 1 and key is not None:
                time, time_given = epoch(props[key]), props[key] is not None
            else:
                time, time_given = None, False
            Record(lat, lon, time, None if device is None else str(device), lat_given=True,
                   time_given=time_given).emit(out)


READERS = {"google-records": records, "google-semantic": semantic, "android-timeline": android,
           "ios-timeline": ios, "timeline-edits": timeline_edits, "owntracks-json": owntracks, "geojson": geojson}


def main():
    fmt, path = sys.argv[1], sys.argv[2]
    with open(path, encoding="utf-8-sig") as handle:
        doc = json.load(handle)
    out = Out()
    out.refused = False
    READERS[fmt](doc, out)
    json.dump({"points": out.points, "visits": out.visits, "moves": out.moves, "skipped": out.skipped, "refused": out.refused},
              sys.stdout)


if __name__ == "__main__":
    main()
