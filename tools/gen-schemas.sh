#!/usr/bin/env bash
# Writes the JSON Schemas of the input formats to docs/schema/ (docs/schema/README.md):
#   hw_config.schema.json     from the hardware parameter table (tools/gen-hw-config.sh writes it)
#   scenario.schema.json      from the scenario parser's reads over every shipped scenario and the
#                             fuzz seeds (which open every optional block between them)
#   model_config.schema.json  from the model-config parser's reads over traces/models/
#   join_input.schema.json    from the join-input parser's reads over traces/join/
#   serve_workload.schema.json  from the serve-workload parser's reads over traces/serve/
# Run it after changing a parser; CTest's FileSchemas check fails until the files match.
#   usage: tools/gen-schemas.sh [AHBM_SIM=build/bin/ahbm-sim]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
sim="${1:-$root/build/bin/ahbm-sim}"
[ -x "$sim" ] || { echo "gen-schemas: $sim not found; build the ahbm-sim target first" >&2; exit 2; }
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1
cd "$root"  # probes name files relative to the repository (model configs under traces/)
# The probe lists: one place, read by the check too (testbench/schema/check_file_schemas.py).
# shellcheck source=/dev/null
source "$root/docs/schema/probes.sh"
mkdir -p docs/schema
write() {  # format, output, probes...
  local format=$1 out=$2
  shift 2
  "$sim" schema "$format" "$@" >"$out.tmp"
  mv "$out.tmp" "$out"
}
write scenario docs/schema/scenario.schema.json "${scenario_probes[@]}"
write model-config docs/schema/model_config.schema.json "${model_config_probes[@]}"
write join-input docs/schema/join_input.schema.json "${join_input_probes[@]}"
write serve-workload docs/schema/serve_workload.schema.json "${serve_workload_probes[@]}"
echo "gen-schemas: wrote docs/schema/{scenario,model_config,join_input,serve_workload}.schema.json" >&2
