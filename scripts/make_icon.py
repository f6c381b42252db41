#!/usr/bin/env python3
"""Draw the plugin's icon, .claude-plugin/icon.png: an eight-seat bracket closing on a
gold champion, one path lit from the first round to the final.

Standard library only (zlib + struct write the PNG). Every shape is a signed distance
field, so edges are anti-aliased without supersampling and the output is the same on
every machine. Run from anywhere: `python3 scripts/make_icon.py [OUT.png]`.
"""

import math
import os
import struct
import sys
import zlib

SIZE = 512
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUT = os.path.join(ROOT, ".claude-plugin", "icon.png")

TOP = (38, 34, 78)          # background, top of the gradient
BOTTOM = (18, 20, 40)       # background, bottom
LINE = (196, 200, 228)      # bracket lines
DIM = (120, 124, 168)       # the seats that lost
GOLD = (246, 186, 52)       # the winner's path and the champion
WHITE = (255, 248, 226)

STROKE = 15
CORNER = 104                # rounding of the icon's own square


def segment(ax, ay, bx, by, width):
    """Distance field of a capsule from (ax, ay) to (bx, by)."""
    def sdf(x, y):
        dx, dy = bx - ax, by - ay
        t = ((x - ax) * dx + (y - ay) * dy) / float(dx * dx + dy * dy)
        t = min(1.0, max(0.0, t))
        return math.hypot(x - ax - t * dx, y - ay - t * dy) - width / 2.0
    pad = width / 2.0 + 1
    return sdf, (min(ax, bx) - pad, min(ay, by) - pad, max(ax, bx) + pad, max(ay, by) + pad)


def disc(cx, cy, r):
    def sdf(x, y):
        return math.hypot(x - cx, y - cy) - r
    return sdf, (cx - r - 1, cy - r - 1, cx + r + 1, cy + r + 1)


def ring(cx, cy, r, width):
    def sdf(x, y):
        return abs(math.hypot(x - cx, y - cy) - r) - width / 2.0
    pad = r + width / 2.0 + 1
    return sdf, (cx - pad, cy - pad, cx + pad, cy + pad)


def star(cx, cy, outer, inner, points=5):
    """A filled star: inside when the point lies within the polygon of its tips."""
    corners = []
    for k in range(points * 2):
        r = outer if k % 2 == 0 else inner
        a = -math.pi / 2 + k * math.pi / points
        corners.append((cx + r * math.cos(a), cy + r * math.sin(a)))

    def sdf(x, y):
        inside, dist = False, float("inf")
        for i in range(len(corners)):
            (x1, y1), (x2, y2) = corners[i], corners[i - 1]
            if (y1 > y) != (y2 > y) and x < (x2 - x1) * (y - y1) / (y2 - y1) + x1:
                inside = not inside
            dx, dy = x2 - x1, y2 - y1
            t = min(1.0, max(0.0, ((x - x1) * dx + (y - y1) * dy) / (dx * dx + dy * dy)))
            dist = min(dist, math.hypot(x - x1 - t * dx, y - y1 - t * dy))
        return -dist if inside else dist
    return sdf, (cx - outer - 1, cy - outer - 1, cx + outer + 1, cy + outer + 1)


def bracket_half(side):
    """Lines and seats of one half (side -1: left, +1: right), mirrored about x = 256."""
    def x(v):
        return SIZE / 2.0 + side * (SIZE / 2.0 - v)
    seats = (150, 214, 298, 362)
    lines, dots = [], []
    for y in seats:
        lines.append(((x(104), y), (x(156), y)))
        dots.append((x(96), y))
    for top, bottom in ((seats[0], seats[1]), (seats[2], seats[3])):
        mid = (top + bottom) / 2.0
        lines.append(((x(156), top), (x(156), bottom)))
        lines.append(((x(156), mid), (x(204), mid)))
    lines.append(((x(204), 182), (x(204), 330)))
    lines.append(((x(204), 256), (x(222), 256)))
    return lines, dots


def scene():
    """(shape, colour) from back to front."""
    shapes = []
    for side in (-1, 1):
        lines, dots = bracket_half(side)
        for (ax, ay), (bx, by) in lines:
            shapes.append((segment(ax, ay, bx, by, STROKE), LINE))
        for cx, cy in dots:
            shapes.append((disc(cx, cy, 13), DIM))
    # The champion's path: second seat on the left, through both of its rounds, into the final.
    gold_path = [((104, 214), (156, 214)), ((156, 214), (156, 182)), ((156, 182), (204, 182)),
                 ((204, 182), (204, 256)), ((204, 256), (222, 256))]
    for (ax, ay), (bx, by) in gold_path:
        shapes.append((segment(ax, ay, bx, by, STROKE + 3), GOLD))
    shapes.append((disc(96, 214, 16), GOLD))
    shapes.append((disc(256, 256, 46), GOLD))
    shapes.append((ring(256, 256, 34, 5), WHITE))
    shapes.append((star(256, 256, 22, 9), WHITE))
    return shapes


def background(x, y):
    """The rounded square with a vertical gradient; transparent outside the corners."""
    t = y / float(SIZE - 1)
    colour = tuple(TOP[i] + (BOTTOM[i] - TOP[i]) * t for i in range(3))
    half = SIZE / 2.0
    qx, qy = abs(x - half + 0.5) - (half - CORNER), abs(y - half + 0.5) - (half - CORNER)
    outside = math.hypot(max(qx, 0.0), max(qy, 0.0)) + min(max(qx, qy), 0.0) - CORNER
    return colour, coverage(outside)


def coverage(distance):
    """How much of a pixel a shape covers, from the distance of the pixel's centre to its edge."""
    return min(1.0, max(0.0, 0.5 - distance))


def render():
    pixels = []
    for y in range(SIZE):
        row = []
        for x in range(SIZE):
            colour, alpha = background(x, y)
            row.append([colour[0], colour[1], colour[2], alpha])
        pixels.append(row)
    for (sdf, (x0, y0, x1, y1)), colour in scene():
        for y in range(max(0, int(y0)), min(SIZE, int(math.ceil(y1)) + 1)):
            row = pixels[y]
            for x in range(max(0, int(x0)), min(SIZE, int(math.ceil(x1)) + 1)):
                a = coverage(sdf(x + 0.5, y + 0.5))
                if a > 0:
                    p = row[x]
                    for i in range(3):
                        p[i] = p[i] * (1 - a) + colour[i] * a
    return pixels


def png_bytes(pixels):
    raw = bytearray()
    for row in pixels:
        raw.append(0)  # filter type: none
        for r, g, b, a in row:
            raw.extend((int(round(r)), int(round(g)), int(round(b)), int(round(a * 255))))

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)
    height, width = len(pixels), len(pixels[0])
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)  # 8-bit RGBA
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(bytes(raw), 9))
            + chunk(b"IEND", b""))


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    out = argv[0] if argv else DEFAULT_OUT
    with open(out, "wb") as f:
        f.write(png_bytes(render()))
    print(out)


if __name__ == "__main__":
    main()
