#pragma once
// The PE's unfused vector kernels (hw/common/contract/vector_kernel.h): per kernel, after its
// launch on the host, every row block of the PE's columns read from the HBM slice, the operator
// on the vector unit, the result written back. No process of its own: the attention program's
// process runs it after its tiles (a run of kernels has no tiles; other runs have no kernels),
// as a process would cost every PE of every chip a coroutine stack. Closed form: vector_kernel.h.
#include "hw/pe/kv_dma.h"
#include "hw/pe/pe_datapath.h"

namespace ahbm {

class VectorKernelProgram : public sc_core::sc_module {
 public:
  VectorKernelProgram(sc_core::sc_module_name name, const PeContext& pe, PeDatapath& datapath, KvDma& dma);
  // Runs this PE's part of the run's kernels, one after another.
  void run();

 private:
  const PeContext& pe_;
  PeDatapath& datapath_;
  KvDma& dma_;
  MatrixRM block_;  // a kernel's row block (values)
};

}  // namespace ahbm
