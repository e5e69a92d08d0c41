# shellcheck shell=bash
# Shared by the tests that run on a cluster of namespace nodes (slurm/local/cluster_start.sh). Sourced, not run.

# Without root or namespaces the test cannot run: a failure under CI=true (CI runs as root and must run it), a
# loud skip elsewhere.
cannot() {
  if [ "${CI:-}" = true ]; then
    echo "FAIL: $* -- CI runs as root and must run this test" >&2
    exit 1
  fi
  echo "SKIPPED, NOT PASSED: $* (under CI=true this is a failure)" >&2
  exit 0
}

require_namespaces() {
  echo "CI=${CI:-unset}, user $(id -un)"
  [ "$(id -u)" -eq 0 ] || cannot "needs root to create network namespaces (running as $(id -un))"
  local program
  for program in unshare nsenter ip srun slurmd slurmctld munged "$@"; do
    command -v "$program" >/dev/null || cannot "$program not found"
  done
  unshare --net --uts --mount --pid --fork --mount-proc true 2>/dev/null ||
    cannot "unshare --net --uts --mount --pid fails here (no CAP_SYS_ADMIN?)"
}

# start_test_cluster START_SH DIR N: a cluster that stops by itself if this test is killed, its env.sh sourced,
# Open MPI's files kept under DIR/../tmp.
start_test_cluster() {
  local work
  work="$(dirname "$2")"
  mkdir -p "$work/tmp"
  export TMPDIR="$work/tmp" OMPI_MCA_btl_vader_backing_directory="$work/tmp"
  # More ranks than cores: let waiting ranks yield (under srun Open MPI cannot tell it is oversubscribed).
  export OMPI_MCA_mpi_yield_when_idle=1
  SLUICE_CLUSTER_OWNER_PID=$$ "$1" "$2" "$3"
  # shellcheck disable=SC1091  # written by cluster_start.sh
  source "$2/env.sh"
}

# srun's MPI plugin for the sluice under test: PMI-2 for one linked with MPICH (SLUICE_MPI_FLAVOR=mpich, which
# --config=mpich sets), PMIx for Open MPI (the cluster's MpiDefault).
srun_mpi_option() {
  if [ "${SLUICE_MPI_FLAVOR:-}" = mpich ]; then echo --mpi=pmi2; else echo --mpi=pmix; fi
}

# The PID namespaces of a cluster's machines, one per line.
machine_namespaces() {
  local f
  for f in "$1"/pids/*.init; do readlink "/proc/$(cat "$f")/ns/pid"; done
}

# processes_in NAMESPACE...: how many processes live in the given PID namespaces.
processes_in() {
  local count=0 p ns wanted
  for p in /proc/[0-9]*; do
    ns="$(readlink "$p/ns/pid" 2>/dev/null)" || continue
    for wanted in "$@"; do [ "$ns" = "$wanted" ] && count=$((count + 1)); done
  done
  echo "$count"
}
