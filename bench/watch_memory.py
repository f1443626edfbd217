"""`bench/watch memory`: enlog watch's resident memory over an hour of 1 Hz fixes and a digest.

gpsfake replays SECONDS epochs of a walk (GGA+GSA+RMC, one per second of fix time, SPEEDUP times
faster than real time, all stamped in the recent past so none is refused as from the future;
location.max_age is raised to accept them), so watch logs notes and keeps track fixes as it would
over that time. The day being followed also holds a day's worth of 1 Hz fixes (imported first with
`enlog import`), and note.time_zone is a POSIX rule whose midnight falls a little after the replay
ends: watch's own digest timer then writes that day's digest. VmRSS is read from /proc every half
second; VmHWM is the peak.

Usage (from bench/watch): watch_memory.py ENLOG WORK SECONDS SPEEDUP
"""
import csv, datetime, functools, math, os, re, signal, socket, subprocess, sys, threading, time

enlog, work, seconds, speedup = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])


def sentence(body):
    return "$%s*%02X\r\n" % (body, functools.reduce(lambda a, c: a ^ ord(c), body, 0))


def nmea_angle(value, positive, negative, degree_digits):
    hemisphere = positive if value >= 0 else negative
    value = abs(value)
    degrees = int(value)
    return f"{degrees:0{degree_digits}d}{(value - degrees) * 60:07.4f}", hemisphere


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


# Timeline: the replay takes about SECONDS / SPEEDUP; the followed day ends (local midnight) a
# margin after that, and watch writes its digest a minute after midnight (Watcher.digestDelay).
cycle = 1 / speedup / 3   # gpsfake's delay between sentences, three per epoch
replay_wall = seconds / speedup
now = time.time()
midnight = math.ceil((now + replay_wall * 1.5 + 30) / 60) * 60 - 60
offset = (-int(midnight)) % 86_400          # seconds east of UTC that make `midnight` 00:00 local
if offset > 14 * 3600:
    offset -= 86_400
sign = "-" if offset >= 0 else "+"          # POSIX: the offset is what local time adds to reach UTC
zone = f"BNC{sign}{abs(offset) // 3600:02d}:{abs(offset) % 3600 // 60:02d}"
day_start = midnight - 86_400

# The replayed hour: a walk at 1.4 m/s turning slowly, stamped so that it ends a minute before now.
first_fix = int(now) - seconds - 60
lat, lon, heading = 48.137, 11.575, 0.0
nmea = os.path.join(work, "walk.nmea")
with open(nmea, "w") as out:
    for i in range(seconds):
        heading += 0.01
        lat += 1.4 * math.cos(heading) / 111_320
        lon += 1.4 * math.sin(heading) / (111_320 * math.cos(math.radians(lat)))
        t = datetime.datetime.fromtimestamp(first_fix + i, datetime.timezone.utc)
        hms, dmy = t.strftime("%H%M%S.00"), t.strftime("%d%m%y")
        (la, ns), (lo, ew) = nmea_angle(lat, "N", "S", 2), nmea_angle(lon, "E", "W", 3)
        out.write(sentence(f"GPGGA,{hms},{la},{ns},{lo},{ew},1,09,0.50,520.0,M,47.3,M,,"))
        out.write(sentence("GPGSA,A,3,02,05,07,13,15,18,20,24,29,,,,1.4,0.50,1.1"))
        out.write(sentence(f"GPRMC,{hms},A,{la},{ns},{lo},{ew},2.7,{math.degrees(heading) % 360:.1f},{dmy},3.1,E,A"))

# The rest of the day at 1 Hz, already in the history (a phone's export, say): the digest reads it all.
history = os.path.join(work, "day.csv")
with open(history, "w", newline="") as handle:
    writer = csv.writer(handle)
    writer.writerow(["time", "lat", "lon", "accuracy"])
    hlat, hlon = 48.10, 11.50
    for t in range(int(day_start), first_fix - 60):
        hlat += 2e-6 * math.sin(t / 600)
        hlon += 3e-6 * math.cos(t / 900)
        stamp = datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        writer.writerow([stamp, f"{hlat:.7f}", f"{hlon:.7f}", "5.0"])

port = free_port()
env = dict(os.environ, HOME=work, XDG_CONFIG_HOME=work + "/config", ENLOG_DB=work + "/enlog.sqlite",
           ENLOG_GEOCODING_ENABLED="false", ENLOG_MAP_STYLE="none", ENLOG_LOCATION_GPSD=f"127.0.0.1:{port}",
           ENLOG_LOCATION_MAX_AGE="86400", ENLOG_WATCH_DIGEST="true", ENLOG_NOTE_TIME_ZONE=zone,
           ENLOG_WATCH_MIN_INTERVAL="60", TZ="UTC")
imported = subprocess.run([enlog, "import", history], env=env, check=True, capture_output=True, text=True)

# gpsfake waits for its first client (watch) before it plays the log, once.
gpsfake = subprocess.Popen(["gpsfake", "-1", "-P", str(port), "-c", f"{cycle:.6f}", "-q", nmea],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
for _ in range(100):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        break
    except OSError:
        time.sleep(0.1)
log = open(os.path.join(work, "watch.log"), "w+")
started = time.time()
watch = subprocess.Popen([enlog, "watch"], env=env, stderr=log, stdout=subprocess.DEVNULL)

samples = []   # (seconds since start, VmRSS kB, VmHWM kB)
done = threading.Event()


def sample():
    while not done.is_set():
        try:
            status = open(f"/proc/{watch.pid}/status").read()
        except OSError:
            return
        rss = int(re.search(r"VmRSS:\s+(\d+)", status).group(1))
        hwm = int(re.search(r"VmHWM:\s+(\d+)", status).group(1))
        samples.append((time.time() - started, rss, hwm))
        done.wait(0.5)


sampler = threading.Thread(target=sample)
sampler.start()


def logged(pattern):
    log.flush()
    with open(log.name) as handle:
        return re.search(pattern, handle.read())


try:
    gpsfake.wait(timeout=replay_wall * 20 + 120)
    replay_end = time.time() - started
    time.sleep(5)   # the last fixes handled
    deadline = midnight + 60 + 120
    while time.time() < deadline and not logged(r"wrote the digest|digest of .* failed|could not write the digest"):
        time.sleep(0.5)
    digest_at = time.time() - started
    time.sleep(10)  # settled after the digest
finally:
    done.set()
    sampler.join()
    watch.send_signal(signal.SIGTERM)
    watch.wait(timeout=60)
    if gpsfake.poll() is None:
        gpsfake.terminate()
        gpsfake.wait()

text = open(log.name).read()
digest = re.search(r"wrote the digest of .*", text)
notes = len(re.findall(r"logged note", text))
track = sum(int(n) for n in re.findall(r"wrote (\d+) track fix", text))


def rss_at(moment):
    """The sample closest to `moment` seconds after start, in MB."""
    return min(samples, key=lambda s: abs(s[0] - moment))[1] / 1024


mb = lambda kb: kb / 1024
settle = min(5.0, replay_end / 4)
during = [s for s in samples if settle <= s[0] <= replay_end]
print(f"replayed {seconds} s of 1 Hz fixes in {replay_end:.0f} s (gpsfake -c {cycle:.4f}): "
      f"{notes} notes logged, {track} track fixes kept; the day held {imported.stdout.strip() or 'its imported fixes'}")
print(f"  RSS at start (after {settle:.0f} s): {rss_at(settle):6.1f} MB")
for quarter in (1, 2, 3):
    moment = settle + (replay_end - settle) * quarter / 4
    print(f"  RSS at {quarter * 25:3d} % of the hour:    {rss_at(moment):6.1f} MB")
print(f"  RSS at the end of the hour:  {rss_at(replay_end):6.1f} MB")
print(f"  RSS after the digest:        {rss_at(digest_at + 10):6.1f} MB "
      f"({digest.group(0) if digest else 'NO DIGEST WRITTEN'})")
print(f"  peak (VmHWM):                {mb(samples[-1][2]):6.1f} MB   (goal: flat, under 30 MB)")
if during:
    first, last = during[len(during) // 4][1], during[-1][1]
    growth = mb(last - first)
    verdict = "flat" if abs(growth) < 1.0 else ("grows" if growth > 0 else "shrinks")
    print(f"  from 25 % to the end of the hour: {growth:+.1f} MB ({verdict})")
