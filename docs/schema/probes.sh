# The probe files each generated schema is recorded over (tools/gen-schemas.sh and
# testbench/schema/check_file_schemas.py read this list; paths relative to the repository).
# Between them they must open every optional block of their format.
# traces/serve/ holds workloads (they have an "arrival" block) and the scenarios they name.
serve_workload_probes=()
serve_scenarios=()
for f in traces/serve/*.json; do
  if grep -q '"arrival"' "$f"; then serve_workload_probes+=("$f"); else serve_scenarios+=("$f"); fi
done
scenario_probes=(traces/*.json traces/bench/*.json "${serve_scenarios[@]}" testbench/fuzz/corpus/scenario/*.json)
model_config_probes=(traces/models/*.json)
join_input_probes=(traces/join/*.json)
