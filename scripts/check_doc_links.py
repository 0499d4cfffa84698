#!/usr/bin/env python3
"""Checks the links of README.md, CONTRIBUTING.md, BENCHMARKS.md and the guide.

    scripts/check_doc_links.py

Every relative link must name a file that exists, and every `#anchor` a
heading of that file (anchors as GitHub and mdBook make them: lower case,
spaces to hyphens, punctuation dropped). A guide chapter that only
`{{#include}}`s another file is checked against that file's headings. So a
figure's link to the section that measures it cannot point at a section
that was renamed. CI (.ci/run) runs it; it takes well under a second.
Python 3 standard library only.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LINK = re.compile(r"\]\(([^)\s]+)\)")
INCLUDE = re.compile(r"^\{\{#include ([^}]+)\}\}\s*$")
FENCE = re.compile(r"^(```|~~~)")


def real(path):
    """The file a chapter stands for: the one it includes, if that is all it holds."""
    with open(path) as f:
        text = f.read().strip()
    m = INCLUDE.match(text)
    return os.path.normpath(os.path.join(os.path.dirname(path), m.group(1))) if m else path


def lines_outside_code(path):
    inside = False
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if FENCE.match(line.strip()):
                inside = not inside
            elif not inside:
                yield n, line


def anchor(heading):
    h = heading.strip().lower()
    h = re.sub(r"[^\w\- ]", "", h)
    return h.replace(" ", "-")


def anchors(path):
    out = set()
    for _, line in lines_outside_code(real(path)):
        m = re.match(r"^#{1,6} (.*)$", line)
        if m:
            out.add(anchor(m.group(1)))
    return out


def files():
    yield os.path.join(ROOT, "README.md")
    yield os.path.join(ROOT, "CONTRIBUTING.md")
    yield os.path.join(ROOT, "BENCHMARKS.md")
    yield os.path.join(ROOT, "docs", "history.md")
    for d, _, names in os.walk(os.path.join(ROOT, "docs", "guide", "src")):
        for n in sorted(names):
            if n.endswith(".md"):
                yield os.path.join(d, n)


def main():
    bad = []
    for path in files():
        src = real(path)
        for n, line in lines_outside_code(src):
            for target in LINK.findall(line):
                if re.match(r"^[a-z]+:", target):
                    continue
                file, _, frag = target.partition("#")
                # A link inside an included file resolves from the chapter that includes it.
                base = os.path.dirname(path if file.endswith(".md") and src != path
                                       and os.path.exists(os.path.join(os.path.dirname(path), file))
                                       else src)
                dest = os.path.normpath(os.path.join(base, file)) if file else src
                where = f"{os.path.relpath(src, ROOT)}:{n}"
                if not os.path.exists(dest):
                    bad.append(f"{where}: {target}: no such file")
                elif frag and dest.endswith(".md") and frag not in anchors(dest):
                    bad.append(f"{where}: {target}: no heading #{frag} in {os.path.relpath(real(dest), ROOT)}")
    if bad:
        sys.exit("broken links:\n" + "\n".join(bad))
    print("every link of README.md, CONTRIBUTING.md, BENCHMARKS.md, docs/history.md and the guide resolves")


if __name__ == "__main__":
    main()
