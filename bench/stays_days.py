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

Each day runs from 07:00 to about 21:00 UTC; days are a day apart, so no stay crosses midnight.
Truth: the stops (centre, start, end); traffic lights (30-90 s) are not stops.
"""
import csv, datetime, math, random

METRES_PER_DEGREE = 111_195.0
ORIGIN = (48.137, 11.575)
KINDS = ("dense", "noisy", "sparse", "gaps")


def to_lat_lon(x, y):
    return (ORIGIN[0] + y / METRES_PER_DEGREE,
            ORIGIN[1] + x / (METRES_PER_DEGREE * math.cos(math.radians(ORIGIN[0]))))


def plan_day(rng, places, kind, start):
    """Segments of one day: ("stop", x, y, t0, t1) and ("move", path, t0, t1, pauses)."""
    shortest = 15 * 60 if kind == "sparse" else 3 * 60
    home = places[0]
    segments, t, here = [], start, home
    end_of_day = start + 13 * 3600
    while True:
        if not segments:
            duration = rng.uniform(20, 90) * 60
        elif here == home and t > end_of_day:
            duration = rng.uniform(20, 60) * 60
        elif rng.random() < 0.15:
            duration = rng.uniform(8, 10) * 3600
        else:
            duration = math.exp(rng.uniform(math.log(shortest), math.log(3 * 3600)))
        segments.append(("stop", here[0], here[1], t, t + duration))
        t += duration
        if here == home and t > end_of_day:
            return segments
        there = home if t > end_of_day else rng.choice([p for p in places if p != here])
        distance = math.dist(here, there)
        speed = 1.4 if distance < 1500 else rng.uniform(9, 14)
        bend = (rng.uniform(-0.2, 0.2) * distance, rng.uniform(-0.2, 0.2) * distance)
        middle = ((here[0] + there[0]) / 2 + bend[0], (here[1] + there[1]) / 2 + bend[1])
        path = [here, middle, there]
        length = math.dist(here, middle) + math.dist(middle, there)
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


def record(rng, segments, kind):
    """(time, lat, lon, accuracy) fixes of a day as its kind records them."""
    fixes, start, end = [], segments[0][3] if segments[0][0] == "stop" else segments[0][2], segments[-1][4]
    silent = []
    if kind == "gaps":
        for segment in segments:
            if segment[0] == "stop" and segment[4] - segment[3] > 40 * 60:
                length = min(rng.uniform(30, 120) * 60, (segment[4] - segment[3]) * 0.6)
                begin = rng.uniform(segment[3] + 5 * 60, segment[4] - length - 5 * 60)
                silent.append((begin, begin + length))
        drives = [s for s in segments if s[0] == "move" and s[3] - s[2] > 15 * 60]
        if drives:
            drive = rng.choice(drives)
            silent.append((drive[2] + 60, min(drive[3] - 60, drive[2] + 60 + 10 * 60)))
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


def generate(kind, days, seed):
    """(fixes, truth): fixes as (iso time, lat, lon, accuracy), truth as (lat, lon, start, end) in seconds."""
    rng = random.Random(seed)
    places = [(0.0, 0.0), (rng.uniform(3000, 6000), rng.uniform(-2000, 2000))]
    while len(places) < 12:
        candidate = (rng.uniform(-8000, 8000), rng.uniform(-8000, 8000))
        if all(math.dist(candidate, p) > 400 for p in places):
            places.append(candidate)
    base = datetime.datetime(2026, 3, 2, 7, tzinfo=datetime.timezone.utc).timestamp()
    fixes, truth = [], []
    for day in range(days):
        segments = plan_day(rng, places, kind, base + day * 86_400)
        for segment in segments:
            if segment[0] == "stop":
                lat, lon = to_lat_lon(segment[1], segment[2])
                truth.append((lat, lon, segment[3], segment[4]))
        for t, x, y, accuracy in record(rng, segments, kind):
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
