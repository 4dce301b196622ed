#pragma once
// The collectives' names and their alpha-beta closed forms (docs/system.md, "Collectives"): the
// time of one collective over n ranks on an idle network whose every rank-to-rank path has a
// bandwidth of B bytes/ns and a latency alpha (links plus switches), with a local reduction
// of gamma ns per byte. The tests take these as the oracle of the simulated schedules
// (collectives.h); coll-bench prints them beside the simulated times.
//
// Sizes follow nccl-tests: S is the all-reduce and reduce-scatter input per rank, the
// all-gather output per rank, the all-to-all send buffer per rank (S / n to each rank), the
// point-to-point message.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace ahbm {

enum class CollectiveKind { all_reduce, all_gather, reduce_scatter, all_to_all, p2p };
enum class CollectiveAlgo { ring, tree, halving_doubling, direct };

inline const std::vector<std::string>& collective_kind_names() {
  static const std::vector<std::string> n = {"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "p2p"};
  return n;
}
inline const std::vector<std::string>& collective_algo_names() {
  static const std::vector<std::string> n = {"ring", "tree", "halving_doubling", "direct"};
  return n;
}
inline const std::string& collective_name(CollectiveKind k) { return collective_kind_names()[size_t(k)]; }
inline const std::string& collective_name(CollectiveAlgo a) { return collective_algo_names()[size_t(a)]; }

// The algorithms each collective has (the first is its default): all_reduce ring, tree,
// halving_doubling; all_gather and reduce_scatter ring; all_to_all and p2p direct.
inline std::vector<CollectiveAlgo> collective_algorithms(CollectiveKind k) {
  switch (k) {
    case CollectiveKind::all_reduce: return {CollectiveAlgo::ring, CollectiveAlgo::tree, CollectiveAlgo::halving_doubling};
    case CollectiveKind::all_gather:
    case CollectiveKind::reduce_scatter: return {CollectiveAlgo::ring};
    default: return {CollectiveAlgo::direct};
  }
}

// nccl-tests' bus-bandwidth factor: busbw = algbw x this (algbw = S / time).
inline double bus_bandwidth_factor(CollectiveKind k, int n) {
  switch (k) {
    case CollectiveKind::all_reduce: return 2.0 * (n - 1) / n;
    case CollectiveKind::p2p: return 1.0;
    default: return double(n - 1) / n;
  }
}

struct AlphaBeta {
  double alpha_ns = 0;            // latency of one rank-to-rank message (links + switches)
  double gbps = 1;                // bandwidth of the rank-to-rank path, bytes/ns
  double reduce_ns_per_byte = 0;  // gamma: local reduction
};

// ceil(log2 n): the rounds of a binomial tree.
inline int tree_rounds(int n) {
  int r = 0;
  while ((1 << r) < n) ++r;
  return r;
}

// Closed-form time, ns, of one collective on an idle network.
//   all_reduce ring:       2(n-1) (S/(nB) + a) + (n-1) S/n g
//   all_reduce tree:       2 L (S/B + a) + L S g                   (L = ceil(log2 n); binomial reduce, then broadcast)
//   all_reduce halving_doubling: 2(n-1)/n S/B + 2 L a + (n-1)/n S g  (n a power of two)
//   all_gather ring:       (n-1) (S/(nB) + a)
//   reduce_scatter ring:   (n-1) (S/(nB) + a) + (n-1) S/n g
//   all_to_all direct:     (n-1)/n S/B + a                         (one port per rank; each rank's n-1 sends queue there)
//   p2p:                   S/B + a
inline double collective_closed_form_ns(CollectiveKind k, CollectiveAlgo algo, int n, double S, const AlphaBeta& ab) {
  if (n <= 1 && k != CollectiveKind::p2p) return 0;
  const double a = ab.alpha_ns, B = ab.gbps, g = ab.reduce_ns_per_byte, L = tree_rounds(n);
  switch (k) {
    case CollectiveKind::all_reduce:
      if (algo == CollectiveAlgo::tree) return 2 * L * (S / B + a) + L * S * g;
      if (algo == CollectiveAlgo::halving_doubling) return 2.0 * (n - 1) / n * S / B + 2 * L * a + double(n - 1) / n * S * g;
      return 2.0 * (n - 1) * (S / n / B + a) + double(n - 1) * S / n * g;
    case CollectiveKind::all_gather: return (n - 1) * (S / n / B + a);
    case CollectiveKind::reduce_scatter: return (n - 1) * (S / n / B + a) + double(n - 1) * S / n * g;
    case CollectiveKind::all_to_all: return double(n - 1) / n * S / B + a;
    case CollectiveKind::p2p: return S / B + a;
  }
  return 0;
}

}  // namespace ahbm
