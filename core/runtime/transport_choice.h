// Which transport carries a rank's pipeline messages (config pipeline.transport), decided from facts about the
// node. Pure (no MPI, no CUDA) so every rule is unit-tested; core/runtime/pipeline_transport.h gathers the
// facts, makes every rank agree and builds the transport.
#pragma once

#include <string>

namespace sluice::runtime {

struct TransportFacts {
  std::string device;    // config device: cpu | cuda
  bool nccl_built = false;  // the NCCL transport is linked in (--config=cuda builds)
  int ranks_on_node = 1;    // ranks of this job on this rank's node
  int gpus_on_node = 0;     // GPUs this rank's node shows
};

// "mpi", "staged" or "nccl" for `requested` (auto | mpi | staged | nccl) on a rank with `facts`:
//   auto   -> mpi on device: cpu; on device: cuda, nccl when NCCL is built and every rank of the node has a GPU
//             of its own (ranks_on_node <= gpus_on_node), else staged.
//   mpi    -> refused for device: cuda (MPI would be handed device pointers; a CUDA-aware MPI is not assumed).
//   staged -> always possible (on the CPU it copies host to host: slower, but it exercises the staging path).
//   nccl   -> refused for device: cpu, without NCCL in the build, or when ranks would share a GPU (NCCL refuses
//             two ranks of one communicator on one GPU).
// A refusal throws Error(kConfig) naming pipeline.transport, the reason and what to use instead.
// Each rank decides alone; the caller makes "auto" agree across ranks (nccl only if every rank chose nccl).
std::string choose_transport(const std::string& requested, const TransportFacts& facts);

}  // namespace sluice::runtime
