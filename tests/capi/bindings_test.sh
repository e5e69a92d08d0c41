#!/usr/bin/env bash
# The Fortran module's bind(C) interfaces agree with sluice.h (check_bindings.py): name, argument count and order,
# kind, value/reference and intent of every argument, the result, the bind(C) structs' fields, and the callbacks'
# abstract interfaces against the structs' function pointers. Also proves the
# checker fails: each deliberate drift below (made on a copy of the module or header) must be reported, naming it.
set -uo pipefail
checker="$1" header="$2" module="$3"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
fail() { echo "FAIL: $*"; exit 1; }

python3 "$checker" "$header" "$module" || fail "the Fortran module drifted from sluice.h (above)"

# expect_drift WHAT EXPECTED_TEXT HEADER MODULE
expect_drift() {
  local out
  out="$(python3 "$checker" "$3" "$4")" && fail "$1 was accepted"
  grep -qF -- "$2" <<< "$out" || fail "$1 not reported as '$2'; got: $out"
}
# A batch passed as a C int (the kind drift of issue 26).
sed '/c_train_submitted(t, batch, loss)/,/end function/s/integer(c_int64_t), value :: batch/integer(c_int), value :: batch/' \
  "$module" > "$tmp/kind.f90"
expect_drift "an int batch" "argument 2 (C int64_t batch, Fortran batch) is integer(c_int), value; should be integer(c_int64_t), value" \
  "$header" "$tmp/kind.f90"
# Two arguments swapped.
sed 's/function c_train_submitted(t, batch, loss)/function c_train_submitted(t, loss, batch)/' "$module" > "$tmp/order.f90"
expect_drift "swapped arguments" "sluice_train_submitted (Fortran c_train_submitted): argument 2 (C int64_t batch, Fortran loss)" \
  "$header" "$tmp/order.f90"
# A misspelt bind name.
sed 's/name="sluice_submitted_count"/name="sluice_submited_count"/' "$module" > "$tmp/name.f90"
expect_drift "a misspelt name" "sluice_submitted_count: declared in the header but no bind(C" "$header" "$tmp/name.f90"
expect_drift "a misspelt name" "sluice_submited_count: bound in the module but not declared" "$header" "$tmp/name.f90"
# An output read as an input.
sed '/c_get_learning_rate(t, lr)/,/end function/s/intent(out) :: lr/intent(in) :: lr/' "$module" > "$tmp/intent.f90"
expect_drift "a wrong intent" "argument 2 (C double *lr, Fortran lr) is real(c_double), intent(in)" "$header" "$tmp/intent.f90"
# A by-value argument passed by reference.
sed '/c_set_learning_rate(t, lr)/,/end function/s/real(c_double), value :: lr/real(c_double) :: lr/' "$module" > "$tmp/value.f90"
expect_drift "a missing value" "argument 2 (C double lr, Fortran lr) is real(c_double); should be real(c_double), value" \
  "$header" "$tmp/value.f90"
# The header grows an argument / a struct field changes kind.
sed 's/sluice_status sluice_trainer_start(sluice_trainer\* t);/sluice_status sluice_trainer_start(sluice_trainer* t, int64_t steps);/' \
  "$header" > "$tmp/args.h"
expect_drift "a new C argument" "sluice_trainer_start (Fortran c_trainer_start): 1 arguments in the module, 2 in the header" \
  "$tmp/args.h" "$module"
sed 's/int64_t peak_stash_bytes;/int32_t peak_stash_bytes;/' "$header" > "$tmp/struct.h"
expect_drift "a struct field's kind" "struct sluice_stats: fields differ" "$tmp/struct.h" "$module"
# A new C function without a binding.
sed 's/^void sluice_trainer_destroy(sluice_trainer\* t);/&\nsluice_status sluice_trainer_reset(sluice_trainer* t);/' \
  "$header" > "$tmp/new.h"
expect_drift "an unbound C function" "sluice_trainer_reset: declared in the header but no bind(C" "$tmp/new.h" "$module"
# A callback's abstract interface drifts from its function pointer: a batch kind, an intent, a missing interface.
sed '/function sluice_forward_callback(/,/end function/s/integer(c_int64_t), value :: batch/integer(c_int), value :: batch/' \
  "$module" > "$tmp/callback_kind.f90"
expect_drift "an int batch in a callback" \
  "sluice_layer_ops.forward (Fortran sluice_forward_callback): argument 5 (C int64_t batch, Fortran batch) is integer(c_int), value" \
  "$header" "$tmp/callback_kind.f90"
sed '/function sluice_loss_callback(/,/end function/s/real(c_double), intent(out) :: loss_sum/real(c_double), intent(in) :: loss_sum/' \
  "$module" > "$tmp/callback_intent.f90"
expect_drift "a loss sum read as an input" "sluice_loss_ops.loss (Fortran sluice_loss_callback): argument 7 (C double *loss_sum" \
  "$header" "$tmp/callback_intent.f90"
sed 's/sluice_backward_weight_callback/sluice_backward_weights_callback/g' "$module" > "$tmp/callback_name.f90"
expect_drift "a callback without its interface" "sluice_layer_ops.backward_weight: 0 abstract interfaces sluice_backward_weight_callback" \
  "$header" "$tmp/callback_name.f90"
echo "PASS: the Fortran bindings agree with sluice.h, and every deliberate drift was reported"
