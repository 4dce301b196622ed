#!/usr/bin/env bash
# Writes the checked-in artefacts generated from the hardware parameter table
# (hw/common/config/hw_config.h): hw/configs/default.json, docs/schema/hw_config.schema.json and the
# parameter table of docs/model.md (between its BEGIN/END markers). Run it after adding or
# changing a parameter; the unit tests (HwConfigTable.*) fail until the files match.
#   usage: tools/gen-hw-config.sh [AHBM_SIM=build/bin/ahbm-sim]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
sim="${1:-$root/build/bin/ahbm-sim}"
[ -x "$sim" ] || { echo "gen-hw-config: $sim not found; build the ahbm-sim target first" >&2; exit 2; }
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1

"$sim" hw-config >"$root/hw/configs/default.json"
mkdir -p "$root/docs/schema"
"$sim" hw-config --schema >"$root/docs/schema/hw_config.schema.json"

# Replace the lines between the markers of docs/model.md with the generated table.
table="$(mktemp)"
trap 'rm -f "$table"' EXIT
"$sim" hw-config --markdown-table >"$table"
doc="$root/docs/model.md"
grep -q '^<!-- BEGIN hw-config table' "$doc" && grep -q '^<!-- END hw-config table' "$doc" ||
  { echo "gen-hw-config: $doc lacks the BEGIN/END hw-config table markers" >&2; exit 1; }
awk -v table="$table" '
  /^<!-- BEGIN hw-config table/ { print; while ((getline line < table) > 0) print line; skip = 1; next }
  /^<!-- END hw-config table/ { skip = 0 }
  !skip { print }
' "$doc" >"$doc.tmp"
mv "$doc.tmp" "$doc"
echo "gen-hw-config: wrote hw/configs/default.json, docs/schema/hw_config.schema.json, docs/model.md table" >&2
