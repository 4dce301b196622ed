#include "runtime/numerics/reference.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ahbm {

namespace {

using RowMajorD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// A run of keys and values: `n` rows of d floats each, row-major.
struct KvChunk {
  const float* k;
  const float* v;
  long n;
};

// Keys per pass over K and V, and Q rows per score block: the score block (at most 256 x 256
// float64 = 512 KiB) and one pass's K and V in float64 (256 x head_dim each) stay in cache and are
// reused, so the reference costs its two products (Q K^T, P V) and no large first-touched buffers.
constexpr long kKeysPerPass = 256;
constexpr long kRowsPerBlock = 256;

// may_attend(row, key) -> bool, key indexing the concatenation of the chunks; a template
// parameter so the per-score test inlines. One pass over the keys: each pass widens its K and V
// to float64 once and, for every block of rows, computes the scores, folds them into the rows'
// running maximum and sum (rescaling what was accumulated when the maximum grows) and adds P V.
// The chunks are read in place (a job's shards), not as a flattened copy.
template <class MayAttend>
Eigen::MatrixXd reference_core(const std::vector<float>& q, const std::vector<KvChunk>& chunks, int d, double scale,
                               const MayAttend& may_attend) {
  constexpr double kNone = -std::numeric_limits<double>::infinity();
  const long n_rows = long(q.size()) / d;
  const RowMajorD Q = Eigen::Map<const MatrixRM>(q.data(), n_rows, d).cast<double>();
  RowMajorD acc = RowMajorD::Zero(n_rows, d);         // sum of exp(score - max) * v per row
  Eigen::VectorXd mx = Eigen::VectorXd::Constant(n_rows, kNone), sum = Eigen::VectorXd::Zero(n_rows);
  RowMajorD s, k, v;  // a score block; one pass's K and V in float64
  long at = 0;        // index of the pass's first key
  for (const KvChunk& c : chunks)
    for (long k0 = 0; k0 < c.n; k0 += kKeysPerPass) {
      const long nk = std::min(kKeysPerPass, c.n - k0);
      k = Eigen::Map<const MatrixRM>(c.k + k0 * d, nk, d).cast<double>();
      v = Eigen::Map<const MatrixRM>(c.v + k0 * d, nk, d).cast<double>();
      for (long r0 = 0; r0 < n_rows; r0 += kRowsPerBlock) {
        const long nr = std::min(kRowsPerBlock, n_rows - r0);
        s.resize(nr, nk);
        s.noalias() = Q.middleRows(r0, nr) * k.transpose();
        for (long r = 0; r < nr; ++r) {
          double block_max = kNone;
          for (long j = 0; j < nk; ++j) {
            s(r, j) = may_attend(r0 + r, at + j) ? s(r, j) * scale : kNone;
            block_max = std::max(block_max, s(r, j));
          }
          const double old_max = mx(r0 + r), new_max = std::max(old_max, block_max);
          if (new_max == kNone) {  // nothing visible to this row yet
            s.row(r).setZero();
            continue;
          }
          if (new_max > old_max) {  // the first visible key (old_max = -inf) scales by 0
            const double shrink = std::exp(old_max - new_max);
            sum(r0 + r) *= shrink;
            acc.row(r0 + r) *= shrink;
            mx(r0 + r) = new_max;
          }
          double block_sum = 0;
          for (long j = 0; j < nk; ++j) block_sum += (s(r, j) = std::exp(s(r, j) - new_max));
          sum(r0 + r) += block_sum;
        }
        acc.middleRows(r0, nr).noalias() += s * v;
      }
      at += nk;
    }
  Eigen::MatrixXd out = Eigen::MatrixXd::Zero(n_rows, d);
  for (long r = 0; r < n_rows; ++r)
    if (sum(r) > 0) out.row(r) = acc.row(r) / sum(r);  // rows with no visible key stay zero
  return out;
}

std::vector<KvChunk> one_chunk(const std::vector<float>& k, const std::vector<float>& v, int d) {
  return {KvChunk{k.data(), v.data(), long(k.size()) / d}};
}

}  // namespace

Eigen::MatrixXd reference_attention_masked(const std::vector<float>& q, const std::vector<float>& k,
                                           const std::vector<float>& v, const std::vector<uint8_t>& mask, int d,
                                           double scale) {
  const long n_kv = long(k.size()) / d;
  return reference_core(q, one_chunk(k, v, d), d, scale, [&](long r, long c) { return mask[size_t(r * n_kv + c)] != 0; });
}

std::vector<uint8_t> visibility_mask(const std::vector<RowInfo>& rows, const std::vector<KvInfo>& kv) {
  std::vector<uint8_t> mask(rows.size() * kv.size());
  for (size_t r = 0; r < rows.size(); ++r)
    for (size_t c = 0; c < kv.size(); ++c) mask[r * kv.size() + c] = visible(rows[r], kv[c]);
  return mask;
}

Eigen::MatrixXd reference_attention(const std::vector<float>& q, const std::vector<RowInfo>& rows,
                                    const std::vector<float>& k, const std::vector<float>& v,
                                    const std::vector<KvInfo>& kv, int d, double scale) {
  return reference_core(q, one_chunk(k, v, d), d, scale,
                        [&](long r, long c) { return visible(rows[size_t(r)], kv[size_t(c)]); });
}

Eigen::MatrixXd reference_attention(const AttentionJob& job, double scale) {
  std::vector<KvChunk> chunks;
  std::vector<const KvInfo*> info;  // key index -> its metadata, across the shards
  for (const KvShard& s : job.shards) {
    if (s.tokens > 0) chunks.push_back({s.k.data(), s.v.data(), long(s.tokens)});
    for (const KvInfo& k : s.info) info.push_back(&k);
  }
  return reference_core(job.q, chunks, job.head_dim, scale,
                        [&](long r, long c) { return visible(job.rows[size_t(r)], *info[size_t(c)]); });
}

NumericCheck compare_to_reference(const MatrixRM& o, const Eigen::MatrixXd& ref) {
  NumericCheck c;
  if (ref.size() == 0) return c;
  c.ref_max_abs = ref.cwiseAbs().maxCoeff();
  c.max_abs_err = (o.cast<double>() - ref).cwiseAbs().maxCoeff();
  c.max_rel_err = c.ref_max_abs > 0 ? c.max_abs_err / c.ref_max_abs : c.max_abs_err;
  return c;
}

NumericCheck worst_of(const NumericCheck& a, const NumericCheck& b) {
  NumericCheck w;
  w.max_abs_err = std::max(a.max_abs_err, b.max_abs_err);
  w.max_rel_err = std::max(a.max_rel_err, b.max_rel_err);
  w.ref_max_abs = std::max(a.ref_max_abs, b.ref_max_abs);
  return w;
}

double storage_tolerance(DType t) {
  // 8 units of roundoff of the storage type (fp16 u = 2^-11, bf16 u = 2^-8; values are standard
  // normal): the worst case is a row that sees a single key, whose O is that key's V row rounded
  // (|v| up to ~8 u-units of error); scores perturbed by the rounded Q and K move O by a
  // similar relative amount, and longer contexts average both down. fp32 rounds nothing.
  switch (t) {
    case DType::fp16: return 8.0 / 2048.0;
    case DType::bf16: return 8.0 / 256.0;
    default: return 1e-4;
  }
}

}  // namespace ahbm
