#!/usr/bin/env bash
# The layers of docs/ARCHITECTURE.md, checked on what ships: every edge of the Bazel dependency graph of
# libsluice.so and the sluice command, every #include of the source tree, and every MPI communication or wait
# call outside core/comm and checkpoint/. Also proves the checker can fail: a fixture with forbidden includes and
# a raw MPI_Bcast in core/runtime and config choices compared with strings must be rejected, naming each, and a
# clean fixture (the same MPI_Bcast in core/comm, a choice compared as its enum) accepted.
set -uo pipefail
checker="$1" graph="$2" anchor="$3"
# The anchor is fixtures/clean/core/schedule/pure.cc. Runfiles are symlinks into the workspace's source tree
# (the sandbox sees the host's files read-only), so following it finds the fixtures and the tree to scan.
fixtures="$(cd "$(dirname "$(readlink -f "$anchor")")/../../.." && pwd)"
root="$(cd "$fixtures/../../.." && pwd)"
fail() { echo "FAIL: $*"; exit 1; }

python3 "$checker" graph "$graph" || fail "the product's dependency graph breaks a layer rule (above)"
[ -f "$root/core/schedule/action.h" ] || fail "source tree not found at $root"
python3 "$checker" includes "$root" || fail "an #include breaks a layer rule (above)"

out="$(python3 "$checker" includes "$fixtures/forbidden")" && fail "forbidden includes were accepted: $out"
for expected in "core/schedule/uses_mpi.cc:2: #include <mpi.h>: core/schedule may not include <mpi.h>" \
                "core/schedule/uses_mpi.cc:4: #include \"core/runtime/trainer.h\": core/schedule may not use core/runtime" \
                "kernels/cpu/uses_runtime.cc:2: #include \"core/runtime/placement.h\": kernels may not use core/runtime" \
                "core/runtime/raw_broadcast.cc:5: MPI_Bcast(: MPI communication and waits live in core/comm" \
                "core/runtime/compares_choice.cc:4: bool uses_nccl" \
                "core/runtime/compares_choice.cc:5: bool waits_its_own_way" \
                "core/runtime/compares_choice.cc:6: bool on_gpu"; do
  grep -qF -- "$expected" <<< "$out" || fail "violation not reported: $expected; got: $out"
done
# The clean tree holds the same MPI_Bcast inside core/comm, a core/runtime file that only names calls, and one that
# compares a choice's enum (quoting a string comparison in a comment and a literal).
python3 "$checker" includes "$fixtures/clean" >/dev/null || fail "a clean fixture was rejected"
grep -qF "MPI_Bcast(value" "$fixtures/clean/core/comm/raw_broadcast.cc" || fail "the core/comm fixture lost its call"

# A forbidden edge in a graph is reported too.
printf '%s\n' 'digraph g {' '  "//kernels/cuda:cuda_backend" -> "//core/runtime:placement"' \
  '  "//capi:capi" -> "//core/runtime:sequential_reference"' \
  '  "//kernels/cuda:nvcc_loss" -> "//core/runtime:trainer.h"' \
  '  "//kernels/cuda:nvcc_loss" -> "//core/config:gemm_precision.h"' '}' > "${TEST_TMPDIR:-/tmp}/bad_graph"
out="$(python3 "$checker" graph "${TEST_TMPDIR:-/tmp}/bad_graph")" && fail "a forbidden graph edge was accepted"
grep -qF "cuda_backend -> //core/runtime:placement: kernels may not use core/runtime" <<< "$out" ||
  fail "kernels -> runtime edge not named: $out"
# A header named as a file (nvcc's genrules list them) is checked as its target: core/runtime's is refused, a
# config vocabulary header (core/config/gemm_precision.h) is not.
grep -qF "nvcc_loss -> //core/runtime:trainer.h: kernels may not use core/runtime" <<< "$out" ||
  fail "kernels -> runtime header file edge not named: $out"
! grep -q "gemm_precision.h" <<< "$out" || fail "a vocabulary header file edge was refused: $out"
grep -q "uses the test oracle" <<< "$out" || fail "product -> test oracle edge not named: $out"
# tools/layering/BUILD's package_group table is generated from ALLOWED; a drifted copy (one user dropped) is refused.
python3 "$checker" package-groups-check "$root/tools/layering/BUILD" ||
  fail "tools/layering/BUILD's package groups differ from check_layering.py's ALLOWED (above)"
drifted="${TEST_TMPDIR:-/tmp}/drifted_BUILD"
grep -v '"//slurm/...",' "$root/tools/layering/BUILD" > "$drifted"
out="$(python3 "$checker" package-groups-check "$drifted")" && fail "a drifted package_group table was accepted"
grep -qF -- '+++ ' <<< "$out" && grep -qF -- '-        "//slurm/...",' <<< "$out" ||
  fail "the drift (//slurm/... dropped) was not shown: $out"
echo "PASS: layering"
