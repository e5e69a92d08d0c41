// Internal: one function per schedule family. Arguments are already checked by make_schedule().
#pragma once

#include "core/schedule/schedule.h"

namespace sluice {
namespace schedule {
namespace detail {

Schedule gpipe(int ranks, int microbatches);
Schedule one_f_one_b(int ranks, int microbatches);
Schedule interleaved_one_f_one_b(int ranks, int microbatches, int chunks);
Schedule zero_bubble_h1(int ranks, int microbatches);
Schedule zero_bubble_v(int ranks, int microbatches);

// Empty schedule with metadata and placement filled in.
Schedule empty_schedule(const char* name, int ranks, int microbatches, int chunks, std::vector<int> placement);

}  // namespace detail
}  // namespace schedule
}  // namespace sluice
