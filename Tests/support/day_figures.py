"""The day as a Google Timeline export states it, computed without enlog's readers: for
`DayFiguresTests`, which holds enlog's timeline to it.

Usage: day_figures.py FILE[@ZONE]... ; prints one JSON object keyed by FILE:
  {"zone": ZONE (an IANA name) when given, else the UTC offset most of the file's times carry
            ("UTC", "Etc/GMT-1", …; the Semantic files write UTC times: "UTC"),
   "days": {"YYYY-MM-DD": metres} in that zone: each activity segment's own `distance` /
           `distanceMeters`, shared among the days it spans in proportion to its time,
   "visits": [[start, end]] top-level visits (Semantic `placeVisit`, the on-device `visit` of
             `hierarchyLevel` 0) in epoch seconds; child and secondary visits left out,
   "segments": [[start, end, mode]] with the source's activity type as a word (see MODES),
   "span": [first, last] epoch seconds of everything above}
A file with no activity segment and no visit is left out.
"""
import json
import sys
from collections import Counter
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

# Google's activity types as words; types that say nothing of how are None. Other words are
# kept lower-cased (anonymised exports replace the types with random letters).
MODES = {
    "IN_PASSENGER_VEHICLE": "driving", "IN_VEHICLE": "driving", "WALKING": "walking", "RUNNING": "running",
    "CYCLING": "cycling", "IN_BUS": "bus", "IN_TRAIN": "train", "IN_SUBWAY": "subway", "IN_TRAM": "tram",
    "FLYING": "flight", "IN_FERRY": "boat", "SAILING": "boat", "MOTORCYCLING": "motorcycle", "SKIING": "skiing",
    "STILL": None, "UNKNOWN_ACTIVITY_TYPE": None,
}


def mode(word):
    if not isinstance(word, str) or not word.strip():
        return None
    key = word.strip().upper().replace(" ", "_")
    return MODES[key] if key in MODES else word.strip().lower()


def instant(value):
    """(epoch seconds, UTC offset in minutes) of an ISO time or epoch milliseconds."""
    if value is None:
        return None, None
    if isinstance(value, (int, float)) or (isinstance(value, str) and value.isdigit()):
        return int(value) / 1000, 0
    text = value.replace("Z", "+00:00")
    moment = datetime.fromisoformat(text)
    return moment.timestamp(), int(moment.utcoffset().total_seconds() // 60)


def number(value):
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def read(path, named=None):
    with open(path, encoding="utf-8-sig") as handle:
        doc = json.load(handle)
    segments, visits, offsets = [], [], Counter()
    if isinstance(doc, dict) and "timelineObjects" in doc:
        for obj in doc["timelineObjects"]:
            for kind in ("placeVisit", "activitySegment"):
                body = obj.get(kind)
                if not isinstance(body, dict):
                    continue
                duration = body.get("duration") or {}
                start, a = instant(duration.get("startTimestamp", duration.get("startTimestampMs")))
                end, b = instant(duration.get("endTimestamp", duration.get("endTimestampMs")))
                if start is None or end is None:
                    continue
                offsets[a] += 1
                if kind == "placeVisit":
                    visits.append([start, end])
                else:
                    word = body.get("activityType")
                    if word is None and body.get("activities"):
                        word = body["activities"][0].get("activityType")
                    segments.append([start, end, number(body.get("distance")), mode(word)])
    else:
        items = doc.get("semanticSegments") if isinstance(doc, dict) else doc
        for seg in items or []:
            if not isinstance(seg, dict):
                continue
            start, a = instant(seg.get("startTime"))
            end, _ = instant(seg.get("endTime"))
            if start is None or end is None:
                continue
            offsets[a] += 1
            visit = seg.get("visit")
            if isinstance(visit, dict) and str(visit.get("hierarchyLevel", "0")) in ("0", "0.0"):
                visits.append([start, end])
            activity = seg.get("activity")
            if isinstance(activity, dict):
                top = activity.get("topCandidate") or {}
                segments.append([start, end, number(activity.get("distanceMeters")), mode(top.get("type"))])
    if not segments and not visits:
        return None
    minutes = offsets.most_common(1)[0][0] if offsets else 0
    if minutes % 60:
        minutes = 0
    zone = named or ("UTC" if minutes == 0 else "Etc/GMT%+d" % (-minutes // 60))
    local = ZoneInfo(named) if named else timezone(timedelta(minutes=minutes))
    days = {}
    for start, end, metres, _ in segments:
        if metres is None:
            continue
        if end <= start:
            day = datetime.fromtimestamp(start, local).date().isoformat()
            days[day] = days.get(day, 0) + metres
            continue
        first = datetime.fromtimestamp(start, local).date()
        day = datetime(first.year, first.month, first.day, tzinfo=local)
        while day.timestamp() < end:
            after = day.date() + timedelta(days=1)
            following = datetime(after.year, after.month, after.day, tzinfo=local)
            share = max(0, min(end, following.timestamp()) - max(start, day.timestamp())) / (end - start)
            if share > 0:
                days[day.date().isoformat()] = days.get(day.date().isoformat(), 0) + metres * share
            day = following
    times = [t for s in segments for t in s[:2]] + [t for v in visits for t in v]
    unique_visits = sorted({(s, e) for s, e in visits})
    return {"zone": zone, "days": days, "visits": [list(v) for v in unique_visits],
            "segments": [[s, e, m] for s, e, _, m in segments], "span": [min(times), max(times)]}


def main():
    out = {}
    for argument in sys.argv[1:]:
        path, _, named = argument.partition("@")
        try:
            figures = read(path, named or None)
        except (ValueError, OSError, AttributeError, TypeError):
            figures = None
        if figures is not None:
            out[path] = figures
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
