// The cross-rank gather of per-tile values that the exact reductions of a domain-split field need (docs/DOMAIN.md,
// "Tiles and exact reductions", order rule 2): every rank of the domain group holds the values of its own tiles
// (a parameter gradient's partial per tile, a loss sum per tile); after the gather every rank holds every tile's
// values in global tile order, copies and so exact, and adds them in that order itself. The sum is then the same
// bits on every rank and for every split.
//
// Collective over the HaloChannel's private communicator (halo_exchange.h: the exchange only sends point to point
// on it, and MPI keeps collectives apart from point-to-point messages), so every rank of the group must run the same
// gathers in the same order. Three non-blocking collectives finished by the bounded wait (request_wait.h): a
// TIMEOUT names what was gathered and the peers waited for. Every check is made from gathered data, so all ranks
// refuse together or none does.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/comm/halo_exchange.h"

namespace sluice::comm {

// Gathers of tiles over one HaloChannel's communicator, and what they sent.
class TileGather {
 public:
  explicit TileGather(HaloChannel& channel);

  // `tiles`: this rank's global tile indices (any order); `values`: values_per_tile values per tile, in the order
  // of `tiles`. Returns on every rank [global_tiles][values_per_tile]: tile t's values at t · values_per_tile.
  // Error(kInvalidArgument) on every rank, naming `what`, a tile and the world ranks, when the tiles of all ranks
  // are not 0 .. global_tiles − 1 each exactly once (a tile missing, repeated or out of range), when ranks disagree
  // on values_per_tile or global_tiles, when a rank's values are not tiles × values_per_tile (naming it), or when
  // the gathered values exceed 2^31 − 1. Error(kTimeout) / Error(kComm) as every wait of core/comm.
  std::vector<float> all_tiles(const std::vector<int64_t>& tiles, const std::vector<float>& values,
                               int64_t values_per_tile, int64_t global_tiles, const std::string& what);
  std::vector<double> all_tiles(const std::vector<int64_t>& tiles, const std::vector<double>& values,
                                int64_t values_per_tile, int64_t global_tiles, const std::string& what);

  // What this rank's tiles cost: an all-gather must deliver them (indices and values) to every other rank of the
  // group, so bytes_to_rank[r] counts them once for each r but this rank and messages_sent one per peer. The
  // algorithm MPI picks (a ring, a tree) decides how those bytes travel; this is the volume, for estimates.
  // last_call: the latest all_tiles; totals: every call since the gather was made.
  const HaloTraffic& last_call() const { return last_; }
  const HaloTraffic& totals() const { return totals_; }

 private:
  template <typename T>
  std::vector<T> gather(const std::vector<int64_t>& tiles, const std::vector<T>& values, int64_t values_per_tile,
                        int64_t global_tiles, const std::string& what);
  void count(int64_t bytes);

  HaloChannel& channel_;
  HaloTraffic last_;
  HaloTraffic totals_;
};

}  // namespace sluice::comm
