// Counts the global operator new calls a thread makes while counting is on: how the tests
// prove a real-time loop allocates nothing. tests/support/alloc_counter.cc replaces every form
// of the global operator new (plain, array, nothrow, over-aligned), so it is linked only into
// programs of their own marked NO_SANITIZER (the sanitizers' runtimes own operator new).
#pragma once

#include <cstdint>

namespace rtpulse::testutil {

/// Turns counting on or off for the calling thread.
void CountAllocationsInThisThread(bool on);
/// Allocations counted, by every thread, since the last reset.
uint64_t CountedAllocations();
void ResetCountedAllocations();

}  // namespace rtpulse::testutil
