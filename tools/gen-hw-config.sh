#!/usr/bin/env bash
# Writes the checked-in artefacts generated from the hardware parameter table
# (hw/common/config/hw_config.h), the NoC models' tables (hw/noc) and the system networks'
# (hw/system): hw/configs/default.json, docs/schema/hw_config.schema.json, the parameter table of
# docs/model.md, the NoC parameter table of docs/noc.md and the system network table of
# docs/system.md (each between its BEGIN/END markers). Run it after adding or changing a
# parameter; the unit tests (HwConfigTable.*, NocParamTable.*) fail until the files match.
#   usage: tools/gen-hw-config.sh [AHBM_SIM=build/bin/ahbm-sim]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
sim="${1:-$root/build/bin/ahbm-sim}"
[ -x "$sim" ] || { echo "gen-hw-config: $sim not found; build the ahbm-sim target first" >&2; exit 2; }
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1

"$sim" hw-config >"$root/hw/configs/default.json"
mkdir -p "$root/docs/schema"
"$sim" hw-config --schema >"$root/docs/schema/hw_config.schema.json"

# Replace the lines between a doc's BEGIN/END markers with a generated table.
table="$(mktemp)"
trap 'rm -f "$table"' EXIT
write_table() {  # write_table DOC MARKER OPTION
  local doc="$root/$1" marker="$2"
  "$sim" hw-config "$3" >"$table"
  grep -q "^<!-- BEGIN $marker" "$doc" && grep -q "^<!-- END $marker" "$doc" ||
    { echo "gen-hw-config: $doc lacks the BEGIN/END $marker markers" >&2; exit 1; }
  awk -v table="$table" -v begin="^<!-- BEGIN $marker" -v end="^<!-- END $marker" '
    $0 ~ begin { print; while ((getline line < table) > 0) print line; close(table); skip = 1; next }
    $0 ~ end { skip = 0 }
    !skip { print }
  ' "$doc" >"$doc.tmp"
  mv "$doc.tmp" "$doc"
}
write_table docs/model.md "hw-config table" --markdown-table
write_table docs/noc.md "noc-params table" --noc-markdown-table
write_table docs/system.md "system-network-params table" --system-markdown-table
echo "gen-hw-config: wrote hw/configs/default.json, docs/schema/hw_config.schema.json, the tables of docs/model.md, docs/noc.md and docs/system.md" >&2
