// The emulator's side of the timeline (docs/timeline.md), internal: the hook the definitions of
// common/'s wrappers call (mbarrier.cpp, tma.cpp, wgmma.cpp, tcgen05.cpp) to record an event of
// the calling emulated thread. It does nothing unless the harness armed the timeline (emu.h,
// trace_arm), and never touches the emulator's state: a traced run is scheduled exactly as an
// untraced one with the same seed. emu/trace.cpp defines it.
#pragma once

#include <cstdint>

#include "common/trace.h"

namespace gemm::emu {

// Records `kind` for the calling thread if it is its warp's recording thread (trace_tile_begin) of
// a recorded CTA; `bar`: an mbarrier in the CTA's shared memory, or null; `name`: a wait's barrier.
void trace_event(TraceKind kind, const void* bar, int64_t arg, const char* name = nullptr);

}  // namespace gemm::emu
