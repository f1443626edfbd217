#!/usr/bin/env python3
"""A stand-in OSM raster tile server for enlog's tests (needs Pillow).

Listens on 127.0.0.1 (port 0: the kernel picks one) and prints PORT=<n> once ready.

  GET /{z}/{x}/{y}.png   a 256-pixel PNG tile, different for every z/x/y (its own colour, a
                         grid, "z/x/y" written on it), never containing the marker's red;
                         ETag "t-z-x-y", Last-Modified, Cache-Control: max-age=<max_age>;
                         If-None-Match with that ETag -> 304
  GET /static?...        a 320x240 PNG (the keyed static-map service's stand-in)
  GET /_test/requests    JSON {"requests": [{"path", "query", "headers", "in_flight", "status"}],
                         "max_in_flight"}: in_flight counts the image requests received and
                         not yet answered, this one included
  GET /_test/configure?max_age=N&status=N&garbage=html|truncated|empty&hold=K&total=T&edition=E
                         edition: the map was edited: every tile is drawn in other colours and
                         gets another ETag ("t-z-x-y-eE"), so a revalidation answers 200 with new bytes
                         status: answer every image request with this HTTP status (404, 500…)
                         garbage: answer 200 with a body that is not a decodable PNG:
                           html, truncated, empty; or a hostile one (tiles and static alike):
                           hugechunk  41 bytes whose text chunk claims 0x7FFFFFF0 bytes
                           bomb       a valid 256x256 tile whose image data goes on to inflate
                                      to 200 MB more (about 200 KB sent)
                           zerowidth  a PNG header claiming 0x256 pixels
                           badcrc     a PNG whose IHDR checksum is wrong
                           oddsize    a 300x200 PNG (not a tile's size); retina: a 512x512 tile
                         hold/total: keep each image answer until K requests are waiting (then
                         answer the oldest) or T requests have arrived (then answer all): with a
                         client that keeps K downloads in flight this proves the bound exactly,
                         without timing. 0 (default) turns it off.
                         redirect: answer image requests with 302: once (to /moved/<path>, served
                         as the path), loop (/moved/ again and again), away (to plain http on
                         198.51.100.7, which a client must refuse without connecting),
                         port:N (to the same path on 127.0.0.1:N, another origin)
  GET /_test/reset       forget the requests seen and restore the defaults
"""
import argparse
import io
import json
import struct
import threading
import zlib
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, urlsplit

from PIL import Image, ImageDraw

from serverkit import QuietServer, exit_when_stdin_closes, send_reply, unblock_signals

LAST_MODIFIED = "Mon, 02 Nov 2026 10:00:00 GMT"
DEFAULTS = {"max_age": 3600, "status": 0, "garbage": "", "hold": 0, "total": 0, "edition": 0, "redirect": ""}


def tile_png(z, x, y, edition=0):
    """Colours from z/x/y (and the edition): blues, greens and greys only (red channel kept low)."""
    seed = (z * 7919 + x * 104729 + y * 1299709 + edition * 15485863) & 0xFFFFFF
    background = (40 + seed % 60, 90 + (seed >> 8) % 140, 90 + (seed >> 16) % 140)
    image = Image.new("RGB", (256, 256), background)
    draw = ImageDraw.Draw(image)
    for offset in range(0, 256, 32):
        draw.line([(offset, 0), (offset, 255)], fill=(20, 40, 60))
        draw.line([(0, offset), (255, offset)], fill=(20, 40, 60))
    draw.rectangle([0, 0, 255, 255], outline=(0, 0, 0))
    draw.text((8, 8), f"{z}/{x}/{y}", fill=(255, 255, 255))
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def city_tile_png(z, x, y, edition=0):
    """A tile as busy as a city centre's on the OSM standard style, for benchmarks: blocks of
    buildings, a park, water, streets of several widths with casings and labels, drawn at twice
    the size and scaled down (antialiased edges), then reduced to a 256-colour palette as OSM's
    tiles are. About 25-40 KB, where the default tiles are 2 KB; never the marker's red."""
    import random
    rng = random.Random(z * 7919 + x * 104729 + y * 1299709 + edition)
    scale = 2
    side = 256 * scale
    image = Image.new("RGB", (side, side), (242, 239, 233))
    draw = ImageDraw.Draw(image)
    for _ in range(3):
        left, top = rng.randrange(side), rng.randrange(side)
        fill = rng.choice([(200, 250, 204), (170, 211, 223), (224, 223, 223)])
        draw.polygon([(left + rng.randrange(-160, 160), top + rng.randrange(-160, 160)) for _ in range(6)], fill=fill)
    for block_y in range(0, side, 64):
        for block_x in range(0, side, 64):
            for _ in range(rng.randrange(2, 6)):
                bx, by = block_x + rng.randrange(4, 48), block_y + rng.randrange(4, 48)
                w, h = rng.randrange(8, 28), rng.randrange(8, 28)
                draw.polygon([(bx, by), (bx + w, by + rng.randrange(-3, 4)), (bx + w, by + h), (bx + rng.randrange(-3, 4), by + h)],
                             fill=(217, 208, 201), outline=(196, 182, 171))
    for _ in range(9):
        width = rng.choice([6, 10, 14, 22])
        points = [(rng.randrange(-40, side + 40), rng.randrange(-40, side + 40)) for _ in range(3)]
        casing = (190, 180, 170) if width < 20 else (200, 160, 90)
        fill = (255, 255, 255) if width < 20 else (252, 214, 164)
        draw.line(points, fill=casing, width=width + 4, joint="curve")
        draw.line(points, fill=fill, width=width, joint="curve")
    for _ in range(7):
        draw.text((rng.randrange(side - 120), rng.randrange(side - 20)), rng.choice(
            ["Rue de Grenelle", "Avenue Rapp", "Quai Branly", "Musée", "Parc", "Place", "École Militaire"]),
            fill=(80, 80, 80))
    image = image.resize((256, 256), Image.LANCZOS).quantize(256, method=Image.Quantize.MEDIANCUT)
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=True)
    return out.getvalue()


def huge_chunk_png():
    """The signature, a valid IHDR, and a tEXt chunk whose header claims 2 GB: 41 bytes in all."""
    ihdr = struct.pack(">IIBBBBB", 256, 256, 8, 2, 0, 0, 0)
    return (PNG_SIGNATURE + png_chunk(b"IHDR", ihdr)
            + struct.pack(">I", 0x7FFFFFF0) + b"tEXt" + b"Comment\0")


BOMB = []


def bomb_png():
    """A 256x256 RGB tile whose one zlib stream holds its rows and then 200 MB of zeros, which a
    decoder that inflates past the last row (to check the stream's end) works through. Made
    once per server: compressing the zeros takes a second."""
    if not BOMB:
        rows = b"".join(b"\0" + bytes((40, 120 + y % 100, 160)) * 256 for y in range(256))
        deflater = zlib.compressobj(9, zlib.DEFLATED, 15, 9, zlib.Z_RLE)
        data = deflater.compress(rows)
        zeros = bytes(1 << 20)
        for _ in range(200):
            data += deflater.compress(zeros)
        data += deflater.flush()
        ihdr = struct.pack(">IIBBBBB", 256, 256, 8, 2, 0, 0, 0)
        BOMB.append(PNG_SIGNATURE + png_chunk(b"IHDR", ihdr) + png_chunk(b"IDAT", data) + png_chunk(b"IEND", b""))
    return BOMB[0]


PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def zero_width_png():
    """A well-formed PNG header claiming an image 0 pixels wide."""
    return PNG_SIGNATURE + png_chunk(b"IHDR", struct.pack(">IIBBBBB", 0, 256, 8, 2, 0, 0, 0)) + png_chunk(b"IEND", b"")


def bad_crc_png():
    """A small valid PNG whose IHDR checksum is wrong."""
    png = bytearray(static_png())
    png[29] ^= 0xFF
    return bytes(png)


def odd_size_png():
    """A 300x200 PNG where a 256-pixel tile belongs."""
    out = io.BytesIO()
    Image.new("RGB", (300, 200), (60, 120, 160)).save(out, format="PNG")
    return out.getvalue()


def retina_png():
    """A 512x512 tile, as high-resolution tile servers send."""
    out = io.BytesIO()
    Image.new("RGB", (512, 512), (60, 120, 160)).save(out, format="PNG")
    return out.getvalue()


HOSTILE = {"hugechunk": huge_chunk_png, "bomb": bomb_png, "zerowidth": zero_width_png, "badcrc": bad_crc_png,
           "oddsize": odd_size_png, "retina": retina_png}


def static_png():
    image = Image.new("RGB", (320, 240), (60, 120, 200))
    ImageDraw.Draw(image).ellipse([150, 110, 170, 130], fill=(0, 0, 0))
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--print-port", action="store_true")
    parser.add_argument("--watch-stdin", action="store_true")
    parser.add_argument("--city", action="store_true", help="busy tiles (city_tile_png), for benchmarks")
    options = parser.parse_args()
    draw_tile = city_tile_png if options.city else tile_png

    cond = threading.Condition()
    state = {"settings": dict(DEFAULTS), "requests": [], "max_in_flight": 0, "in_flight": 0,
             "received": 0, "waiting": []}
    tiles = {}

    def pump():
        """Called with cond held: answer the held requests the hold policy lets go."""
        settings, waiting = state["settings"], state["waiting"]
        if settings["total"] and state["received"] >= settings["total"]:
            released, waiting[:] = list(waiting), []
        elif settings["hold"] and len(waiting) >= settings["hold"]:
            released = [waiting.pop(0)]
        else:
            released = []
        for ticket in released:
            ticket["go"] = True
        if released:
            cond.notify_all()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format, *args):
            pass

        def send(self, status, body=b"", content_type="image/png", headers=()):
            send_reply(self, status, body, None if status == 304 else content_type, headers)

        def do_GET(self):
            parts = urlsplit(self.path)
            query = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
            if parts.path == "/_test/requests":
                with cond:
                    body = json.dumps({"requests": state["requests"], "max_in_flight": state["max_in_flight"]})
                self.send(200, body.encode(), "application/json")
                return
            if parts.path == "/_test/configure":
                with cond:
                    for name, value in query.items():
                        state["settings"][name] = value if name in ("garbage", "redirect") else int(value)
                    state["received"] = 0
                self.send(200, b"{}", "application/json")
                return
            if parts.path == "/_test/reset":
                with cond:
                    state.update(settings=dict(DEFAULTS), requests=[], max_in_flight=0, received=0)
                self.send(200, b"{}", "application/json")
                return
            self.serve_image(parts.path, query)

        def serve_image(self, path, query):
            ticket = {"go": False}
            with cond:
                settings = dict(state["settings"])
                state["in_flight"] += 1
                state["received"] += 1
                state["max_in_flight"] = max(state["max_in_flight"], state["in_flight"])
                record = {"path": path, "query": query, "headers": dict(self.headers.items()),
                          "in_flight": state["in_flight"], "status": None}
                state["requests"].append(record)
                if settings["hold"] or settings["total"]:
                    state["waiting"].append(ticket)
                    pump()
                    # The limit only keeps a broken client's test from hanging forever.
                    cond.wait_for(lambda: ticket["go"], timeout=30)
                    if ticket in state["waiting"]:
                        state["waiting"].remove(ticket)
                # Counted out before the answer leaves, so the client's next request (sent once
                # this answer arrived) can never find this one still counted.
                state["in_flight"] -= 1
                pump()
            status, body, headers = self.answer(path, settings, query)
            with cond:
                record["status"] = status
            self.send(status, body, "image/png" if status in (200, 304) and not settings["garbage"] else "text/html", headers)

        def answer(self, path, settings, query):
            cache = [("Cache-Control", f"max-age={settings['max_age']}")]
            redirect = settings["redirect"]
            if redirect == "away":
                return 302, b"", [("Location", "http://198.51.100.7" + path)]
            if redirect.startswith("port:"):
                # Another origin on this machine (another port on 127.0.0.1): a client must not go.
                return 302, b"", [("Location", f"http://127.0.0.1:{int(redirect[5:])}" + path)]
            if redirect == "loop" or (redirect == "once" and not path.startswith("/moved/")):
                return 302, b"", [("Location", "/moved" + path)]
            path = path.removeprefix("/moved")
            if settings["status"]:
                return settings["status"], b"<html><body>tile server error</body></html>", []
            if settings["garbage"] in HOSTILE:
                return 200, HOSTILE[settings["garbage"]](), cache
            if path == "/static":
                png = static_png()
                return 200, png, cache
            pieces = path.strip("/").removesuffix(".png").split("/")
            try:
                z, x, y = (int(p) for p in pieces)
                if not (0 <= z <= 19 and 0 <= x < 2 ** z and 0 <= y < 2 ** z):
                    raise ValueError
            except ValueError:
                return 404, b"<html><body>no such tile</body></html>", []
            if settings["garbage"] == "html":
                return 200, b"<html><body>Service temporarily replaced by this page</body></html>", cache
            edition = settings["edition"]
            if (z, x, y, edition) not in tiles:
                tiles[(z, x, y, edition)] = draw_tile(z, x, y, edition)
            png = tiles[(z, x, y, edition)]
            if settings["garbage"] == "truncated":
                return 200, png[: len(png) // 2], cache
            if settings["garbage"] == "empty":
                return 200, b"", cache
            etag = f'"t-{z}-{x}-{y}-e{edition}"' if edition else f'"t-{z}-{x}-{y}"'
            validators = [("ETag", etag), ("Last-Modified", LAST_MODIFIED)]
            if self.headers.get("If-None-Match") == etag:
                return 304, b"", cache + validators
            return 200, png, cache + validators

    unblock_signals()
    server = QuietServer(("127.0.0.1", options.port), Handler)
    if options.watch_stdin:
        exit_when_stdin_closes()
    print(f"PORT={server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
