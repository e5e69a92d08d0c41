#include "core/comm/tile_gather.h"

#include <algorithm>
#include <climits>
#include <cstddef>
#include <memory>
#include <string>

#include "core/comm/mpi_context.h"
#include "core/comm/request_wait.h"
#include "core/common/error.h"

namespace sluice::comm {

namespace {

MPI_Datatype type_of(const float*) { return MPI_FLOAT; }
MPI_Datatype type_of(const double*) { return MPI_DOUBLE; }

// What each rank says about its part before the data moves: from these alone every rank decides the same way.
// count = −1 marks a rank whose values are not tiles × values_per_tile.
struct Header {
  int64_t count = 0, values_per_tile = 0, global_tiles = 0;
};

[[noreturn]] void refuse(const std::string& what, const std::string& why) {
  throw Error(ErrorCode::kInvalidArgument, "tile gather (" + what + "): " + why);
}

// Every rank's header on every rank, within comm.timeout.
std::vector<Header> gather_headers(MPI_Comm comm, int size, const Header& mine, const std::string& what) {
  auto all = std::make_unique<std::vector<int64_t>>(static_cast<size_t>(3 * size));
  const int64_t sent[3] = {mine.count, mine.values_per_tile, mine.global_tiles};
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Iallgather(sent, 3, MPI_INT64_T, all->data(), 3, MPI_INT64_T, comm, &request),
            "MPI_Iallgather (tile gather)");
  wait_for_keeping(request, all, "tile counts of " + what + " from " + peers_text(comm));
  std::vector<Header> headers(static_cast<size_t>(size));
  for (size_t r = 0; r < headers.size(); ++r) headers[r] = {(*all)[3 * r], (*all)[3 * r + 1], (*all)[3 * r + 2]};
  return headers;
}

// The same decision on every rank: the headers agree and their tiles can be gathered in int counts.
void check_headers(MPI_Comm comm, const std::vector<Header>& headers, const std::string& what) {
  int64_t total = 0;
  for (size_t r = 0; r < headers.size(); ++r) {
    const Header& h = headers[r];
    const std::string rank = world_ranks_text(comm, {static_cast<int>(r)});
    if (h.count < 0) refuse(what, rank + "'s values are not its tiles x values per tile");
    if (h.values_per_tile != headers[0].values_per_tile || h.global_tiles != headers[0].global_tiles) {
      refuse(what, rank + " has " + std::to_string(h.values_per_tile) + " values per tile of " +
                       std::to_string(h.global_tiles) + " tiles, " + world_ranks_text(comm, {0}) + " " +
                       std::to_string(headers[0].values_per_tile) + " of " + std::to_string(headers[0].global_tiles));
    }
    total += h.count;
  }
  if (headers[0].values_per_tile < 1 || headers[0].global_tiles < 1) {
    refuse(what, "values per tile and tiles must be >= 1, got " + std::to_string(headers[0].values_per_tile) +
                     " and " + std::to_string(headers[0].global_tiles));
  }
  if (total > INT_MAX / headers[0].values_per_tile) {
    refuse(what, std::to_string(total) + " tiles of " + std::to_string(headers[0].values_per_tile) +
                     " values exceed an MPI count (2^31 - 1)");
  }
}

// Where each gathered tile lands: the rank that sent tile t, each tile exactly once.
void check_tiles(MPI_Comm comm, const std::vector<int64_t>& tiles, const std::vector<int>& sender,
                 int64_t global_tiles, const std::string& what) {
  std::vector<int> owner(static_cast<size_t>(global_tiles), -1);
  for (size_t i = 0; i < tiles.size(); ++i) {
    const int64_t t = tiles[i];
    const std::string rank = world_ranks_text(comm, {sender[i]});
    if (t < 0 || t >= global_tiles) {
      refuse(what, rank + " sent tile " + std::to_string(t) + ", outside 0 .. " + std::to_string(global_tiles - 1));
    }
    int& o = owner[static_cast<size_t>(t)];
    if (o >= 0) refuse(what, "tile " + std::to_string(t) + " came from " + world_ranks_text(comm, {o, sender[i]}));
    o = sender[i];
  }
  for (size_t t = 0; t < owner.size(); ++t) {
    if (owner[t] < 0) {
      refuse(what, "tile " + std::to_string(t) + " of " + std::to_string(global_tiles) + " came from no rank");
    }
  }
}

}  // namespace

TileGather::TileGather(HaloChannel& channel) : channel_(channel) {
  totals_.bytes_to_rank.assign(static_cast<size_t>(channel.size()), 0);
  last_ = totals_;
}

void TileGather::count(int64_t bytes) {
  last_ = HaloTraffic();
  last_.bytes_to_rank.assign(static_cast<size_t>(channel_.size()), 0);
  for (int r = 0; r < channel_.size(); ++r) {
    if (r == channel_.rank()) continue;
    for (HaloTraffic* t : {&last_, &totals_}) {
      t->bytes_sent += bytes;
      t->messages_sent += 1;
      t->bytes_to_rank[static_cast<size_t>(r)] += bytes;
    }
  }
}

template <typename T>
std::vector<T> TileGather::gather(const std::vector<int64_t>& tiles, const std::vector<T>& values,
                                  int64_t values_per_tile, int64_t global_tiles, const std::string& what) {
  const MPI_Comm comm = channel_.comm();
  const int size = channel_.size();
  const bool shaped = values_per_tile >= 1 && values.size() == tiles.size() * static_cast<size_t>(values_per_tile);
  const Header mine{shaped ? static_cast<int64_t>(tiles.size()) : -1, values_per_tile, global_tiles};
  const std::vector<Header> headers = gather_headers(comm, size, mine, what);
  check_headers(comm, headers, what);
  struct Buffers {
    std::vector<int64_t> tiles;
    std::vector<T> values;
  };
  auto all = std::make_unique<Buffers>();
  std::vector<int> tile_counts, tile_displs, value_counts, value_displs, sender;
  for (int r = 0; r < size; ++r) {
    const int n = static_cast<int>(headers[static_cast<size_t>(r)].count);  // fits: check_headers
    tile_displs.push_back(static_cast<int>(all->tiles.size()));
    tile_counts.push_back(n);
    value_displs.push_back(static_cast<int>(all->values.size()));
    value_counts.push_back(n * static_cast<int>(values_per_tile));
    all->tiles.resize(all->tiles.size() + static_cast<size_t>(n));
    all->values.resize(all->values.size() + static_cast<size_t>(value_counts.back()));
    sender.insert(sender.end(), static_cast<size_t>(n), r);
  }
  MPI_Request requests[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  check_mpi(MPI_Iallgatherv(tiles.data(), static_cast<int>(tiles.size()), MPI_INT64_T, all->tiles.data(),
                            tile_counts.data(), tile_displs.data(), MPI_INT64_T, comm, &requests[0]),
            "MPI_Iallgatherv (tile gather, indices)");
  check_mpi(MPI_Iallgatherv(values.data(), static_cast<int>(values.size()), type_of(values.data()),
                            all->values.data(), value_counts.data(), value_displs.data(), type_of(values.data()),
                            comm, &requests[1]),
            "MPI_Iallgatherv (tile gather, values)");
  count(static_cast<int64_t>(tiles.size() * sizeof(int64_t) + values.size() * sizeof(T)));
  wait_for_keeping(requests[0], all, "tile indices of " + what + " from " + peers_text(comm));
  wait_for_keeping(requests[1], all, "tile values of " + what + " from " + peers_text(comm));
  check_tiles(comm, all->tiles, sender, global_tiles, what);
  std::vector<T> ordered(all->values.size());
  const size_t per = static_cast<size_t>(values_per_tile);
  for (size_t i = 0; i < all->tiles.size(); ++i) {
    std::copy(all->values.begin() + static_cast<std::ptrdiff_t>(i * per),
              all->values.begin() + static_cast<std::ptrdiff_t>((i + 1) * per),
              ordered.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(all->tiles[i]) * per));
  }
  return ordered;
}

std::vector<float> TileGather::all_tiles(const std::vector<int64_t>& tiles, const std::vector<float>& values,
                                         int64_t values_per_tile, int64_t global_tiles, const std::string& what) {
  return gather(tiles, values, values_per_tile, global_tiles, what);
}

std::vector<double> TileGather::all_tiles(const std::vector<int64_t>& tiles, const std::vector<double>& values,
                                          int64_t values_per_tile, int64_t global_tiles, const std::string& what) {
  return gather(tiles, values, values_per_tile, global_tiles, what);
}

}  // namespace sluice::comm
