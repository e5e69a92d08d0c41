#include "kernels/cpu/onednn_one_thread.h"

#include <oneapi/dnnl/dnnl.h>

namespace sluice::kernels {

bool onednn_runtime_is_openmp() {
  static const bool openmp = dnnl_version()->cpu_runtime == DNNL_RUNTIME_OMP;
  return openmp;
}

}  // namespace sluice::kernels
