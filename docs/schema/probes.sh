# The probe files each generated schema is recorded over (tools/gen-schemas.sh and
# testbench/schema/check_file_schemas.py read this list; paths relative to the repository).
# Between them they must open every optional block of their format.
# traces/serve/ holds workloads (they have an "arrival" block) and the scenarios they name;
# traces/production/ workloads (a sampling block).
serve_workload_probes=()
serve_scenarios=()
for f in traces/serve/*.json traces/production/*.json; do
  if grep -q '"arrival"' "$f"; then serve_workload_probes+=("$f"); else serve_scenarios+=("$f"); fi
done
scenario_probes=(traces/*.json traces/bench/*.json traces/moe/*.json traces/system/*.json "${serve_scenarios[@]}" testbench/fuzz/corpus/scenario/*.json
                 testbench/schema/probes/model_fusion.json)
model_config_probes=(traces/models/*.json)
join_input_probes=(traces/join/*.json)
# The runs the two summary.json schemas are recorded over (tools/summary_schema.py): the arguments
# of `ahbm-sim run` (with --no-vcd --trace summary added) and of `ahbm-sim serve`, one run an
# element. Between them they write every optional block: unbatched baselines, a join with its
# comparison, a whole model (memory map, operators; an MoE one adds operators.moe), timing only (which leaves out the numeric
# errors, in a join too), the X-stationary GEMM mapping (its moved bytes), unfused operators (model.fusion: kernel entries), the banked HBM slice, each NoC
# model (each adds its own statistics), per-head launches, the B policies and `auto`, a power cap
# (power.cap, power.throttled_ns); serving with
# each scheduler, a trace-driven workload, P-B-D mode (its pbd block) on a 2-group chip and on_demand
# admission with a KV pool small enough to preempt (its preemption block), and placement
# prefix_affinity on a chip of two slices (its placement block). The scenario fuzz seeds (small runs that open every
# scenario block and the alternatives, such as a join without a context window) are run too.
summary_run_probes=(
  "traces/fanout_8x20.json --policy A --compare-unbatched"
  "traces/fanout_8x20.json --policy auto --noc mesh --launch per-head"
  "traces/fanout_8x20.json --policy auto --objective edp --no-values"
  "traces/fanout_8x20.json --no-values --set pe.hbm.model=banked --noc ring"
  "traces/fanout_8x20.json --no-values --set power_cap_w=90 --power-window-ns 200"
  "traces/join_8x1000.json --join-compare --noc torus"
  "traces/join_8x1000.json --no-values"
  "traces/decode_heavy.json --noc crossbar"
  "traces/llama3_8b.json"
  "traces/moe/mixtral_8x7b.json --no-values --set groups=2"  # an MoE model: operators.moe (2 groups: 93 GB of weights)
  "traces/llama3_8b.json --no-values --gemm-mapping x_stationary"
  "testbench/schema/probes/model_fusion.json"  # model.fusion off: the operators' kernel entries and fusion
  "traces/wide_fanout_32.json --policy B4"
  "traces/long_prefix_32k.json --policy B5"
  "testbench/fuzz/corpus/scenario/every_block.json"
  "testbench/fuzz/corpus/scenario/every_block_alt.json"
  "testbench/fuzz/corpus/scenario/join_options_alt.json"
  "traces/system/llama3_70b_tp8.json --hw hw/configs/system-8chips.json --no-values"  # tensor parallelism: operators.tensor_parallel
  "traces/system/llama3_70b_tp4_pp2.json --hw hw/configs/system-8chips.json --no-values"  # and pipeline: operators.pipeline_parallel
  "traces/system/mixtral_8x7b_ep4.json --hw hw/configs/system-8chips.json --no-values"  # expert parallelism: operators.expert_parallel
)
serve_summary_probes=(
  "traces/serve/agentic_mix.json"
  "traces/serve/agentic_mix.json --scheduler srf"
  "traces/serve/agentic_mix.json --stop-at-s 0.01"  # stopped at 10 ms of its 27: the partial block
  "traces/serve/azure_sample.json"
  "traces/serve/agentic_pbd.json --set groups=2"
  "traces/serve/agentic_on_demand.json --set pe.hbm.capacity_bytes=1114112"  # on_demand admission: its preemption block
  "testbench/schema/probes/serve_no_slo.json"  # no "slo" block: its keys are optional
  "testbench/schema/probes/serve_objective.json"  # auto under the energy objective: scheduler.objective echoed
  "testbench/schema/probes/serve_placement.json --set groups=4"  # prefix_affinity on 2 slices: its placement block
  "traces/serve/llama1b_agentic.json"  # a whole model: its operators and memory_map blocks
  "traces/serve/llama1b_pbd.json --set groups=2"  # a whole model in P-B-D: each pool's operators and memory_map
  "traces/serve/llama1b_pbd_layer.json --set groups=2"  # per-layer KV migration: pbd.transfer.migration, overlap_ns
  "testbench/schema/probes/serve_pbd_pools.json --set groups=4"  # two prefill and two decode pools: by_pool, thinfer.dp_p, dp_d
  "testbench/schema/probes/serve_split.json --set system.chips=4"  # a model split over chips (tp 2 x pp 2): its operators' split blocks
  "testbench/schema/probes/serve_ep.json --set system.chips=4"  # an MoE model's experts over chips (tp = ep = 4): operators.expert_parallel
  "traces/serve/llama1b_dp4.json --set system.chips=4"  # data-parallel replicas: the data_parallel block
  "traces/serve/llama1b_agentic.json --sampling"  # sampled serving: the sampling block
)
