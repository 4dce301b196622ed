#!/usr/bin/env bash
# The numbers quoted in README.md and docs/ (tools/docs-numbers): they match a fresh run of this
# build (and the build's source counts, the CLI's NoC registry, the Python module, the notebook),
# the GTKWave screenshot shows the current default run, and on a copy of the docs a number edited
# by hand, a list edited by hand and a screenshot of another run are refused.
#   docs_numbers_test.sh SOURCE_DIR AHBM_SIM [docs-numbers options: --python DIR]
set -euo pipefail
src=$1 cli=$2
shift 2
/usr/bin/python3 "$src/tools/docs-numbers" --cli "$cli" "$@"
work=$(mktemp -d "${TMPDIR:-/tmp}/ahbm-docs-numbers.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp "$src/README.md" "$work/"
cp -r "$src/docs" "$work/docs"
# Edit the first quoted total by hand.
/usr/bin/python3 - "$work/docs/outputs.md" <<'PY'
import re, sys
p = sys.argv[1]
s = open(p, encoding="utf-8").read()
s, n = re.subn(r"(<!--n:default\.total_us-->)[^<]*(<!--/n-->)", r"\g<1>91.7\g<2>", s, count=1)
assert n == 1, "docs/outputs.md quotes default.total_us no more"
open(p, "w", encoding="utf-8").write(s)
p = p.replace("docs/outputs.md", "README.md")
s = open(p, encoding="utf-8").read()
s, n = re.subn(r"(<!--n:nocs\.models-->)[^<]*(<!--/n-->)", r"\g<1>`ideal`, `mesh`\g<2>", s, count=1)
assert n == 1, "README.md lists the NoC models (nocs.models) no more"
open(p, "w", encoding="utf-8").write(s)
PY
# A screenshot of another run: any PNG without the recorded run.
cp "$src/docs/img/sweep.png" "$work/docs/img/gtkwave-default.png"
set +e
/usr/bin/python3 "$src/tools/docs-numbers" --cli "$cli" --root "$work" "$@" 2>"$work/err"
rc=$?
set -e
[ "$rc" = 1 ] || { echo "docs_numbers_test: the hand-edited number gave exit $rc, not 1" >&2; cat "$work/err" >&2; exit 1; }
grep -q "docs/outputs.md:[0-9]*: default.total_us is [0-9.]*, the doc says 91.7" "$work/err" ||
  { echo "docs_numbers_test: no message naming the edited number" >&2; cat "$work/err" >&2; exit 1; }
grep -q "README.md:[0-9]*: nocs.models is .*, the doc says \`ideal\`, \`mesh\`$" "$work/err" ||
  { echo "docs_numbers_test: no message naming the edited NoC list" >&2; cat "$work/err" >&2; exit 1; }
grep -q "docs/img/gtkwave-default.png: shows \"None\", a fresh run is" "$work/err" ||
  { echo "docs_numbers_test: no message naming the stale screenshot" >&2; cat "$work/err" >&2; exit 1; }
echo "docs_numbers_test: ok"
