#pragma once
// The online-softmax state of FlashAttention/FlashInfer: per query row the running max m, the
// sum of exponentials l and the unnormalised output o (natural base e everywhere). One merge
// serves every level: a PE folding its KV tiles, the CUBE reducer folding 8 PEs, and the
// inter-CUBE links folding CUBEs. Merge is associative and commutative up to rounding.
#include <cstddef>

#include <Eigen/Core>

namespace ahbm {

using MatrixRM = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MapRM = Eigen::Map<MatrixRM>;
using ConstMapRM = Eigen::Map<const MatrixRM>;

struct AttnState {
  Eigen::VectorXf m;  // running max per row (-inf: no key seen yet)
  Eigen::VectorXf l;  // sum of exp(score - m) per row
  MatrixRM o;         // sum of exp(score - m) * v per row, rows x head_dim

  static AttnState empty(int rows, int head_dim);
  int rows() const { return int(m.size()); }
  int head_dim() const { return int(o.cols()); }
  // Bytes this state occupies on a wire: fp32 o plus fp32 m and l per row.
  static size_t wire_bytes(int rows, int head_dim) { return size_t(rows) * (size_t(head_dim) + 2) * 4; }
};

// acc <- merge(acc, x), row by row. Rows where both sides are empty stay empty.
void merge_into(AttnState& acc, const AttnState& x);

// Final output o / l; a row that saw no visible key yields zeros.
MatrixRM normalise(const AttnState& s);

}  // namespace ahbm
