#!/usr/bin/env bash
# Proves a refactor of the flit-level engine (hw/noc/flit_*): runs `ahbm-sim noc-bench` with two
# binaries over every flit model (mesh, torus, ring, cmesh, flatfly, crossbar), every switch x VC
# allocator of the staged router with alloc_iters 1 and 2 and input_speedup 1 and 2, every routing
# each topology takes, 1, 2 and 4 VCs, both pipelines, several traffic patterns and loads up to
# saturation, and compares each run's printed line and JSON report byte for byte.
# Exit 0 when every case is identical, 1 otherwise. Short windows (3000 cycles): about 0.2 s a run.
#
#   tools/compare-noc-bench.sh OLD_BIN NEW_BIN [WORK_DIR]
#   ONLY=REGEX tools/compare-noc-bench.sh ...   only the cases whose options match
#   LIST=1 tools/compare-noc-bench.sh OLD NEW   print the cases and their count, run nothing
set -uo pipefail
[ $# -ge 2 ] || { echo "usage: $0 OLD_BIN NEW_BIN [WORK_DIR]" >&2; exit 2; }
old=$(realpath "$1") new=$(realpath "$2")
work="${3:-$(mktemp -d)}"
mkdir -p "$work"
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1
window="--cycles 3000 --warmup 500 --nodes 16"
patterns=(uniform transpose bitcomp tornado hotspot neighbor shuffle bitrev)
cases=()
add() { cases+=("$*"); }

# 1. Allocators: every switch x VC allocator of the staged router (4 VCs, dimension order), with
# alloc_iters and input_speedup where the switch allocator takes them; each at saturation under a
# rotating pattern and under light multicast (replication in the switch).
n=0
for topo in mesh torus ring cmesh flatfly crossbar; do
  for sw in greedy input-first output-first islip wavefront; do
    variants=("")
    case $sw in
      input-first | output-first | islip)
        variants+=("--param alloc_iters=2" "--param input_speedup=2" "--param alloc_iters=2 --param input_speedup=2") ;;
      wavefront) variants+=("--param input_speedup=2") ;;
    esac
    for va in greedy input-first output-first islip; do
      for v in "${variants[@]}"; do
        base="--noc $topo --param router=booksim-iq --param vcs=4 --param sw_allocator=$sw --param vc_allocator=$va $v"
        add "$base --traffic ${patterns[n % ${#patterns[@]}]} --rate 1.0"
        add "$base --traffic multicast --rate 0.15"
        n=$((n + 1))
      done
    done
  done
done

# 2. Routing x VCs x router: every routing a topology takes, 1, 2 and 4 VCs where allowed, on the
# lumped (classic) router and on staged ones with several allocator pairs and VC selections.
routers=("--param router=classic"
  "--param router=booksim-iq"
  "--param router=booksim-iq --param sw_allocator=input-first --param vc_allocator=islip"
  "--param router=booksim-iq --param sw_allocator=wavefront --param vc_allocator=output-first --param vc_select=lowest"
  "--param router=booksim-iq --param sw_allocator=output-first --param vc_allocator=input-first --param alloc_iters=2")
for topo in mesh torus ring cmesh flatfly crossbar; do
  case $topo in
    mesh | cmesh | flatfly) routings=(dor o1turn valiant min_adapt) ;;
    torus) routings=(dor o1turn valiant) ;;
    *) routings=("") ;;
  esac
  for routing in "${routings[@]}"; do
    for vcs in 1 2 4; do
      case $topo in ring | torus) [ $((vcs % 2)) = 0 ] || continue ;; esac
      case $routing in
        o1turn | valiant) [ $topo = torus ] && { [ $vcs = 4 ] || continue; }; [ $((vcs % 2)) = 0 ] || continue ;;
        min_adapt) [ $vcs -ge 2 ] || continue ;;
      esac
      for rt in "${routers[@]}"; do
        # min_adapt takes the greedy VC allocator only.
        [ "$routing" = min_adapt ] && [[ $rt == *vc_allocator=* ]] && continue
        base="--noc $topo --param vcs=$vcs $rt"
        [ -n "$routing" ] && base+=" --param routing=$routing"
        case $routing in o1turn | valiant) base+=" --param route_seed=7" ;; esac
        add "$base --traffic uniform --rate 1.0"
        add "$base --traffic tornado --rate 0.5"
        add "$base --traffic multicast --rate 0.15"
      done
    done
  done
done

# 3. The rest of the router's options around allocation: speculative switch allocation, source
# multicast, 1-flit buffers, packet mixes and bursts, round-robin VC selection on the lumped router.
for topo in mesh torus crossbar; do
  add "--noc $topo --param router=booksim-iq --param vcs=4 --param speculative=true --traffic uniform --rate 1.0"
  add "--noc $topo --param router=booksim-iq --param vcs=2 --param multicast=source --traffic multicast --rate 0.1"
  add "--noc $topo --param router=booksim-iq --param vcs=2 --param buffer_flits=1 --param sw_allocator=wavefront --traffic multicast --rate 0.3"
  add "--noc $topo --param vcs=2 --param buffer_flits=1 --traffic multicast --rate 0.3"
  add "--noc $topo --param vcs=4 --param vc_select=round-robin --traffic hotspot --rate 0.8"
  add "--noc $topo --param router=booksim-iq --param vcs=4 --param sw_allocator=output-first --param vc_allocator=islip --packet-mix 1:3,9:1 --injection on-off --traffic uniform --rate 0.6 --seed 3"
done

if [ -n "${ONLY:-}" ]; then
  kept=()
  for c in "${cases[@]}"; do [[ $c =~ $ONLY ]] && kept+=("$c"); done
  cases=("${kept[@]}")
fi
if [ -n "${LIST:-}" ]; then
  printf '%s\n' "${cases[@]}"
  echo "${#cases[@]} cases"
  exit 0
fi

same=0 differ=0 failed=0
for i in "${!cases[@]}"; do
  c=${cases[$i]}
  for side in old new; do
    bin=$old
    [ $side = new ] && bin=$new
    # shellcheck disable=SC2086
    "$bin" noc-bench $c $window --out "$work/$i.$side.json" >"$work/$i.$side.out" 2>&1
    echo "exit $?" >>"$work/$i.$side.out"
    touch "$work/$i.$side.json"  # none when refused
  done
  # A case the binary refuses would compare equal and prove nothing: counted apart.
  grep -qx "exit 0" "$work/$i.old.out" || { failed=$((failed + 1)); echo "FAILED ($i): noc-bench $c" >&2; }
  if cmp -s "$work/$i.old.out" "$work/$i.new.out" && cmp -s "$work/$i.old.json" "$work/$i.new.json"; then
    same=$((same + 1))
    rm -f "$work/$i".{old,new}.{out,json}
  else
    differ=$((differ + 1))
    echo "DIFFERS ($i): noc-bench $c $window" >&2
  fi
done
echo "$same of ${#cases[@]} identical ($differ differ, $failed refused by the old binary; kept in $work)"
[ $differ = 0 ] && [ $failed = 0 ]
