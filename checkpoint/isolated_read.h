// The checkpoint probe: before a training or host process opens a checkpoint file with libhdf5, a separate
// process (the `sluice-checkpoint-probe` executable, tools/sluice/checkpoint_probe.cc) reads the whole file first
// with the same reader code (Reader + verify_all: every dataset, every checksum). libhdf5 1.10.8 crashes on some
// crafted files (tests/fuzz/hdf5_crashes) before Sluice sees any data; a crash then kills the probe, not the
// week-long simulation, and becomes an Error(kCheckpoint) naming the file.
//
// Why a spawned executable and not fork(): the host has called MPI_Init (registered memory, progress threads) and
// forking it is unsafe. posix_spawn (glibc: clone(CLONE_VM | CLONE_VFORK) + exec) copies nothing of the host and
// runs no pthread_atfork handlers. Why its own small executable and not `sluice inspect`: a program linking only
// libsluice.so may have no `sluice` command installed, and the probe's interface (one file in, one report out on
// a pipe, core/common/child_report.h) stays fixed whatever inspect's options become.
//
// Cost: the file is read twice (once by the probe, once by the process), plus the probe's start (a few ms).
#pragma once

#include <mpi.h>

#include <string>

#include "core/config/isolated_reads.h"

namespace sluice::checkpoint {

// Config key checkpoint.isolated_reads (its vocabulary: core/config/isolated_reads.h).
using IsolatedReads = config::IsolatedReads;

// The environment variable naming the probe executable; set, it replaces the search below.
constexpr char kProbeEnvironmentVariable[] = "SLUICE_CHECKPOINT_PROBE";
constexpr char kProbeName[] = "sluice-checkpoint-probe";

// The probe executable: $SLUICE_CHECKPOINT_PROBE when set (whatever it names), else the first executable of
// DIR/../libexec/sluice/sluice-checkpoint-probe and DIR/sluice-checkpoint-probe, where DIR holds the binary this code
// was linked into (libsluice.so in PREFIX/lib, or PREFIX/bin/sluice; found with dladdr). Empty when none is found.
std::string find_probe();

// How long a probe of `file` may run before it is killed: comm.timeout (or its start-up value when 0 = none)
// plus 1 s per 8 MiB of the file (a slow parallel file system read twice still fits).
double probe_timeout_seconds(const std::string& file);

// Single process (the inference-only model). `file` is a resolved checkpoint file. Returns when the probe read it
// without error, or when no probe is run (never; auto without a probe). Otherwise throws: the probe's own
// Error (kCheckpoint naming file and dataset), kCheckpoint "FILE: the HDF5 library crashed (signal N, NAME) reading
// it; ...", kTimeout when the probe was killed at its deadline, kConfig (always, no probe found), kIo (the probe
// could not be started).
void probe_checkpoint(const std::string& file, IsolatedReads mode);

// Collective over `comm`: rank 0 probes `file` (every rank reads the same file, chosen by rank 0) and every rank
// throws the same Error (comm/agreement.h). The other ranks wait for the verdict for the probe's timeout on top
// of comm.timeout.
void probe_checkpoint(MPI_Comm comm, const std::string& file, IsolatedReads mode);

}  // namespace sluice::checkpoint
