#!/bin/bash
# Assembles docs/reproduction-large.md from experiments run one by one at
# `--scale large` (what `sievedb experiment all --scale large` writes in one
# go): each experiment's summary, its heading one level down and its links
# pointing into docs/reproduction-large/, where its CSV and SVG plots are
# copied.
#
# Feeds docs/reproduction-large.md (the sections of each experiment). Takes
# seconds; the experiments it gathers take from minutes to over an hour each.
#
#   scripts/reproduction-large.sh DOCS_DIR EXPERIMENT_OUT_DIR...
#
# Each EXPERIMENT_OUT_DIR is the --out of one `sievedb experiment NAME
# --scale large` run (NAME.md, NAME.csv, *.svg). The document's preamble is
# kept if it exists (everything before the first "## " heading), else a
# short one is written.
set -euo pipefail
if [ $# -lt 2 ]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit 2
fi
docs=$1; shift
mkdir -p "$docs/reproduction-large"
python3 - "$docs" "$@" <<'PY'
import os, re, shutil, sys
docs, outs = sys.argv[1], sys.argv[2:]
doc = os.path.join(docs, "reproduction-large.md")
pre = ("# The papers at their own scale (`--scale large`)\n\n"
       "Experiments of [reproduction.md](reproduction.md) on the papers' tree shapes, "
       "values shrunk to fit this machine; each section is one run, with its command and time.\n\n")
if os.path.exists(doc):
    text = open(doc).read()
    i = text.find("\n## ")
    pre = text[: i + 1] if i >= 0 else text
md = [pre.rstrip("\n") + "\n"]
for out in outs:
    names = [f[:-3] for f in os.listdir(out) if f.endswith(".md")]
    if len(names) != 1:
        sys.exit(f"{out}: expected one summary .md, found {names}")
    name = names[0]
    body = open(os.path.join(out, name + ".md")).read()
    body = re.sub(r"^# ", "## ", body, count=1, flags=re.M)
    body = re.sub(r"\]\((?!https?:|#)([^)]+)\)", r"](reproduction-large/\1)", body)
    md.append("\n" + body.rstrip("\n") + "\n")
    for f in os.listdir(out):
        if f.endswith((".csv", ".svg")):
            shutil.copy(os.path.join(out, f), os.path.join(docs, "reproduction-large", f))
open(doc, "w").write("".join(md))
print(f"wrote {doc}")
PY
