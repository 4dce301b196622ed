#!/usr/bin/env bash
# Writes the JSON Schemas of the input formats to docs/schema/ (docs/schema/README.md):
#   hw_config.schema.json     from the hardware parameter table (tools/gen-hw-config.sh writes it)
#   scenario.schema.json      from the scenario parser's reads over every shipped scenario and the
#                             fuzz seeds (which open every optional block between them)
#   model_config.schema.json  from the model-config parser's reads over traces/models/
#   join_input.schema.json    from the join-input parser's reads over traces/join/
#   serve_workload.schema.json  from the serve-workload parser's reads over traces/serve/
#   summary.schema.json, serve_summary.schema.json  from the summary.json files `run` and `serve`
#                             write over the probe runs (tools/summary_schema.py)
# Run it after changing a parser or what summary.json holds; CTest's FileSchemas check fails until the files match.
#   usage: tools/gen-schemas.sh [AHBM_SIM=build/bin/ahbm-sim [OUT_DIR=docs/schema]]
# (the summary-schema check writes into a temporary OUT_DIR and compares)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
sim="$(realpath -m "${1:-$root/build/bin/ahbm-sim}")"
out_dir="$(realpath -m "${2:-$root/docs/schema}")"
[ -x "$sim" ] || { echo "gen-schemas: $sim not found; build the ahbm-sim target first" >&2; exit 2; }
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1
cd "$root"  # probes name files relative to the repository (model configs under traces/)
# The probe lists: one place, read by the check too (testbench/schema/check_file_schemas.py).
# shellcheck source=/dev/null
source "$root/docs/schema/probes.sh"
mkdir -p "$out_dir"
write() {  # format, output, probes...
  local format=$1 out=$2
  shift 2
  "$sim" schema "$format" "$@" >"$out.tmp"
  mv "$out.tmp" "$out"
}
write scenario "$out_dir/scenario.schema.json" "${scenario_probes[@]}"
write model-config "$out_dir/model_config.schema.json" "${model_config_probes[@]}"
write join-input "$out_dir/join_input.schema.json" "${join_input_probes[@]}"
write serve-workload "$out_dir/serve_workload.schema.json" "${serve_workload_probes[@]}"
# summary.json of `run` and of `serve`: recorded from the writer's output over the probe runs
# (tools/summary_schema.py says what is declared beside the recording).
runs="$(mktemp -d)"
trap 'rm -rf "$runs"' EXIT
record_summaries() {  # format (run|serve), output, probe argument strings...
  local format=$1 out=$2 i=0 dirs=()
  shift 2
  for args in "$@"; do
    i=$((i + 1))
    local extra=()
    [ "$format" = run ] && extra=(--no-vcd --trace summary)
    # shellcheck disable=SC2086  # each probe is a whitespace-separated argument list
    "$sim" "$format" $args "${extra[@]}" --out "$runs/$format$i" >/dev/null ||
      { echo "gen-schemas: probe failed: ahbm-sim $format $args" >&2; exit 2; }
    dirs+=("$runs/$format$i")
  done
  /usr/bin/python3 "$root/tools/summary_schema.py" "$format" "${dirs[@]}" >"$out.tmp"
  mv "$out.tmp" "$out"
}
record_summaries run "$out_dir/summary.schema.json" "${summary_run_probes[@]}"
record_summaries serve "$out_dir/serve_summary.schema.json" "${serve_summary_probes[@]}"
echo "gen-schemas: wrote $out_dir/{scenario,model_config,join_input,serve_workload,summary,serve_summary}.schema.json" >&2
