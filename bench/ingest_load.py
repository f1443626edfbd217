"""bench/ingest's load generator and measurements (see bench/ingest for what and why).

Phones are asyncio connections speaking HTTP/1.1 with keep-alive, each as its app does: Overland
POSTs {"locations": [200 GeoJSON features]} with its Bearer token to /overland/NAME; OwnTracks
POSTs one {"_type": "location", …} with Basic authentication to /owntracks. Every request's time
runs from its first byte sent to its reply's last byte read.
"""
import asyncio, base64, json, os, signal, socket, sqlite3, statistics, subprocess, sys, time

enlog, work, seconds, phones, batch_phones, interval = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6])


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


db = f"{work}/serve.sqlite"
env = dict(os.environ, HOME=work, XDG_CONFIG_HOME=f"{work}/config", TZ="UTC", ENLOG_DB=db, ENLOG_MAP_STYLE="none",
           ENLOG_GEOCODING_ENABLED="false", ENLOG_NETWORK_PROBES=f"127.0.0.1:{free_port()}",
           ENLOG_SERVE_RATE="100000", ENLOG_SERVE_MAX_CONNECTIONS="1000")
for name in ("ENLOG_SERVE_MQTT_BROKER", "ENLOG_TOKEN"):
    env.pop(name, None)


def add_device(name):
    out = subprocess.run([enlog, "devices", "add", name, "--json"], env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out)["secret"]


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))] if ordered else float("nan")


class RSS:
    """The receiver's VmRSS every half second, in MB."""
    def __init__(self, pid):
        self.pid, self.samples = pid, []

    def read(self, field):
        with open(f"/proc/{self.pid}/status") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
        return float("nan")

    async def run(self, stop):
        while not stop.is_set():
            self.samples.append(self.read("VmRSS"))
            await asyncio.sleep(0.5)

    def summary(self, start):
        phase = self.samples[start:] or [float("nan")]
        at = lambda f: phase[min(len(phase) - 1, int(len(phase) * f))]
        return f"RSS {at(0.1):.1f} / {at(0.5):.1f} / {at(0.9):.1f} MB at 10/50/90 % of the phase, peak so far {self.read('VmHWM'):.1f} MB"


async def request(reader, writer, head, body):
    writer.write(head + body)
    await writer.drain()
    status_line = await reader.readline()
    length = 0
    while True:
        line = await reader.readline()
        if line in (b"\r\n", b""):
            break
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
        if line.lower().replace(b" ", b"").startswith(b"transfer-encoding:chunked"):
            length = -1
    if length >= 0:
        await reader.readexactly(length)
    else:   # chunked (OwnTracks Recorder's replies)
        while (size := int((await reader.readline()).split(b";")[0], 16)) > 0:
            await reader.readexactly(size + 2)
        await reader.readline()
    return int(status_line.split()[1])


def post(path, host, authorization, body, extra=""):
    return (f"POST {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: {authorization}\r\nContent-Type: application/json\r\n{extra}"
            f"Content-Length: {len(body)}\r\n\r\n").encode(), body


# An Overland batch's coordinates, as json.dumps writes them (repr of the float).
LONGITUDES = [repr(2.2945 + k * 1e-5) for k in range(997)]
LATITUDES = [repr(48.8584 + k * 1e-5) for k in range(1000)]


def overland_body(name, base_ms, sent):
    """Points sent..sent+199 of a phone, one a second from base_ms: the bytes
    json.dumps({"locations": [Feature, …]}) gives (main checks that first),
    written with one f-string a point. json.dumps of 200 dicts cost 1.4 ms of CPU a batch, a
    quarter of a core at the receiver's rate, taken from the receiver on the same two cores."""
    properties = json.dumps({"horizontal_accuracy": 10, "altitude": 35, "speed": 1.2, "motion": ["walking"],
                             "battery_level": 0.8, "device_id": name})[1:]
    base_s = base_ms // 1000
    features = ", ".join(
        f'{{"type": "Feature", "geometry": {{"type": "Point", "coordinates": [{LONGITUDES[(sent + i) % 997]}, {LATITUDES[(sent + i) % 1000]}]}}, '
        f'"properties": {{"timestamp": "{time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(base_s + sent + i))}", {properties}}}'
        for i in range(200))
    return f'{{"locations": [{features}]}}'.encode()


def overland_body_by_json_dumps(name, base_ms, sent):
    """The same batch through json.dumps: what overland_body must equal."""
    features = [{"type": "Feature", "geometry": {"type": "Point", "coordinates": [2.2945 + (sent + i) % 997 * 1e-5, 48.8584 + (sent + i) % 1000 * 1e-5]},
                 "properties": {"timestamp": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime((base_ms + (sent + i) * 1000) / 1000)) + "Z",
                                "horizontal_accuracy": 10, "altitude": 35, "speed": 1.2, "motion": ["walking"],
                                "battery_level": 0.8, "device_id": name}} for i in range(200)]
    return json.dumps({"locations": features}).encode()


async def overland_phone(port, name, secret, deadline, base_ms, results):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    sent = 0
    while time.monotonic() < deadline:
        head, body = post(f"/overland/{name}", f"127.0.0.1:{port}", f"Bearer {secret}", overland_body(name, base_ms, sent))
        start = time.perf_counter()
        status = await request(reader, writer, head, body)
        results.append(((time.perf_counter() - start) * 1000, status, 200))
        sent += 200
    writer.close()


async def owntracks_phone(port, name, secret, deadline, base_s, offset, results, path="/owntracks", extra=""):
    await asyncio.sleep(offset)   # phones spread over the interval, as real ones are
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    authorization = "Basic " + base64.b64encode(f"{name}:{secret}".encode()).decode()
    next_send, sent = time.monotonic(), 0
    while next_send < deadline:
        body = json.dumps({"_type": "location", "lat": 48.8584 + sent % 1000 * 1e-5, "lon": 2.2945, "tst": base_s + sent,
                           "acc": 10, "alt": 35, "vel": 4, "cog": 90, "batt": 80, "tid": name[-2:], "topic": f"owntracks/{name}/phone"}).encode()
        head, body = post(path, f"127.0.0.1:{port}", authorization, body, extra.format(name=name))
        start = time.perf_counter()
        status = await request(reader, writer, head, body)
        results.append(((time.perf_counter() - start) * 1000, status, 1))
        sent += 1
        next_send += interval
        await asyncio.sleep(max(0, next_send - time.monotonic()))
    writer.close()


def stored(device_prefix):
    connection = sqlite3.connect(db)
    count = connection.execute("SELECT count(*) FROM fix WHERE device LIKE ?", (device_prefix + "%",)).fetchone()[0]
    connection.close()
    return count


def diary():
    """How far behind the diary is (received rows after the mark it last kept, every 5 s), and its notes."""
    connection = sqlite3.connect(db)
    try:
        behind = connection.execute("SELECT (SELECT max(id) FROM fix) - decidedThrough FROM phone_diary").fetchone()[0]
        lag = f"{behind} rows after its kept mark"
    except sqlite3.OperationalError:
        lag = "no mark (a build before phone_diary)"
    notes = connection.execute("SELECT count(*) FROM note").fetchone()[0]
    connection.close()
    return f"diary: {lag}, {notes} notes"


def baseline(points, batch, devices, run=""):
    outbox = f"{work}/baseline-{batch}{run}.sqlite"   # a new outbox a run: the same points twice would add nothing
    subprocess.run([enlog, "log", "--at", "48.8584,2.2945", "--no-geocode", "--no-sync"], env=dict(env, ENLOG_DB=outbox),
                   check=True, stdout=subprocess.DEVNULL)
    out = subprocess.run([f"{work}/ingest_baseline", outbox, str(points), str(batch), str(devices)], check=True,
                         capture_output=True, text=True).stdout.split()
    return int(out[0]), float(out[2]), float(out[3]), float(out[4])


async def listening(port):
    """Returns once the receiver on `port` takes connections (at most a minute)."""
    for _ in range(600):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            await asyncio.sleep(0.1)


def stopped(server):
    server.send_signal(signal.SIGTERM)
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()


async def main():
    for sent in (0, 200, 123_456):
        assert overland_body("batch0", 1764201600000, sent) == overland_body_by_json_dumps("batch0", 1764201600000, sent)
    overland = {f"batch{i}": add_device(f"batch{i}") for i in range(batch_phones)}
    owntracks = {f"single{i:03d}": add_device(f"single{i:03d}") for i in range(phones)}
    port = free_port()
    server = subprocess.Popen([enlog, "serve", "--listen", f"127.0.0.1:{port}"], env=env, stdout=subprocess.DEVNULL, stderr=open(f"{work}/serve.log", "w"))
    try:
        await listening(port)
        rss, stop = RSS(server.pid), asyncio.Event()
        sampler = asyncio.create_task(rss.run(stop))
        print(f"enlog serve: {batch_phones} Overland phones (batches of 200, back to back), then {phones} OwnTracks phones "
              f"(one point each every {interval:g} s), {seconds:g} s each; receiver RSS at start {rss.read('VmRSS'):.1f} MB")

        # 1. Batches. The C program runs before and after them: how fast the disk syncs changes within
        # minutes (fsync 1.5 or 4 ms here), and the ratio is taken against the faster of its two runs.
        c_before = baseline(20000, 200, batch_phones, run="-before")
        results, first = [], len(rss.samples)
        deadline, began = time.monotonic() + seconds, time.perf_counter()
        await asyncio.gather(*(overland_phone(port, name, secret, deadline, 1764201600000 + i * 10**9, results)
                               for i, (name, secret) in enumerate(overland.items())))
        elapsed = time.perf_counter() - began
        acked = sum(points for _, status, points in results if status == 200)
        failed = sum(1 for _, status, _ in results if status != 200)
        durable = stored("batch")
        latencies = [ms for ms, status, _ in results if status == 200]
        c_after = baseline(max(acked, 2000), 200, batch_phones)
        rate = acked / elapsed
        print(f"batched: {acked} points acknowledged in {len(latencies)} requests ({failed} not 200), {durable} in the outbox; "
              f"{rate:.0f} durable points/s; request p50 {percentile(latencies, .5):.1f} ms, p99 {percentile(latencies, .99):.1f} ms")
        for when, (c_points, c_rate, c_p50, c_p99) in (("before", c_before), ("after", c_after)):
            print(f"  C baseline {when} (transactions of 200): {c_rate:.0f} points/s, p50 {c_p50:.1f} ms, p99 {c_p99:.1f} ms")
        c_rate = max(c_before[1], c_after[1])
        print(f"  enlog / C: {rate / c_rate * 100:.0f} % of the faster C run (goal: at least 50 %)")
        print(f"  {rss.summary(first)}; {diary()}")
        if durable != acked:
            print(f"  MISMATCH: {acked} acknowledged, {durable} stored")

        # 2. Single points.
        results, first = [], len(rss.samples)
        deadline, began = time.monotonic() + seconds, time.perf_counter()
        await asyncio.gather(*(owntracks_phone(port, name, secret, deadline, 1764201600 + i * 10**6, i * interval / phones, results)
                               for i, (name, secret) in enumerate(owntracks.items())))
        elapsed = time.perf_counter() - began
        latencies = [ms for ms, status, _ in results if status == 200]
        failed = sum(1 for _, status, _ in results if status != 200)
        durable = stored("single")
        c_points, c_rate, c_p50, c_p99 = baseline(max(500, min(len(latencies), 3000)), 1, phones)
        print(f"single points: {len(latencies)} acknowledged ({failed} not 200), {durable} in the outbox, {len(latencies) / elapsed:.0f} points/s "
              f"offered {phones / interval:.0f}/s; p50 {percentile(latencies, .5):.1f} ms, p99 {percentile(latencies, .99):.1f} ms (goal: p99 < 50 ms)")
        print(f"  C baseline (one point per transaction, back to back): {c_rate:.0f} points/s, p50 {c_p50:.1f} ms, p99 {c_p99:.1f} ms")
        print(f"  {rss.summary(first)}; {diary()}")
        if durable != len(latencies):
            print(f"  MISMATCH: {len(latencies)} acknowledged, {durable} stored")
        stop.set()
        await sampler
    finally:
        stopped(server)


async def recorder_phase(recorder, phones):
    """The single-point phase again against OwnTracks Recorder (built from source, WITH_MQTT=no):
    its HTTP mode, POST /pub with the user and device in X-Limit-U/X-Limit-D. Recorder appends each
    point to a .rec file without fsync, so its reply does not mean the point is durable."""
    storage = f"{work}/recorder"
    os.makedirs(storage)
    subprocess.run([recorder, "--storage", storage, "--initialize"], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    port = free_port()
    server = subprocess.Popen([recorder, "--storage", storage, "--doc-root", storage, "--http-host", "127.0.0.1", "--http-port", str(port),
                               "--norevgeo", "--quiet"], stdout=subprocess.DEVNULL, stderr=open(f"{work}/recorder.log", "w"))
    try:
        await listening(port)
        rss, stop = RSS(server.pid), asyncio.Event()
        sampler = asyncio.create_task(rss.run(stop))
        results = []
        deadline, began = time.monotonic() + seconds, time.perf_counter()
        await asyncio.gather(*(owntracks_phone(port, name, "", deadline, 1764201600 + i * 10**6, i * interval / len(phones), results,
                                               path="/pub", extra="X-Limit-U: {name}\r\nX-Limit-D: phone\r\n")
                               for i, name in enumerate(phones)))
        elapsed = time.perf_counter() - began
        latencies = [ms for ms, status, _ in results if status == 200]
        failed = sum(1 for _, status, _ in results if status != 200)
        stop.set()
        await sampler
        lines = 0
        for folder, _, files in os.walk(f"{storage}/rec"):
            for file in files:
                with open(os.path.join(folder, file)) as rec:
                    lines += sum(1 for _ in rec)
        print(f"OwnTracks Recorder, the same single points (POST /pub; appended without fsync, not durable at the reply): "
              f"{len(latencies)} acknowledged ({failed} not 200), {lines} in its .rec files, {len(latencies) / elapsed:.0f} points/s; "
              f"p50 {percentile(latencies, .5):.1f} ms, p99 {percentile(latencies, .99):.1f} ms")
        print(f"  {rss.summary(0)}")
    finally:
        stopped(server)


asyncio.run(main())
if os.environ.get("OT_RECORDER"):
    asyncio.run(recorder_phase(os.environ["OT_RECORDER"], [f"single{i:03d}" for i in range(phones)]))
