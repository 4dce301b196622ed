# The probe files each generated schema is recorded over (tools/gen-schemas.sh and
# testbench/schema/check_file_schemas.py read this list; paths relative to the repository).
# Between them they must open every optional block of their format.
scenario_probes=(traces/*.json traces/bench/*.json testbench/fuzz/corpus/scenario/*.json)
model_config_probes=(traces/models/*.json)
join_input_probes=(traces/join/*.json)
