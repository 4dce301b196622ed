#!/usr/bin/env bash
# Proves a refactor: runs every trace x policy x NoC (ideal, mesh) -- plus the unbatched
# baseline, the join comparison and policy-eval -- and every serve workload of traces/serve/ on
# 1, 2 and 4 groups, with two ahbm-sim binaries, and compares the run directories file by file.
# Exit 0 when every output is byte-identical, 1 otherwise.
#
#   tools/compare-outputs.sh OLD_BIN NEW_BIN [WORK_DIR]
#   ONLY=REGEX tools/compare-outputs.sh ...   only the cases whose "command|file|options" matches
#
# OLD_BIN is usually the binary built from the commit before the change (git worktree add
# ../base HEAD~1 && build it there). Both runs use the same output path, one after the other,
# so paths recorded in outputs cannot differ; each finished run is moved aside before the next.
# The one thing not compared: summary.json's "simulator" block (which binary wrote the run),
# removed from both copies before the comparison.
set -uo pipefail
[ $# -ge 2 ] || { echo "usage: $0 OLD_BIN NEW_BIN [WORK_DIR]" >&2; exit 2; }
old=$(realpath "$1") new=$(realpath "$2")
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="${3:-$(mktemp -d)}"
mkdir -p "$work"
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1
# Full traces on both sides: a binary with output levels (`run --trace`, docs/outputs.md) writes
# every span with --trace tile, what a binary without levels always writes; its default (auto)
# folds the per-tile spans of runs beyond 250,000 spans.
full_trace() {
  local help
  help=$("$1" run --help 2>/dev/null)
  [[ $help == *"--trace arg"* ]] && echo "--trace tile"
}
old_full=$(full_trace "$old") new_full=$(full_trace "$new")

policies=(A B1 B2 B3 B4 B5 auto)
nocs=(ideal mesh)
cases=()
for t in "$root"/traces/*.json; do
  for p in "${policies[@]}"; do
    for n in "${nocs[@]}"; do cases+=("run|$t|--policy $p --noc $n"); done
  done
done
cases+=("run|$root/traces/fanout_8x20.json|--compare-unbatched")
cases+=("run|$root/traces/decode_heavy.json|--compare-unbatched --noc mesh")
cases+=("run|$root/traces/join_8x1000.json|--join-compare")
cases+=("run|$root/traces/fanout_8x20.json|--no-values --noc ring")
for t in fanout_8x20 llama_gqa; do cases+=("policy-eval|$root/traces/$t.json|"); done
# serve: every workload (not the scenarios they name) but the two 1,000-workflow benchmarks
# (minutes each), with the VCD; P-B-D workloads need 2 groups at least.
for w in "$root"/traces/serve/*.json; do
  grep -q '"arrival"' "$w" || continue
  case $(basename "$w") in llama8b_*) continue ;; esac
  for g in 1 2 4; do
    grep -q '"pbd"' "$w" && [ $g = 1 ] && continue
    cases+=("serve|$w|--set groups=$g --vcd")
  done
done
if [ -n "${ONLY:-}" ]; then
  kept=()
  for c in "${cases[@]}"; do [[ $c =~ $ONLY ]] && kept+=("$c"); done
  cases=("${kept[@]}")
fi

fail=0 i=0
for c in "${cases[@]}"; do
  IFS='|' read -r cmd trace args <<<"$c"
  i=$((i + 1))
  name="$(basename "$trace" .json)_$(echo "$cmd $args" | tr -c 'A-Za-z0-9' '_')"
  for side in old new; do
    bin=${!side}
    full=$side"_full"
    full=${!full}
    rm -rf "$work/run" "$work/$side-$name"
    if [ "$cmd" = run ]; then
      # shellcheck disable=SC2086
      "$bin" run "$trace" --out "$work/run" $args $full >"$work/stdout" 2>"$work/stderr"
    elif [ "$cmd" = serve ]; then
      # shellcheck disable=SC2086
      "$bin" serve "$trace" --out "$work/run" $args >"$work/stdout" 2>"$work/stderr"
    else
      # shellcheck disable=SC2086
      "$bin" "$cmd" "$trace" $args >"$work/stdout" 2>"$work/stderr"
    fi
    echo "exit $?" >>"$work/stdout"
    mkdir -p "$work/run"
    mv "$work/stdout" "$work/stderr" "$work/run/"
    mv "$work/run" "$work/$side-$name"
  done
  # summary.json's "simulator" block records which binary wrote the run: its version and
  # commit differ between two builds by design, so the block is removed from both copies before
  # comparing. Nothing else is lost: its config_sha256 hashes "config"."hw", which is compared.
  for side in old new; do
    f="$work/$side-$name/summary.json"
    [ -f "$f" ] && /usr/bin/python3 - "$f" <<'PY'
import re, sys
path = sys.argv[1]
text = open(path, encoding="utf-8").read()
# The block as json.dump(2) writes it: a top-level key whose members are all indented 4 spaces.
new = re.sub(r',\n  "simulator": \{\n(?:    [^\n]*\n)*?  \}(?=[,\n])', '', text, count=1)
if new == text:
    new = re.sub(r'\n  "simulator": \{\n(?:    [^\n]*\n)*?  \},(?=\n)', '', text, count=1)
if new != text:
    open(path, "w", encoding="utf-8").write(new)
PY
  done
  if diff -rq "$work/old-$name" "$work/new-$name" >/dev/null; then
    echo "same  [$i/${#cases[@]}] $cmd $(basename "$trace") $args"
    rm -rf "$work/old-$name" "$work/new-$name"
  else
    echo "DIFF  [$i/${#cases[@]}] $cmd $(basename "$trace") $args: $(diff -rq "$work/old-$name" "$work/new-$name" | head -3 | tr '\n' ' ')"
    fail=1
  fi
done
[ $fail -eq 0 ] && echo "all ${#cases[@]} cases byte-identical" || echo "differences kept under $work"
exit $fail
