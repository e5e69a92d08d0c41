// Backend's token ops (the transformer's layout changes, the column gather of unpatch, multi-head attention): their
// argument checks, and the defaults that refuse them on a backend that has no implementation.
#include <string>

#include "core/common/error.h"
#include "kernels/backend.h"
#include "kernels/shape_check.h"

namespace sluice::kernels {
namespace {

[[noreturn]] void unavailable(const char* op, const std::string& device) {
  throw Error(ErrorCode::kUnsupported, std::string(op) + " is not available on " + device +
                                           " (the cpu and cuda backends have the token ops of patch_embed, "
                                           "transformer and unpatch)");
}

[[noreturn]] void invalid(const char* op, const std::string& problem) {
  throw Error(ErrorCode::kInvalidArgument, std::string(op) + ": " + problem);
}

// The samples of a [samples·tokens][..] tensor.
int64_t samples_of(const char* op, const char* operand, const Tensor& rows, int64_t tokens) {
  if (tokens <= 0 || rows.rows() % tokens != 0) {
    invalid(op, std::string(operand) + " has " + std::to_string(rows.rows()) + " rows, not a multiple of " +
                    std::to_string(tokens) + " tokens");
  }
  return rows.rows() / tokens;
}

void check_geometry(const char* op, const AttentionGeometry& g) {
  if (g.tokens <= 0 || g.dim <= 0 || g.heads <= 0 || g.dim % g.heads != 0) {
    invalid(op, "attention of " + std::to_string(g.tokens) + " tokens, dim " + std::to_string(g.dim) + ", " +
                    std::to_string(g.heads) + " heads (the heads must divide dim)");
  }
  if (!(g.dropout >= 0.0f && g.dropout < 1.0f)) {
    invalid(op, "attention dropout must satisfy 0 <= p < 1, got " + std::to_string(g.dropout));
  }
  if (g.dropout > 0.0f && g.stream.row_width != static_cast<uint64_t>(g.heads * g.tokens * g.tokens)) {
    invalid(op, "the dropout stream draws rows of " + std::to_string(g.stream.row_width) + " values, not heads x " +
                    "tokens² = " + std::to_string(g.heads * g.tokens * g.tokens));
  }
}

}  // namespace

void Backend::tokens_to_rows(int64_t dim, int64_t tokens, const Tensor& x, Tensor& y) {
  const char* op = "tokens_to_rows";
  require_all_on_device(op, {{"x", &x}, {"y", &y}});
  require_shape(op, "x", x, x.rows(), dim * tokens);
  require_shape(op, "y", y, x.rows() * tokens, dim);
  tokens_to_rows_impl(dim, tokens, x, y);
}

void Backend::rows_to_tokens(int64_t dim, int64_t tokens, const Tensor& x, Tensor& y) {
  const char* op = "rows_to_tokens";
  require_all_on_device(op, {{"x", &x}, {"y", &y}});
  const int64_t samples = samples_of(op, "x", x, tokens);
  require_shape(op, "x", x, x.rows(), dim);
  require_shape(op, "y", y, samples, dim * tokens);
  rows_to_tokens_impl(dim, tokens, x, y);
}

void Backend::gather_columns(const std::vector<int64_t>& source, const Tensor& x, Tensor& y) {
  const char* op = "gather_columns";
  require_all_on_device(op, {{"x", &x}, {"y", &y}});
  require_shape(op, "y", y, x.rows(), static_cast<int64_t>(source.size()));
  for (int64_t column : source) {
    if (column < 0 || column >= x.cols()) {
      invalid(op, "source column " + std::to_string(column) + " is outside x's " + std::to_string(x.cols()));
    }
  }
  gather_columns_impl(source, x, y);
}

void Backend::attention_forward(const AttentionGeometry& geometry, const Tensor& qkv, Tensor& out, Tensor& probs) {
  const char* op = "attention_forward";
  require_all_on_device(op, {{"qkv", &qkv}, {"out", &out}, {"probs", &probs}});
  check_geometry(op, geometry);
  const int64_t samples = samples_of(op, "qkv", qkv, geometry.tokens);
  require_shape(op, "qkv", qkv, qkv.rows(), 3 * geometry.dim);
  require_shape(op, "out", out, qkv.rows(), geometry.dim);
  require_shape(op, "probs", probs, samples, geometry.heads * geometry.tokens * geometry.tokens);
  attention_forward_impl(geometry, qkv, out, probs);
}

void Backend::attention_backward(const AttentionGeometry& geometry, const Tensor& qkv, const Tensor& probs,
                                 const Tensor& dout, Tensor& dqkv) {
  const char* op = "attention_backward";
  require_all_on_device(op, {{"qkv", &qkv}, {"probs", &probs}, {"dout", &dout}, {"dqkv", &dqkv}});
  check_geometry(op, geometry);
  const int64_t samples = samples_of(op, "qkv", qkv, geometry.tokens);
  require_shape(op, "qkv", qkv, qkv.rows(), 3 * geometry.dim);
  require_shape(op, "probs", probs, samples, geometry.heads * geometry.tokens * geometry.tokens);
  require_shape(op, "dout", dout, qkv.rows(), geometry.dim);
  require_shape(op, "dqkv", dqkv, qkv.rows(), 3 * geometry.dim);
  attention_backward_impl(geometry, qkv, probs, dout, dqkv);
}

void Backend::tokens_to_rows_impl(int64_t, int64_t, const Tensor&, Tensor&) {
  unavailable("tokens_to_rows", device_name());
}
void Backend::rows_to_tokens_impl(int64_t, int64_t, const Tensor&, Tensor&) {
  unavailable("rows_to_tokens", device_name());
}
void Backend::gather_columns_impl(const std::vector<int64_t>&, const Tensor&, Tensor&) {
  unavailable("gather_columns", device_name());
}
void Backend::attention_forward_impl(const AttentionGeometry&, const Tensor&, Tensor&, Tensor&) {
  unavailable("attention_forward", device_name());
}
void Backend::attention_backward_impl(const AttentionGeometry&, const Tensor&, const Tensor&, const Tensor&,
                                      Tensor&) {
  unavailable("attention_backward", device_name());
}

}  // namespace sluice::kernels
