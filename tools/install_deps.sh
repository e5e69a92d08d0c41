#!/usr/bin/env bash
# Installs, from Debian 12's apt only, everything Sluice needs to build, test and run (idempotent:
# packages already present are skipped, so this is cheap on a prepared machine).
set -euo pipefail

packages=(
  bazel-bootstrap g++ gfortran make cmake pkg-config
  libopenmpi-dev openmpi-bin
  libhdf5-openmpi-dev hdf5-tools
  libopenblas-dev libdnnl-dev libyaml-cpp-dev libcli11-dev libgtest-dev librandom123-dev libdeflate-dev
  libfftw3-dev
  python3 python3-pip valgrind procps patchelf
  slurmd slurmctld slurm-client munge
  # --config=fuzz (tests/fuzz): clang 14; libclang-rt-14-dev holds libFuzzer (libclang_rt.fuzzer*.a) and the
  # clang sanitizer runtimes; llvm-14 has llvm-symbolizer, which turns sanitizer reports into file:line.
  clang-14 libclang-rt-14-dev llvm-14
  # --config=mpich: the second MPI and its parallel HDF5. They install beside Open MPI's; Debian's alternatives
  # keep Open MPI as mpicc/mpirun (priority 50 against 40).
  libmpich-dev mpich libhdf5-mpich-dev
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "install_deps: installing ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  # sudo resets the environment: pass DEBIAN_FRONTEND through env so apt never prompts.
  $sudo_cmd env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# lizard (PyPI only; no Debian package): the function-size check tools/test.sh runs (lizard -w -L 80 -C 20). A
# developer tool, not part of the product's build. Debian's own python3 refuses pip installs into the system
# (PEP 668) unless told; a pyenv or venv python takes it as it is.
if ! command -v lizard >/dev/null 2>&1; then
  echo "install_deps: installing lizard from PyPI"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd python3 -m pip install --quiet lizard 2>/dev/null ||
    $sudo_cmd python3 -m pip install --quiet --break-system-packages lizard
fi
