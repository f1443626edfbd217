#!/usr/bin/env python3
"""Writes a reproducible corpus of ENML notes for bench/validate.

KIND `mixed` (the default): varied notes of 1 KB to 200 KB. KIND `links`: notes full of links,
tables of 12 to 60 KB with an `<a href>` in every row (web links with queries, percent-escapes
and non-ASCII paths, mail and phone links, same-note fragments), where the rules beyond the DTD
have the most to check. Most notes are valid; about one in twenty carries a DTD or ENML-rule
error, so both tools walk their error paths too.
Usage: generate_notes.py OUT_DIR [COUNT] [SEED] [KIND]
"""
import os
import random
import sys

HEADER = ('<?xml version="1.0" encoding="UTF-8"?>\n'
          '<!DOCTYPE en-note SYSTEM "http://xml.evernote.com/pub/enml2.dtd">\n')
WORDS = ("location diary morning station caf&eacute; r&eacute;sum&eacute; &nbsp; 東京 駅 日本語 "
         "Stra&szlig;e &mdash; &euro; north south bridge river 😀 park &amp; walk").split()


def sentence(rng):
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 25)))


def block(rng, index):
    kind = rng.randrange(9)
    lat, lon = rng.uniform(-90, 90), rng.uniform(-180, 180)
    if kind == 0:
        return f'<p>{sentence(rng)}</p>'
    if kind == 1:
        items = "".join(f"<li>{sentence(rng)}</li>" for _ in range(rng.randint(2, 6)))
        return f"<ul>{items}</ul>"
    if kind == 2:
        rows = "".join(f"<tr><td>{i}</td><td>{sentence(rng)}</td></tr>" for i in range(rng.randint(2, 8)))
        return f'<table border="1"><thead><tr><th>n</th><th>text</th></tr></thead><tbody>{rows}</tbody></table>'
    if kind == 3:
        checked = rng.choice(["true", "false"])
        return f'<div><en-todo checked="{checked}"/>{sentence(rng)}</div>'
    if kind == 4:
        digest = "%032x" % rng.getrandbits(128)
        return f'<en-media type="image/png" hash="{digest}" width="500" height="300"/>'
    if kind == 5:
        return (f'<a href="https://www.openstreetmap.org/?mlat={lat:.6f}&amp;mlon={lon:.6f}">'
                f'{sentence(rng)} ({lat:.6f},{lon:.6f})</a><br/>')
    if kind == 6:
        return f'<div style="color:#333"><b>{sentence(rng)}</b> <i>{sentence(rng)}</i></div>'
    if kind == 7:
        return f'<blockquote><pre>{sentence(rng)}\n{sentence(rng)}</pre></blockquote>'
    return f'<h2>Entry {index}</h2><p><span style="font-size:12px">{sentence(rng)}</span></p>'


def faulty(rng):
    return rng.choice([
        '<p id="x">ids are not allowed</p>',
        '<script>alert(1)</script>',
        '<a href="javascript:alert(1)">unsafe</a>',
        '<en-media type="image/png" hash="123"/>',
        '<en-todo checked="yes"/>',
        '<a href="https://example.com/" tabindex="1">focus</a>',
    ])


HOSTS = ("www.openstreetmap.org", "ja.wikipedia.org", "example.com", "maps.example.net:8443",
         "user@files.example.org")
PATHS = ("wiki/東京駅", "wiki/Caf%C3%A9_de_Flore", "search?q=river+walk&amp;lang=en", "a/b/c.html#top",
         "?mlat=35.681236&amp;mlon=139.767125#map=17/35.68124/139.76713", "Stra%C3%9Fe/%E2%82%AC", "")


def link(rng, index, row):
    kind = rng.randrange(10)
    if kind < 6:
        scheme = "https" if kind < 5 else "http"
        return f"{scheme}://{rng.choice(HOSTS)}/{rng.choice(PATHS)}{'&amp;n=%d' % row if kind == 0 else ''}"
    if kind == 6:
        return f"mailto:someone{row}@example.com?subject=Entry%20{index}"
    if kind == 7:
        return f"tel:+81-3-{rng.randrange(1000, 9999)}-{rng.randrange(1000, 9999)}"
    if kind == 8:
        return f"#row-{row}"
    return f"evernote:///view/1/s1/{'%08x' % rng.getrandbits(32)}-{index}/{'%08x' % rng.getrandbits(32)}/"


def link_table(rng, index):
    rows = "".join(
        f'<tr><td>{row}</td><td><a href="{link(rng, index, row)}">{" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 4)))}</a></td>'
        f"<td>{' '.join(rng.choice(WORDS) for _ in range(rng.randint(2, 8)))}</td></tr>"
        for row in range(rng.randint(20, 60)))
    return f'<table border="1"><thead><tr><th>n</th><th>link</th><th>note</th></tr></thead><tbody>{rows}</tbody></table>'


def note(rng, index, kind="mixed"):
    if kind == "links":
        target = rng.randint(12_000, 60_000)
        make = link_table
    else:
        target = int(1024 * (200 ** rng.random()))  # log-uniform between 1 KB and 200 KB
        make = block
    parts, size = [], 0
    while size < target:
        piece = make(rng, index)
        parts.append(piece)
        size += len(piece.encode())
    if rng.random() < 0.05:
        parts.insert(rng.randrange(len(parts) + 1), faulty(rng))
    return HEADER + "<en-note>\n" + "\n".join(parts) + "\n</en-note>\n"


def main():
    out = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 3000
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 2026)
    kind = sys.argv[4] if len(sys.argv) > 4 else "mixed"
    if kind not in ("mixed", "links"):
        sys.exit(f"generate_notes.py: unknown KIND {kind!r} (mixed or links)")
    os.makedirs(out, exist_ok=True)
    total = 0
    for index in range(count):
        text = note(rng, index, kind).encode()
        total += len(text)
        with open(os.path.join(out, f"note-{index:05d}.enml"), "wb") as handle:
            handle.write(text)
    print(f"generated {count} notes, {total / 1e6:.1f} MB, in {out}")


if __name__ == "__main__":
    main()
