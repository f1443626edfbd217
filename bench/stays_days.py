#!/usr/bin/env python3
"""Days with known stays for bench/stays: a person moving between a pool of places (walks under
1.5 km, drives with traffic lights beyond), recorded as one of four kinds of day:

  dense   1 Hz GPS, a few metres of noise, stops of 3 min to 3 h (and a work day of 8-10 h)
  noisy   a fix every 1-10 s, noise as large as the accuracy reported, 15 % Wi-Fi fixes (150 m),
          1 % multipath jumps of 200-500 m that claim to be good
  sparse  a fix every 1-5 min (Records.json), some Wi-Fi fixes; stops of 15 min and more, since a
          stop shorter than two sampling intervals leaves at most one fix and is below what any
          method can see
  gaps    1 Hz, but an hour or two without fixes inside long stops (indoors), and the phone off
          for a while during one drive a day

and three kinds recorded as a phone indoors really records (`record_indoor`, reasons beside each
figure): arriving, the phone walks in from the street and its GPS fades (the accuracy it claims
grows from 5-10 m to 30-80 m within a minute or two and the position wanders tens of metres,
often further than the claimed accuracy, for minutes), and now and then the network provider
places it at a Wi-Fi access point or cell 100-800 m away, claiming 15-60 m or 100-1500 m:

  indoor-dense   a fix every 1-5 s (a tracker in the foreground, fused provider)
  indoor-sparse  a fix about every 5 minutes (Records.json, OwnTracks' move mode); stops >= 15 min
  indoor-gappy   a fix every 1-5 s, but hours without fixes inside long stops and during a drive

Each day runs from 07:00 to about 21:00 UTC; days are a day apart, so no stay crosses midnight.
Truth: the stops (centre, start, end); traffic lights (30-90 s) are not stops.
"""
import csv, datetime, math, random

METRES_PER_DEGREE = 111_195.0
ORIGIN = (48.137, 11.575)
KINDS = ("dense", "noisy", "sparse", "gaps", "indoor-dense", "indoor-sparse", "indoor-gappy")


def to_lat_lon(x, y):
    return (ORIGIN[0] + y / METRES_PER_DEGREE,
            ORIGIN[1] + x / (METRES_PER_DEGREE * math.cos(math.radians(ORIGIN[0]))))


def stop_length(rng, first, home_for_the_night, shortest, long_stay_allowed=True):
    """How long a stop lasts, in seconds: the day's first stop 20-90 min, the last one at home
    20-60 min, else a work day of 8-10 h (15 %, where `long_stay_allowed`) or, log-uniform,
    `shortest` to 3 h. The 15 % is drawn whether or not a long stay is allowed, so both plans
    draw the same numbers in the same order."""
    if first:
        return rng.uniform(20, 90) * 60
    if home_for_the_night:
        return rng.uniform(20, 60) * 60
    if rng.random() < 0.15 and long_stay_allowed:
        return rng.uniform(8, 10) * 3600
    return math.exp(rng.uniform(math.log(shortest), math.log(3 * 3600)))


def bent_path(rng, a, b):
    """A way from a to b through a middle point off the straight line by up to a fifth of the
    distance, and its length."""
    distance = math.dist(a, b)
    bend = (rng.uniform(-0.2, 0.2) * distance, rng.uniform(-0.2, 0.2) * distance)
    middle = ((a[0] + b[0]) / 2 + bend[0], (a[1] + b[1]) / 2 + bend[1])
    return [a, middle, b], math.dist(a, middle) + math.dist(middle, b)


def plan_day(rng, places, kind, start):
    """Segments of one day: ("stop", x, y, t0, t1) and ("move", path, t0, t1, pauses)."""
    shortest = 15 * 60 if kind in ("sparse", "indoor-sparse") else 3 * 60
    home = places[0]
    segments, t, here = [], start, home
    end_of_day = start + 13 * 3600
    while True:
        duration = stop_length(rng, not segments, here == home and t > end_of_day, shortest)
        segments.append(("stop", here[0], here[1], t, t + duration))
        t += duration
        if here == home and t > end_of_day:
            return segments
        there = home if t > end_of_day else rng.choice([p for p in places if p != here])
        distance = math.dist(here, there)
        speed = 1.4 if distance < 1500 else rng.uniform(9, 14)
        path, length = bent_path(rng, here, there)
        travel = length / speed
        pauses = []
        if speed > 2:
            pauses = sorted((rng.uniform(0.1, 0.9) * travel, rng.uniform(30, 90)) for _ in range(int(length // 1500)))
        total = travel + sum(p[1] for p in pauses)
        segments.append(("move", path, t, t + total, pauses, travel))
        t += total
        here = there


def position(segment, t, rng):
    if segment[0] == "stop":
        return segment[1] + rng.gauss(0, 5), segment[2] + rng.gauss(0, 5)
    _, path, t0, t1, pauses, travel = segment
    moving = t - t0
    for at, length in pauses:
        if moving > at:
            moving = max(at, moving - length)
    fraction = min(1.0, moving / travel)
    legs = [math.dist(path[0], path[1]), math.dist(path[1], path[2])]
    along = fraction * sum(legs)
    a, b, leg = (path[0], path[1], legs[0]) if along <= legs[0] else (path[1], path[2], legs[1])
    along = along if along <= legs[0] else along - legs[0]
    share = along / leg if leg else 0
    return a[0] + (b[0] - a[0]) * share, a[1] + (b[1] - a[1]) * share


def silent_spans(rng, segments, longest_minutes, share, drive_minutes):
    """The spans a gappy day records nothing in: 30 minutes up to `longest_minutes` (at most
    `share` of the stop) inside each stop of over 40 minutes, and `drive_minutes()` early in one
    drive of over a quarter of an hour."""
    silent = []
    for segment in segments:
        if segment[0] == "stop" and segment[4] - segment[3] > 40 * 60:
            length = min(rng.uniform(30, longest_minutes) * 60, (segment[4] - segment[3]) * share)
            begin = rng.uniform(segment[3] + 5 * 60, segment[4] - length - 5 * 60)
            silent.append((begin, begin + length))
    drives = [s for s in segments if s[0] == "move" and s[3] - s[2] > 15 * 60]
    if drives:
        drive = rng.choice(drives)
        silent.append((drive[2] + 60, min(drive[3] - 60, drive[2] + 60 + drive_minutes() * 60)))
    return silent


def record(rng, segments, kind):
    """(time, lat, lon, accuracy) fixes of a day as its kind records them."""
    fixes, start, end = [], segments[0][3] if segments[0][0] == "stop" else segments[0][2], segments[-1][4]
    silent = silent_spans(rng, segments, longest_minutes=120, share=0.6, drive_minutes=lambda: 10) if kind == "gaps" else []
    t, index = start, 0
    while t < end:
        while index < len(segments) - 1 and t >= (segments[index][4] if segments[index][0] == "stop" else segments[index][3]):
            index += 1
        if not any(a <= t < b for a, b in silent):
            x, y = position(segments[index], t, rng)
            accuracy = rng.uniform(4, 10)
            error = 3.0
            if kind == "noisy":
                accuracy = rng.uniform(10, 40)
                error = accuracy / 1.5
            elif kind == "sparse":
                accuracy = rng.uniform(8, 40)
                error = accuracy / 2
            roll = rng.random()
            if kind in ("noisy", "sparse") and roll < 0.15:
                accuracy, error = 150.0, 80.0
            elif kind == "noisy" and roll < 0.16:
                accuracy, error = rng.uniform(10, 30), rng.uniform(200, 500) / 1.25
            fixes.append((t, x + rng.gauss(0, error), y + rng.gauss(0, error), accuracy))
        t += {"dense": 1, "gaps": 1, "noisy": rng.uniform(1, 10), "sparse": rng.uniform(60, 300)}[kind]
    return fixes


# --- Days recorded as a phone indoors records them -------------------------------------------
# Figures and why:
# - GPS outdoors claims about 5 m with a clear sky and 10-20 m between buildings (van Diggelen
#   et al., "How to achieve 1-meter accuracy in Android", GPS World 2018: "about five meters";
#   16.8 m on average in cities per the study gps.gov cites). Moves: 5-20 m.
# - Indoors the GPS fades within a minute or two of the door and the fused provider falls back to
#   Wi-Fi: the accuracy Records.json and GPSLogger show grows to 30-80 m (Records.json's WIFI
#   records: 20-50 m in the format's own examples), and the position wanders as the access points
#   heard change: a correlated drift of tens of metres, lasting minutes (an Ornstein-Uhlenbeck
#   walk with 1-5 min memory). Android's accuracy is the radius of 68 % confidence, 1.5 times a
#   component's standard deviation; the drift's is that times 0.7-1.5, as a phone indoors is as
#   often over-confident as not. Once the fused provider has settled on the access points of the
#   place (after 3-15 min) the drift shrinks to 40 % of that: a steady Wi-Fi position, a little off.
# - Now and then the network provider places the phone at an access point or cell tower that its
#   database puts elsewhere: 100-800 m away, claiming either a good 15-60 m (a moved access point)
#   or a poor 100-1500 m (a cell); for up to 20 s, while that position is the latest (so one
#   fix, or a few at 1-5 s, but never two 5 minutes apart). About one an hour indoors.
# - A drive ends at a parking place 40-150 m from the door, and the last stretch is on foot; walks
#   wait at crossings (20-60 s every 400 m or so), drives at lights (30-90 s every 1.5 km): none is
#   a stay.
# - A shop or café often lies next to another: a quarter of the places have a neighbour 150-300 m
#   away, so a real short move between two stays close together is part of the days. (Closer
#   than 150 m, two places indoors, each with fixes claiming 30-80 m, cannot be told apart from
#   the fixes at all.)
# - Days end before midnight and start at 07:00, as bench/stays's other days: a night is a
#   silence of more than stays.max_gap, so each evening's stay at home and the next morning's
#   are two true stays, not one with an unrecorded night in between.
# - Sampling: 1-5 s for a tracker in the foreground (GPSLogger, the fused provider at high
#   accuracy); about 5 min for Records.json or OwnTracks' move mode (300 s by default).
# - Gappy: indoors a GPS-only logger or a phone in power saving records nothing for 30 min to 3 h
#   inside a long stop, and a phone switched off for 10-60 min during one drive a day.
INDOOR_KINDS = ("indoor-dense", "indoor-sparse", "indoor-gappy")


def indoor_places(rng):
    places = [(0.0, 0.0), (rng.uniform(3000, 6000), rng.uniform(-2000, 2000))]
    while len(places) < 12:
        candidate = (rng.uniform(-8000, 8000), rng.uniform(-8000, 8000))
        if all(math.dist(candidate, p) > 400 for p in places):
            places.append(candidate)
    for index in range(0, 12, 4):
        angle, distance = rng.uniform(0, 2 * math.pi), rng.uniform(150, 300)
        base = places[index]
        places.append((base[0] + distance * math.cos(angle), base[1] + distance * math.sin(angle)))
    return places


def plan_indoor_day(rng, places, kind, start):
    """Segments as plan_day's, a drive's last stretch on foot, pauses at crossings on walks too."""
    shortest = 15 * 60 if kind == "indoor-sparse" else 3 * 60
    home = places[0]
    segments, t, here = [], start, home
    end_of_day = start + 13 * 3600
    while True:
        duration = stop_length(rng, not segments, here == home and t > end_of_day, shortest,
                               long_stay_allowed=t < start + 4 * 3600)
        duration = min(duration, max(start + 16.5 * 3600 - t, shortest))
        segments.append(("stop", here[0], here[1], t, t + duration, rng.random() < 0.85))
        t += duration
        if here == home and t > end_of_day:
            return segments
        if t > end_of_day:
            there = home
        else:
            near = [p for p in places if p != here and math.dist(p, here) < 300]
            there = rng.choice(near) if near and rng.random() < 0.4 else rng.choice([p for p in places if p != here])
        distance = math.dist(here, there)
        if distance < 1500:
            legs = [(here, there, 1.4)]
        else:
            angle = rng.uniform(0, 2 * math.pi)
            parking = (there[0] + rng.uniform(40, 150) * math.cos(angle), there[1] + rng.uniform(40, 150) * math.sin(angle))
            legs = [(here, parking, rng.uniform(9, 14)), (parking, there, 1.4)]
        for a, b, speed in legs:
            path, length = bent_path(rng, a, b)
            travel = length / speed
            every, wait = (1500, (30, 90)) if speed > 2 else (400, (20, 60))
            pauses = sorted((rng.uniform(0.1, 0.9) * travel, rng.uniform(*wait)) for _ in range(int(length // every)))
            total = travel + sum(p[1] for p in pauses)
            segments.append(("move", path, t, t + total, pauses, travel))
            t += total
        here = there


def record_indoor(rng, segments, kind):
    """(time, x, y, accuracy) fixes of a day of an indoor kind, as the figures above say."""
    def end_of(segment):
        return segment[4] if segment[0] == "stop" else segment[3]

    stops = {}
    for index, segment in enumerate(segments):
        if segment[0] != "stop":
            continue
        _, _, _, t0, t1, indoors = segment
        strays = []
        if indoors:
            at = t0 + rng.expovariate(1 / 3600)
            while at < t1:
                angle, distance = rng.uniform(0, 2 * math.pi), rng.uniform(100, 800)
                claimed = rng.uniform(15, 60) if rng.random() < 0.5 else rng.uniform(100, 1500)
                strays.append((at, distance * math.cos(angle), distance * math.sin(angle), claimed, rng.uniform(0, 20)))
                at += rng.expovariate(1 / 3600)
        level = rng.uniform(30, 80)
        stops[index] = dict(indoors=indoors, level=level, fade=rng.uniform(20, 90),
                            sigma=level / 1.5 * rng.uniform(0.7, 1.5), memory=rng.uniform(60, 300), settle=rng.uniform(3, 15) * 60, strays=strays)
    silent = []
    if kind == "indoor-gappy":
        silent = silent_spans(rng, segments, longest_minutes=180, share=0.7, drive_minutes=lambda: rng.uniform(10, 60))
    fixes, drift, last_t = [], [0.0, 0.0], None
    t, index, stray_run = segments[0][3], 0, None  # stray_run: [east, north, claimed, until]
    left_indoors = None  # (time left, drift then) after an indoor stop, while the GPS comes back
    while t < end_of(segments[-1]):
        while index < len(segments) - 1 and t >= end_of(segments[index]):
            if index in stops and stops[index]["indoors"]:
                left_indoors = (end_of(segments[index]), list(drift))
            index += 1
            if index in stops:
                drift = [0.0, 0.0]
        segment = segments[index]
        step = rng.uniform(240, 360) if kind == "indoor-sparse" else rng.uniform(1, 5)
        if any(a <= t < b for a, b in silent):
            t += step
            continue
        x, y = position(segment, t, rng) if segment[0] == "move" else (segment[1], segment[2])
        if segment[0] == "stop" and stops[index]["indoors"]:
            stop = stops[index]
            inside = t - segment[3]
            ramp = 1 - math.exp(-inside / stop["fade"])
            dt = t - last_t if last_t is not None else 1.0
            keep = math.exp(-dt / stop["memory"])
            sigma = stop["sigma"] * (0.4 + 0.6 * math.exp(-inside / stop["settle"]))
            for axis in (0, 1):
                drift[axis] = drift[axis] * keep + sigma * math.sqrt(1 - keep * keep) * rng.gauss(0, 1)
            accuracy = 5 + (stop["level"] - 5) * ramp * rng.uniform(0.8, 1.2)
            x += drift[0] * ramp + rng.gauss(0, accuracy / 4)
            y += drift[1] * ramp + rng.gauss(0, accuracy / 4)
            if stray_run is not None and t > stray_run[3]:
                stray_run = None
            if stray_run is None and stop["strays"] and stop["strays"][0][0] <= t:
                at, east, north, claimed, lasting = stop["strays"].pop(0)
                stray_run = [east, north, claimed, t + lasting]
            if stray_run is not None:
                x, y, accuracy = segment[1] + stray_run[0], segment[2] + stray_run[1], stray_run[2]
        else:
            accuracy = rng.uniform(5, 20)
            x, y = x + rng.gauss(0, accuracy / 2), y + rng.gauss(0, accuracy / 2)
            if left_indoors is not None and t - left_indoors[0] < 120:
                fading = math.exp(-(t - left_indoors[0]) / 20)
                x, y = x + left_indoors[1][0] * fading, y + left_indoors[1][1] * fading
                accuracy += 40 * fading
        fixes.append((t, x, y, accuracy))
        last_t = t
        t += step
    return fixes


def generate(kind, days, seed):
    """(fixes, truth): fixes as (iso time, lat, lon, accuracy), truth as (lat, lon, start, end) in seconds."""
    rng = random.Random(seed)
    indoor = kind in INDOOR_KINDS
    if indoor:
        places = indoor_places(rng)
    else:
        places = [(0.0, 0.0), (rng.uniform(3000, 6000), rng.uniform(-2000, 2000))]
        while len(places) < 12:
            candidate = (rng.uniform(-8000, 8000), rng.uniform(-8000, 8000))
            if all(math.dist(candidate, p) > 400 for p in places):
                places.append(candidate)
    base = datetime.datetime(2026, 3, 2, 7, tzinfo=datetime.timezone.utc).timestamp()
    fixes, truth = [], []
    for day in range(days):
        segments = (plan_indoor_day if indoor else plan_day)(rng, places, kind, base + day * 86_400)
        for segment in segments:
            if segment[0] == "stop":
                lat, lon = to_lat_lon(segment[1], segment[2])
                truth.append((lat, lon, segment[3], segment[4]))
        for t, x, y, accuracy in (record_indoor if indoor else record)(rng, segments, kind):
            lat, lon = to_lat_lon(x, y)
            fixes.append((t, lat, lon, accuracy))
    return fixes, truth


def write_csv(path, fixes):
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["time", "lat", "lon", "accuracy"])
        for t, lat, lon, accuracy in fixes:
            stamp = datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
            writer.writerow([stamp, f"{lat:.7f}", f"{lon:.7f}", f"{accuracy:.1f}"])
