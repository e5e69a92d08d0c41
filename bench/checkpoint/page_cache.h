// Page-cache control for the checkpoint benchmark. Caches cannot be dropped system-wide here (no privilege for
// /proc/sys/vm/drop_caches), but a file's own clean pages can be evicted by any process that can open it, which is
// enough to make a read after a write come from the disk instead of from memory.
#pragma once

#include <string>

namespace sluice::bench {

// Drops the file's pages from the page cache (posix_fadvise POSIX_FADV_DONTNEED; GNU dd's iflag=nocache does the
// same). Only clean pages go, so flush (fsync/fdatasync) first. Error(kIo) naming the file when it cannot be opened
// or the kernel refuses the advice.
void evict_from_page_cache(const std::string& path);

// Fraction of the file's pages currently in the page cache, 0 (all on disk) to 1 (all cached), from mincore(). An
// empty file reports 0. Error(kIo) naming the file when it cannot be opened, stat'ed or mapped.
double resident_fraction(const std::string& path);

}  // namespace sluice::bench
