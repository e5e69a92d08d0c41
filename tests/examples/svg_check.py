"""Checks the demo's picture: well-formed XML, an <svg> root, the five panels (solver, surrogate, difference,
persistence, loss) each drawing something, a loss curve with at least MIN_POINTS points, and the restart marked
on it (the demo always restarts once).

Usage: python3 svg_check.py SVG MIN_POINTS   (exit 0 and "svg ok ..." when it passes, else exit 1 naming why)
"""
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"
PANELS = ("solver", "surrogate", "difference", "persistence", "loss")


def main(path, min_points):
    root = ET.parse(path).getroot()  # raises on malformed XML
    if root.tag != NS + "svg":
        return f"root element is {root.tag}, not svg"
    groups = {g.get("id"): g for g in root.iter(NS + "g")}
    for panel in PANELS:
        if panel not in groups:
            return f"no <g id=\"{panel}\"> panel"
    for panel in PANELS[:4]:
        cells = sum(p.get("d", "").count("M") for p in groups[panel].iter(NS + "path"))
        if cells == 0:
            return f"heat map {panel} draws no cells"
    lines = list(groups["loss"].iter(NS + "polyline"))
    points = len(lines[0].get("points", "").split()) if lines else 0
    if points < min_points:
        return f"loss curve has {points} points, expected at least {min_points}"
    if next(groups["loss"].iter(NS + "line"), None) is None:
        return "the loss panel does not mark the restart"
    print(f"svg ok: {len(PANELS)} panels, loss curve of {points} points")
    return None


if __name__ == "__main__":
    problem = main(sys.argv[1], int(sys.argv[2]))
    if problem:
        print("svg check failed: " + problem)
        sys.exit(1)
