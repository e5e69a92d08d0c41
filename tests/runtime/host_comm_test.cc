// Sluice never sends on the host's communicator (docs/DESIGN.md): a trainer started on a host communicator
// H, with pipeline.schedule auto (rank 0 decides), the rank order, the wait set-up and one training step, makes
// no MPI communication call on H. The calls are seen through MPI's profiling interface: this binary defines the
// MPI functions Sluice's code calls, records their communicator and forwards to PMPI_*.
#include <gtest/gtest.h>
#include <mpi.h>

#include <string>
#include <vector>

#include "core/config/config_parser.h"
#include "core/runtime/trainer.h"
#include "tests/mpi_world.h"

namespace {

MPI_Comm g_host = MPI_COMM_NULL;    // the communicator the "host code" hands Sluice
std::vector<std::string> g_on_host;  // communication calls made on it
int g_calls = 0;                     // communication calls made on any communicator

void seen(const char* name, MPI_Comm comm) {
  ++g_calls;
  if (g_host != MPI_COMM_NULL && comm == g_host) g_on_host.emplace_back(name);
}

}  // namespace

extern "C" {
int MPI_Isend(const void* b, int n, MPI_Datatype t, int d, int g, MPI_Comm c, MPI_Request* r) {
  seen("MPI_Isend", c);
  return PMPI_Isend(b, n, t, d, g, c, r);
}
int MPI_Irecv(void* b, int n, MPI_Datatype t, int s, int g, MPI_Comm c, MPI_Request* r) {
  seen("MPI_Irecv", c);
  return PMPI_Irecv(b, n, t, s, g, c, r);
}
int MPI_Recv(void* b, int n, MPI_Datatype t, int s, int g, MPI_Comm c, MPI_Status* st) {
  seen("MPI_Recv", c);
  return PMPI_Recv(b, n, t, s, g, c, st);
}
int MPI_Send(const void* b, int n, MPI_Datatype t, int d, int g, MPI_Comm c) {
  seen("MPI_Send", c);
  return PMPI_Send(b, n, t, d, g, c);
}
int MPI_Iprobe(int s, int g, MPI_Comm c, int* f, MPI_Status* st) {
  seen("MPI_Iprobe", c);
  return PMPI_Iprobe(s, g, c, f, st);
}
int MPI_Bcast(void* b, int n, MPI_Datatype t, int root, MPI_Comm c) {
  seen("MPI_Bcast", c);
  return PMPI_Bcast(b, n, t, root, c);
}
int MPI_Ibcast(void* b, int n, MPI_Datatype t, int root, MPI_Comm c, MPI_Request* r) {
  seen("MPI_Ibcast", c);
  return PMPI_Ibcast(b, n, t, root, c, r);
}
int MPI_Allreduce(const void* s, void* d, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c) {
  seen("MPI_Allreduce", c);
  return PMPI_Allreduce(s, d, n, t, o, c);
}
int MPI_Iallreduce(const void* s, void* d, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c, MPI_Request* r) {
  seen("MPI_Iallreduce", c);
  return PMPI_Iallreduce(s, d, n, t, o, c, r);
}
int MPI_Allgather(const void* s, int sn, MPI_Datatype st, void* d, int dn, MPI_Datatype dt, MPI_Comm c) {
  seen("MPI_Allgather", c);
  return PMPI_Allgather(s, sn, st, d, dn, dt, c);
}
int MPI_Iallgather(const void* s, int sn, MPI_Datatype st, void* d, int dn, MPI_Datatype dt, MPI_Comm c,
                   MPI_Request* r) {
  seen("MPI_Iallgather", c);
  return PMPI_Iallgather(s, sn, st, d, dn, dt, c, r);
}
int MPI_Iallgatherv(const void* s, int sn, MPI_Datatype st, void* d, const int dn[], const int off[], MPI_Datatype dt,
                    MPI_Comm c, MPI_Request* r) {
  seen("MPI_Iallgatherv", c);
  return PMPI_Iallgatherv(s, sn, st, d, dn, off, dt, c, r);
}
int MPI_Ialltoallv(const void* s, const int sn[], const int so[], MPI_Datatype st, void* d, const int dn[],
                   const int dof[], MPI_Datatype dt, MPI_Comm c, MPI_Request* r) {
  seen("MPI_Ialltoallv", c);
  return PMPI_Ialltoallv(s, sn, so, st, d, dn, dof, dt, c, r);
}
int MPI_Igather(const void* s, int sn, MPI_Datatype st, void* d, int dn, MPI_Datatype dt, int root, MPI_Comm c,
                MPI_Request* r) {
  seen("MPI_Igather", c);
  return PMPI_Igather(s, sn, st, d, dn, dt, root, c, r);
}
int MPI_Ibarrier(MPI_Comm c, MPI_Request* r) {
  seen("MPI_Ibarrier", c);
  return PMPI_Ibarrier(c, r);
}
int MPI_Barrier(MPI_Comm c) {
  seen("MPI_Barrier", c);
  return PMPI_Barrier(c);
}
}  // extern "C"

namespace sluice::runtime {
namespace {

using sluice::testing::world_size;

std::string config_text() {
  return "model:\n  inputs: 10\n  layers:\n"
         "    - {type: linear, outputs: 16}\n    - {type: gelu}\n    - {type: linear, outputs: 16}\n"
         "    - {type: tanh}\n    - {type: linear, outputs: 4}\n"
         "pipeline: {stages: " + std::to_string(world_size()) + ", schedule: auto, microbatches: 4}\n"
         "loss: mse\noptimizer: {type: sgd, lr: 0.01}\ndata: {type: external, batch: 8}\nseed: 3\n";
}

TEST(HostCommunicator, CarriesNoMessageOfSluices) {
  MPI_Comm_dup(MPI_COMM_WORLD, &g_host);
  MPI_Barrier(g_host);  // the interposition sees the host's own calls...
  ASSERT_EQ(g_on_host, std::vector<std::string>{"MPI_Barrier"});
  g_on_host.clear();
  const int before = g_calls;
  {
    Trainer trainer(g_host, config::parse_config(config_text()));
    trainer.start();
    const int64_t rows = 8;
    std::vector<float> inputs(static_cast<size_t>(rows * trainer.parts().input_features), 0.5f);
    std::vector<float> targets(static_cast<size_t>(rows * trainer.parts().output_features), 0.25f);
    trainer.train_step(inputs.data(), targets.data(), rows);
  }
  EXPECT_GT(g_calls, before) << "the trainer's calls were not seen: the test proves nothing";
  EXPECT_TRUE(g_on_host.empty()) << "Sluice called " << g_on_host.front() << " (and " << g_on_host.size() - 1
                                 << " more) on the host's communicator";
  g_host = MPI_COMM_NULL;
}

}  // namespace
}  // namespace sluice::runtime
