"""`bench/watch memory`: enlog watch's resident memory over an hour of 1 Hz fixes and a digest.

Debian's gpsd reads SECONDS epochs of a walk (GGA+GSA+RMC, one per second of fix time) from an
NMEA source on loopback (tcp://, written here at RATE epochs a second: gpsfake plays about ten
sentences a second on a loaded machine, too slow for an hour), all stamped in the recent past so
that none is refused as from the future (location.max_age is raised to accept them); watch logs
notes and keeps track fixes as it would over that time. The day being followed also holds a day's worth of 1 Hz fixes (imported first with
`enlog import`). Once the replay is over, config.toml turns watch.digest on with a note.time_zone
(a POSIX rule) whose midnight is a few seconds away, and SIGHUP makes watch read it: watch's own
digest timer then writes that day's digest. VmRSS (and its anonymous and file-backed parts) is read
from /proc every half second; VmHWM is the peak. After the digest, bench/rss_breakdown.py says which
mappings, and which sections and symbols of the executable, hold the RSS.

Usage (from bench/watch): watch_memory.py ENLOG WORK SECONDS RATE
"""
import csv, datetime, functools, math, os, re, signal, socket, subprocess, sys, threading, time

enlog, work, seconds, rate = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])


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


def posix_zone(midnight):
    """A fixed-offset POSIX zone in which `midnight` (UTC seconds, a whole minute) is 00:00."""
    offset = (-int(midnight)) % 86_400          # seconds east of UTC
    if offset > 14 * 3600:
        offset -= 86_400
    sign = "-" if offset >= 0 else "+"          # POSIX: what local time adds to reach UTC
    return f"BNC{sign}{abs(offset) // 3600:02d}:{abs(offset) % 3600 // 60:02d}"


now = time.time()
# The replayed hour: a walk at 1.4 m/s turning slowly, stamped so that it ends a minute before now.
first_fix = int(now) - seconds - 60
lat, lon, heading = 48.137, 11.575, 0.0
epochs = []
for i in range(seconds):
    if True:
        heading += 0.01
        lat += 1.4 * math.cos(heading) / 111_320
        lon += 1.4 * math.sin(heading) / (111_320 * math.cos(math.radians(lat)))
        t = datetime.datetime.fromtimestamp(first_fix + i, datetime.timezone.utc)
        hms, dmy = t.strftime("%H%M%S.00"), t.strftime("%d%m%y")
        (la, ns), (lo, ew) = nmea_angle(lat, "N", "S", 2), nmea_angle(lon, "E", "W", 3)
        epochs.append((sentence(f"GPGGA,{hms},{la},{ns},{lo},{ew},1,09,0.50,520.0,M,47.3,M,,")
                       + sentence("GPGSA,A,3,02,05,07,13,15,18,20,24,29,,,,1.4,0.50,1.1")
                       + sentence(f"GPRMC,{hms},A,{la},{ns},{lo},{ew},2.7,{math.degrees(heading) % 360:.1f},{dmy},3.1,E,A")).encode())

# The rest of the day at 1 Hz, already in the history (a phone's export, say): the digest reads it all.
history = os.path.join(work, "day.csv")
with open(history, "w", newline="") as handle:
    writer = csv.writer(handle)
    writer.writerow(["time", "lat", "lon", "accuracy"])
    hlat, hlon = 48.10, 11.50
    for t in range(first_fix - 86_400 + 900, first_fix - 60):
        hlat += 2e-6 * math.sin(t / 600)
        hlon += 3e-6 * math.cos(t / 900)
        stamp = datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        writer.writerow([stamp, f"{hlat:.7f}", f"{hlon:.7f}", "5.0"])

port = free_port()
env = dict(os.environ, HOME=work, XDG_CONFIG_HOME=work + "/config", ENLOG_DB=work + "/enlog.sqlite",
           ENLOG_GEOCODING_ENABLED="false", ENLOG_MAP_STYLE="none", ENLOG_LOCATION_GPSD=f"127.0.0.1:{port}",
           ENLOG_LOCATION_MAX_AGE="86400", ENLOG_WATCH_MIN_INTERVAL="60", TZ="UTC")
config = os.path.join(work, "config", "enlog", "config.toml")
os.makedirs(os.path.dirname(config))
imported = subprocess.run([enlog, "import", history], env=env, check=True, capture_output=True, text=True)

# The NMEA source gpsd reads: one connection, the epochs at RATE a second, then kept open (idle).
source = socket.socket()
source.bind(("127.0.0.1", 0))
source.listen(1)
replayed = threading.Event()
stop_source = threading.Event()


def feed():
    connection, _ = source.accept()
    for i, epoch in enumerate(epochs):
        connection.sendall(epoch)
        if i % 10 == 9:
            time.sleep(10 / rate)
    replayed.set()
    stop_source.wait()
    connection.close()


feeder = threading.Thread(target=feed, daemon=True)
feeder.start()
gpsd = subprocess.Popen(["gpsd", "-N", "-n", "-S", str(port), f"tcp://127.0.0.1:{source.getsockname()[1]}"],
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
        samples.append((time.time() - started,) + tuple(
            int(re.search(name + r":\s+(\d+)", status).group(1)) for name in ("VmRSS", "VmHWM", "RssAnon", "RssFile")))
        done.wait(0.5)


sampler = threading.Thread(target=sample)
sampler.start()


def logged(pattern):
    log.flush()
    with open(log.name) as handle:
        return re.search(pattern, handle.read())


try:
    replayed.wait(timeout=seconds / rate * 10 + 300)
    replay_end = time.time() - started
    time.sleep(5)   # the last fixes handled
    # The day ends a few seconds from now; watch writes its digest a minute after midnight.
    midnight = math.ceil((time.time() + 5) / 60) * 60
    with open(config, "w") as handle:
        handle.write(f'[note]\ntime_zone = "{posix_zone(midnight)}"\n[watch]\ndigest = true\n')
    watch.send_signal(signal.SIGHUP)
    before_digest = time.time() - started
    while time.time() < midnight + 60 + 120 and not logged(r"wrote the digest|could not write the digest|has its digest"):
        time.sleep(0.5)
    digest_at = time.time() - started
    time.sleep(10)  # settled after the digest
    breakdown = subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "rss_breakdown.py"), str(watch.pid)],
                               capture_output=True, text=True).stdout
finally:
    done.set()
    sampler.join()
    watch.send_signal(signal.SIGTERM)
    watch.wait(timeout=60)
    stop_source.set()
    gpsd.terminate()
    gpsd.wait()

text = open(log.name).read()
digest = re.search(r"wrote the digest of .*", text)
notes = len(re.findall(r"logged note", text))
import sqlite3
history_db = sqlite3.connect(env["ENLOG_DB"])
track = history_db.execute("SELECT COUNT(*) FROM fix").fetchone()[0] - int(re.search(r"(\d+) added", imported.stdout).group(1)) - notes
history_db.close()


def at(moment):
    """The sample closest to `moment` seconds after start."""
    return min(samples, key=lambda s: abs(s[0] - moment))


def show(label, sample):
    _, rss, _, anon, file = sample
    print(f"  {label:30} {rss / 1024:6.1f} MB  (anonymous {anon / 1024:5.1f} MB, file-backed {file / 1024:5.1f} MB)")


settle = min(5.0, replay_end / 4)
print(f"replayed {seconds} s of 1 Hz fixes in {replay_end:.0f} s: {notes} notes logged, {track} track fixes kept; "
      f"the day held {imported.stdout.strip()}")
show(f"RSS at start (after {settle:.0f} s):", at(settle))
for quarter in (1, 2, 3):
    show(f"RSS at {quarter * 25} % of the hour:", at(settle + (replay_end - settle) * quarter / 4))
show("RSS at the end of the hour:", at(before_digest))
show("RSS after the digest:", at(digest_at + 10))
print(f"  {'peak (VmHWM):':30} {samples[-1][2] / 1024:6.1f} MB   (goal: flat, under 30 MB)")
print(f"  digest: {digest.group(0) if digest else 'NONE WRITTEN'}")
growth = (at(before_digest)[1] - at(settle + (replay_end - settle) / 4)[1]) / 1024
print(f"  from 25 % to the end of the hour: {growth:+.1f} MB ({'flat' if abs(growth) < 1.0 else 'grows' if growth > 0 else 'shrinks'}); "
      f"after the digest vs before: {(at(digest_at + 10)[1] - at(before_digest)[1]) / 1024:+.1f} MB")
print("where the RSS is after the digest (bench/rss_breakdown.py):")
print(breakdown, end="")
