#!/usr/bin/env python3
"""PNG tiles of every kind a tile server may send, written by pypng (not libpng), and the check
of a canvas they were drawn on (read by Pillow).

  png_kinds.py write DIR [SIDE]
      writes DIR/<kind>.png, 256x256 each (SIDE x SIDE when given, as the fuzzer's small seeds):
      palette (with and without tRNS), grey at 1, 8 and 16 bits, grey+alpha, RGB and RGBA at 8
      and 16 bits, and interlaced (Adam7) RGB and palette
  png_kinds.py compare TILE CANVAS X Y
      CANVAS (an RGB PNG) must show TILE with its top-left corner at (X, Y) over the canvas's
      background (the colour of CANVAS's pixel (0, 0), which the tile must not cover), clipped
      to the canvas, blended by its alpha; prints {"max_difference": n, "pixels": m} (the tile
      read by pypng, the canvas by Pillow)
"""
import json
import sys

import png
from PIL import Image

SIDE = 256


def pattern(x, y, side=SIDE):
    """Smooth ramps, sharp edges and single-pixel detail, so every row filter and palette entry is used."""
    red = (x * 255) // max(side - 1, 1)
    green = (y * 255) // max(side - 1, 1)
    blue = ((x // 16 + y // 16) % 2) * 200 + (x * y) % 55
    alpha = 255 if x < 64 else (0 if x < 80 else (x + 3 * y) % 256)
    return red, green, blue, alpha


def write(directory, side=SIDE):
    rows8 = [[pattern(x, y, side) for x in range(side)] for y in range(side)]

    def save(name, rows, **options):
        with open(f"{directory}/{name}.png", "wb") as out:
            png.Writer(side, side, **options).write(out, rows)

    flat = lambda pixel_rows, channels: [[v for pixel in row for v in pixel[:channels]] for row in pixel_rows]
    rgb = flat(rows8, 3)
    rgba = flat(rows8, 4)
    grey = [[(p[0] + p[1] + p[2]) // 3 for p in row] for row in rows8]
    save("rgb8", rgb, greyscale=False, bitdepth=8)
    save("rgba8", rgba, greyscale=False, alpha=True, bitdepth=8)
    save("rgb16", [[v * 257 for v in row] for row in rgb], greyscale=False, bitdepth=16)
    save("rgba16", [[v * 257 for v in row] for row in rgba], greyscale=False, alpha=True, bitdepth=16)
    save("grey8", grey, greyscale=True, bitdepth=8)
    save("grey16", [[v * 257 for v in row] for row in grey], greyscale=True, bitdepth=16)
    save("grey1", [[1 if v > 127 else 0 for v in row] for row in grey], greyscale=True, bitdepth=1)
    save("greyalpha8", [[v for p, g in zip(r8, gr) for v in (g, p[3])] for r8, gr in zip(rows8, grey)],
         greyscale=True, alpha=True, bitdepth=8)
    save("rgb8_interlaced", rgb, greyscale=False, bitdepth=8, interlace=True)
    # A palette of 64 colours; with tRNS the first 16 entries are see-through to different degrees.
    palette = [((i * 37) % 256, (i * 91) % 256, (i * 53) % 256) for i in range(64)]
    indices = [[(x // 8 + y // 8 * 3 + (x * y) % 7) % 64 for x in range(side)] for y in range(side)]
    save("palette", indices, palette=palette, bitdepth=8)
    save("palette_trns", indices, palette=[c + ((i * 16) % 256 if i < 16 else 255,) for i, c in enumerate(palette)],
         bitdepth=8)
    save("palette_interlaced", indices, palette=palette, bitdepth=8, interlace=True)


def compare(tile_path, canvas_path, left, top):
    # The tile read by pypng (scaled to 8-bit RGBA the PNG way), the canvas by Pillow.
    _, _, rows, _ = png.Reader(filename=tile_path).asRGBA8()
    tile = [list(row) for row in rows]
    canvas = Image.open(canvas_path).convert("RGB")
    background = canvas.getpixel((0, 0))
    worst, count = 0, 0
    for y in range(canvas.height):
        for x in range(canvas.width):
            expected = background
            tx, ty = x - left, y - top
            if 0 <= tx < SIDE and 0 <= ty < SIDE:
                r, g, b, a = tile[ty][4 * tx:4 * tx + 4]
                expected = tuple((c * a + under * (255 - a) + 127) // 255 for c, under in zip((r, g, b), background))
            got = canvas.getpixel((x, y))
            worst = max(worst, *(abs(e - o) for e, o in zip(expected, got)))
            count += 1
    print(json.dumps({"max_difference": worst, "pixels": count}))


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2], *(int(side) for side in sys.argv[3:4]))
    else:
        compare(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
