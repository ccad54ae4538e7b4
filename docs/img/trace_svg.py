#!/usr/bin/env python3
"""trace_svg.py - draw a fusetile Chrome trace (fusetile simulate --trace) as an SVG timeline.

usage: docs/img/trace_svg.py TRACE.json OUT.svg [TITLE]

One row per thread of the trace, in its thread_sort_index order (subgraphs,
controller steps, slow-memory channel, compute engine), one box per span
("X" event), coloured by category, labelled where the box is wide enough;
a time axis in the trace's units (otherData.time_unit).  Only the Python
standard library; the same trace gives the same bytes.  The README's
picture is

    docs/img/trace_svg.py traces/E-mlp-fused.json docs/img/E-mlp-fused.svg \\
        'fusetile simulate: a fused MLP (traces/E-mlp-fused.json)'
"""
import json
import sys
from xml.sax.saxutils import escape

COLOURS = {"subgraph": "#7b61a8", "step": "#9a9a9a", "load": "#3b78c2",
           "write": "#e08a2c", "compute": "#3f9e4d"}
LEFT, RIGHT, TOP, ROW, GAP, CHAR = 150, 20, 44, 26, 8, 6.2


def num(x):
    """Shortest text for a coordinate: at most two decimals."""
    return ("%.2f" % x).rstrip("0").rstrip(".")


def main(argv):
    if len(argv) not in (3, 4):
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        return 2
    with open(argv[1]) as f:
        trace = json.load(f)
    events = trace["traceEvents"]
    names, order = {}, {}
    for e in events:
        if e["ph"] == "M" and e["name"] == "thread_name":
            names[e["tid"]] = e["args"]["name"]
        elif e["ph"] == "M" and e["name"] == "thread_sort_index":
            order[e["tid"]] = e["args"]["sort_index"]
    tids = sorted(names, key=lambda t: (order.get(t, 0), t))
    spans = [e for e in events if e["ph"] == "X"]
    end = max(e["ts"] + e["dur"] for e in spans)
    width = 900
    scale = (width - LEFT - RIGHT) / end
    height = TOP + len(tids) * (ROW + GAP) + 40
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">'
           % (width, height, width, height),
           '<rect width="100%" height="100%" fill="white"/>']
    title = argv[3] if len(argv) == 4 else argv[1]
    out.append('<text x="%d" y="20" font-size="13" font-weight="bold">%s</text>'
               % (LEFT, escape(title)))
    for row, tid in enumerate(tids):
        y = TOP + row * (ROW + GAP)
        out.append('<text x="%d" y="%s" text-anchor="end">%s</text>'
                   % (LEFT - 8, num(y + ROW / 2 + 4), escape(names[tid])))
        out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="#f3f3f3"/>'
                   % (LEFT, y, width - LEFT - RIGHT, ROW))
        for e in (s for s in spans if s.get("tid") == tid):
            x, w = LEFT + e["ts"] * scale, e["dur"] * scale
            colour = COLOURS.get(e.get("cat"), "#555555")
            out.append('<rect x="%s" y="%d" width="%s" height="%d" fill="%s" '
                       'stroke="white" stroke-width="0.5"><title>%s</title></rect>'
                       % (num(x), y, num(w), ROW, colour, escape(e["name"])))
            label = e["name"]
            if e.get("cat") == "step":
                label = label.split(" ")[1] if len(label.split(" ")) > 1 else label
            elif e.get("cat") == "compute":
                label = "k " + label.rsplit(" ", 1)[-1]
            if len(label) * CHAR + 4 <= w:
                out.append('<text x="%s" y="%s" text-anchor="middle" fill="white">%s</text>'
                           % (num(x + w / 2), num(y + ROW / 2 + 4), escape(label)))
    axis = TOP + len(tids) * (ROW + GAP)
    out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>'
               % (LEFT, axis, width - RIGHT, axis))
    step = 10 ** len(str(int(end / 5))) / 10
    while end / step > 10:
        step *= 2
    t = 0.0
    while t <= end + 1e-9:
        x = LEFT + t * scale
        out.append('<line x1="%s" y1="%d" x2="%s" y2="%d" stroke="black"/>'
                   % (num(x), axis, num(x), axis + 4))
        out.append('<text x="%s" y="%d" text-anchor="middle">%s</text>'
                   % (num(x), axis + 16, num(t)))
        t += step
    unit = trace.get("otherData", {}).get("time_unit", "us")
    out.append('<text x="%d" y="%d" text-anchor="end">time (%s)</text>'
               % (width - RIGHT, axis + 32, escape(unit)))
    legend = LEFT
    for cat in ("load", "write", "compute"):
        out.append('<rect x="%d" y="%d" width="10" height="10" fill="%s"/>'
                   % (legend, axis + 23, COLOURS[cat]))
        out.append('<text x="%d" y="%d">%s</text>' % (legend + 14, axis + 32, cat))
        legend += 80
    out.append("</svg>")
    with open(argv[2], "w") as f:
        f.write("\n".join(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
