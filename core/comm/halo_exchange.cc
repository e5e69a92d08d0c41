#include "core/comm/halo_exchange.h"

#include <array>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "core/comm/duplicate_comm.h"
#include "core/comm/halo_box.h"
#include "core/comm/mpi_context.h"
#include "core/comm/request_wait.h"
#include "core/common/error.h"

namespace sluice::comm {

HaloChannel::HaloChannel(MPI_Comm domain_comm) : comm_(duplicate_communicator(domain_comm, "halo exchange")) {
  check_mpi(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank (halo exchange)");
  check_mpi(MPI_Comm_size(comm_, &size_), "MPI_Comm_size (halo exchange)");
  totals_.bytes_to_rank.assign(static_cast<size_t>(size_), 0);
  last_ = totals_;
  for (int r = 0; r < size_; ++r) world_ranks_.push_back(world_ranks_text(comm_, {r}));
}

HaloChannel::~HaloChannel() { release_communicator(comm_); }

void HaloChannel::begin_call() {
  last_ = HaloTraffic();
  last_.bytes_to_rank.assign(static_cast<size_t>(size_), 0);
}

void HaloChannel::count_send(int peer, int64_t bytes) {
  for (HaloTraffic* t : {&last_, &totals_}) {
    t->bytes_sent += bytes;
    t->messages_sent += 1;
    t->bytes_to_rank[static_cast<size_t>(peer)] += bytes;
  }
}

namespace {

enum class Pass { kFill, kAdjoint };

// Each pass and dimension has its own pair of tags on the private communicator: a rank running a fill while its
// neighbour runs an adjoint (a bug in the caller) then times out instead of exchanging wrong data.
int tag_of(Pass pass, int dimension, bool toward_high) {
  return (pass == Pass::kFill ? 0 : 8) + 2 * dimension + (toward_high ? 0 : 1);
}

// The padded block as a 3-d array (leading extents of 1 for fewer dimensions) and its halos.
struct Geometry {
  HaloArray padded;
  std::array<int64_t, 3> low{}, extent{1, 1, 1}, high{};
  int first = 0;  // internal index of spatial dimension 1

  explicit Geometry(const HaloBlock& b) : first(3 - static_cast<int>(b.dims.size())) {
    padded.planes = b.samples * b.channels;
    for (size_t d = 0; d < b.dims.size(); ++d) {
      const size_t a = static_cast<size_t>(first) + d;
      low[a] = b.dims[d].halo_low;
      extent[a] = b.dims[d].extent();
      high[a] = b.dims[d].halo_high;
      padded.extents[a] = low[a] + extent[a] + high[a];
    }
  }
  HaloBox interior() const {
    HaloBox box;
    for (size_t j = 0; j < 3; ++j) {
      box.begin[j] = low[j];
      box.end[j] = low[j] + extent[j];
    }
    return box;
  }
  // Along internal dimension `a`: [begin, end); the dimensions before `a` whole (their halos are filled),
  // those after only their interior.
  HaloBox strip(size_t a, int64_t begin, int64_t end) const {
    HaloBox box = interior();
    for (size_t j = 0; j < a; ++j) {
      box.begin[j] = 0;
      box.end[j] = padded.extents[j];
    }
    box.begin[a] = begin;
    box.end[a] = end;
    return box;
  }
};

// The four regions one dimension's step moves: sent to / received from each neighbour.
struct Step {
  HaloBox to_low, to_high, from_low, from_high;
};

Step step_of(const Geometry& g, size_t a, Pass pass) {
  const int64_t l = g.low[a], e = g.extent[a], h = g.high[a];
  const HaloBox edge_low = g.strip(a, l, l + h);   // feeds the low neighbour's high halo
  const HaloBox edge_high = g.strip(a, e, e + l);  // feeds the high neighbour's low halo
  const HaloBox halo_low = g.strip(a, 0, l);
  const HaloBox halo_high = g.strip(a, l + e, l + e + h);
  if (pass == Pass::kFill) return Step{edge_low, edge_high, halo_low, halo_high};
  return Step{halo_low, halo_high, edge_low, edge_high};
}

struct Buffers {
  std::vector<float> to_low, to_high, from_low, from_high;
};

// The requests of one step and the buffers they use. If a request cannot be finished (after a TIMEOUT), MPI may
// still write into or read from its buffer when the silent peer wakes up: the buffers are then kept for the rest
// of the process in a list reachable from a global (request_wait.h; also not a leak to LeakSanitizer).
class InFlight {
 public:
  InFlight() : buffers_(std::make_unique<Buffers>()) {}
  ~InFlight() {
    bool finished = true;
    for (MPI_Request& r : requests_) finished = finish_or_abandon(r) && finished;
    if (!finished) keep_forever(std::move(buffers_));
  }
  InFlight(const InFlight&) = delete;
  InFlight& operator=(const InFlight&) = delete;
  Buffers& buffers() { return *buffers_; }
  MPI_Request& request(size_t i) { return requests_[i]; }

 private:
  static void keep_forever(std::unique_ptr<Buffers> buffers) {
    static std::mutex mutex;
    static auto* kept = new std::vector<std::unique_ptr<Buffers>>();  // NOLINT: never freed on purpose
    const std::lock_guard<std::mutex> lock(mutex);
    kept->push_back(std::move(buffers));
  }
  std::unique_ptr<Buffers> buffers_;
  std::array<MPI_Request, 4> requests_{MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
};

const char* pass_name(Pass pass) { return pass == Pass::kFill ? "halo fill" : "halo adjoint"; }

std::string what_of(const HaloChannel& channel, Pass pass, size_t d, size_t dims, bool receive, bool low, int peer,
                    size_t floats) {
  return std::string(pass_name(pass)) + ", spatial dimension " + std::to_string(d + 1) + " of " +
         std::to_string(dims) + ": " + (receive ? "receive of " : "send of ") + std::to_string(floats) +
         " floats " + (receive ? "from" : "to") + " the " + (low ? "low" : "high") + " neighbour, " +
         channel.world_rank_text(peer);
}

// One dimension's messages: post both receives and both sends, then wait for all four (receives first, so a
// silent neighbour is named by what this rank did not get). Zero-width strips are not sent (both sides know).
void exchange(HaloChannel& channel, const HaloDimension& dim, size_t d, size_t dims, Pass pass, InFlight& flight) {
  Buffers& b = flight.buffers();
  const MPI_Comm comm = channel.comm();
  const int up = tag_of(pass, static_cast<int>(d), true), down = tag_of(pass, static_cast<int>(d), false);
  struct Message {
    std::vector<float>* buffer;
    int peer, tag;
    bool receive, low;
  };
  const Message messages[4] = {{&b.from_low, dim.low_rank, up, true, true},
                               {&b.from_high, dim.high_rank, down, true, false},
                               {&b.to_low, dim.low_rank, down, false, true},
                               {&b.to_high, dim.high_rank, up, false, false}};
  for (size_t i = 0; i < 4; ++i) {
    const Message& m = messages[i];
    if (m.buffer->empty()) continue;
    const int count = static_cast<int>(m.buffer->size());  // fits: check_halo_block
    if (m.receive) {
      check_mpi(MPI_Irecv(m.buffer->data(), count, MPI_FLOAT, m.peer, m.tag, comm, &flight.request(i)),
                "MPI_Irecv (halo exchange)");
    } else {
      check_mpi(MPI_Isend(m.buffer->data(), count, MPI_FLOAT, m.peer, m.tag, comm, &flight.request(i)),
                "MPI_Isend (halo exchange)");
      channel.count_send(m.peer, static_cast<int64_t>(m.buffer->size() * sizeof(float)));
    }
  }
  for (size_t i = 0; i < 4; ++i) {
    const Message& m = messages[i];
    if (m.buffer->empty()) continue;
    wait_for(flight.request(i), what_of(channel, pass, d, dims, m.receive, m.low, m.peer, m.buffer->size()));
  }
}

// A kReflect side along internal dimension `a`: the fill copies the block's planes l + m (low side) or
// l + e − 1 − m (high side) into the halo planes l − m or l + e − 1 + m, m = 1 .. width (the edge point itself not
// repeated); the adjoint adds each halo plane onto its mirror, m ascending. Planes span the dimensions before `a`
// whole (their halos are filled by then) and the later ones' interior, like the exchanged strips.
void reflect_side(const Geometry& g, size_t a, bool low, Pass pass, float* array) {
  const int64_t l = g.low[a], e = g.extent[a], width = low ? l : g.high[a];
  std::vector<float> plane;
  for (int64_t m = 1; m <= width; ++m) {
    const int64_t inside = low ? l + m : l + e - 1 - m, halo = low ? l - m : l + e - 1 + m;
    const HaloBox from = g.strip(a, pass == Pass::kFill ? inside : halo, (pass == Pass::kFill ? inside : halo) + 1);
    const HaloBox to = g.strip(a, pass == Pass::kFill ? halo : inside, (pass == Pass::kFill ? halo : inside) + 1);
    plane.resize(static_cast<size_t>(from.points() * g.padded.planes));
    pack_box(array, g.padded, from, plane.data());
    pass == Pass::kFill ? unpack_box(plane.data(), g.padded, to, array) : add_box(plane.data(), g.padded, to, array);
  }
}

// A side that does not exchange: the fill zeroes or reflects it, the adjoint drops or folds back its gradient.
void closed_side(const Geometry& g, size_t a, const HaloBox& halo, HaloSide side, bool low, Pass pass,
                 float* array) {
  if (side == HaloSide::kReflect) {
    reflect_side(g, a, low, pass, array);
  } else if (pass == Pass::kFill) {
    zero_box(g.padded, halo, array);
  }
}

// One dimension's step of either pass on `array` (the padded block or its gradient). A kZeros or kReflect side
// moves nothing between ranks (closed_side).
void step(HaloChannel& channel, const HaloBlock& layout, const Geometry& g, size_t d, Pass pass, float* array) {
  const HaloDimension& dim = layout.dims[d];
  if (dim.halo_low == 0 && dim.halo_high == 0) return;
  const size_t a = static_cast<size_t>(g.first) + d;
  const Step s = step_of(g, a, pass);
  const bool low_open = dim.fill_low == HaloSide::kNeighbour, high_open = dim.fill_high == HaloSide::kNeighbour;
  InFlight flight;
  Buffers& b = flight.buffers();
  auto floats = [&](const HaloBox& box) { return static_cast<size_t>(box.points() * g.padded.planes); };
  b.to_low.resize(low_open ? floats(s.to_low) : 0);
  b.to_high.resize(high_open ? floats(s.to_high) : 0);
  if (low_open) pack_box(array, g.padded, s.to_low, b.to_low.data());
  if (high_open) pack_box(array, g.padded, s.to_high, b.to_high.data());
  if (dim.single_block()) {
    // Its own neighbour: what goes up comes back from below, and the other way round (both sides alike).
    b.from_low = b.to_high;
    b.from_high = b.to_low;
  } else {
    b.from_low.resize(low_open ? floats(s.from_low) : 0);
    b.from_high.resize(high_open ? floats(s.from_high) : 0);
    exchange(channel, dim, d, layout.dims.size(), pass, flight);
  }
  // The fixed order: the low side first, then the high one (the adjoint: the low neighbour's contribution or the
  // low halo's mirror first).
  if (!low_open) {
    closed_side(g, a, s.from_low, dim.fill_low, true, pass, array);
  } else if (pass == Pass::kFill) {
    unpack_box(b.from_low.data(), g.padded, s.from_low, array);
  } else {
    add_box(b.from_low.data(), g.padded, s.from_low, array);
  }
  if (!high_open) {
    closed_side(g, a, s.from_high, dim.fill_high, false, pass, array);
  } else if (pass == Pass::kFill) {
    unpack_box(b.from_high.data(), g.padded, s.from_high, array);
  } else {
    add_box(b.from_high.data(), g.padded, s.from_high, array);
  }
}

void check_call(const HaloChannel& channel, const HaloBlock& layout, const void* in, const void* out,
                const char* op) {
  check_halo_block(layout, channel.size(), channel.rank());
  if (in == nullptr || out == nullptr) {
    throw Error(ErrorCode::kInvalidArgument, std::string(op) + ": null data pointer");
  }
}

}  // namespace

void halo_fill(HaloChannel& channel, const HaloBlock& layout, const float* block, float* padded) {
  check_call(channel, layout, block, padded, "halo fill");
  channel.begin_call();
  const Geometry g(layout);
  unpack_box(block, g.padded, g.interior(), padded);
  for (size_t d = 0; d < layout.dims.size(); ++d) step(channel, layout, g, d, Pass::kFill, padded);
}

void halo_adjoint(HaloChannel& channel, const HaloBlock& layout, const float* padded_gradient,
                  float* block_gradient) {
  check_call(channel, layout, padded_gradient, block_gradient, "halo adjoint");
  channel.begin_call();
  const Geometry g(layout);
  std::vector<float> work(padded_gradient, padded_gradient + layout.padded_floats());
  for (size_t d = layout.dims.size(); d-- > 0;) step(channel, layout, g, d, Pass::kAdjoint, work.data());
  pack_box(work.data(), g.padded, g.interior(), block_gradient);
}

}  // namespace sluice::comm
