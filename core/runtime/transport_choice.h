// Which transport carries a rank's pipeline messages (config pipeline.transport), decided from the stages'
// devices and facts about the node. Pure (no MPI, no CUDA) so every rule is unit-tested;
// core/runtime/pipeline_transport.h gathers the facts, makes every rank agree and builds the transport.
#pragma once

#include <string>
#include <vector>

#include "core/config/device_kind.h"
#include "core/config/transport_kind.h"

namespace sluice::runtime {

struct TransportFacts {
  std::vector<config::DeviceKind> stage_devices;  // config device of every pipeline stage, in order
  int stage = 0;                           // this rank's pipeline stage (index into stage_devices)
  bool nccl_built = false;                 // the NCCL transport is linked in (--config=cuda builds)
  int ranks_on_node = 1;                   // ranks of this job on this rank's node
  int gpus_on_node = 0;                    // GPUs this rank's node shows
};

// kMpi, kStaged or kNccl (never kAuto) for `requested` (auto | mpi | staged | nccl) on a rank with `facts`:
//   auto   -> every stage cuda: nccl when NCCL is built and every rank of the node has a GPU of its own
//             (ranks_on_node <= gpus_on_node), else staged. Otherwise per rank: mpi on a cpu stage, staged on a
//             cuda stage. The two talk to each other: staged sends exactly MPI's messages (pipeline_transport.cc).
//   mpi    -> refused if any stage is cuda, naming those stages (MPI would be handed device pointers; a
//             CUDA-aware MPI is not assumed).
//   staged -> always, on every rank (on the CPU it copies host to host: slower, but it exercises the staging).
//   nccl   -> refused if any stage is cpu (naming them), without NCCL in the build, or when ranks would share a
//             GPU (NCCL refuses two ranks of one communicator on one GPU).
// A refusal throws Error(kConfig) naming pipeline.transport, the reason and what to use instead. The refusals
// that depend on the devices alone are the same on every rank. Each rank decides alone; the caller makes
// "auto" agree across ranks (nccl only if every rank chose nccl).
config::TransportKind choose_transport(config::TransportKind requested, const TransportFacts& facts);

}  // namespace sluice::runtime
