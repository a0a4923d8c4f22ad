// Which track runs a step on a GPU (docs/design.md, "Two tracks, one ladder"): 9.0 hopper, 10.0 blackwell,
// 10.3 blackwell when built for sm_103a, anything else none. A pure function: CPU-testable.
#pragma once

#include <optional>
#include <string_view>

#include "common/problem.h"
#include "harness/step.h"

namespace gemm {

enum class TrackRequest { automatic, hopper, blackwell };

// "auto", "hopper", "blackwell" -> the request; anything else -> nullopt.
std::optional<TrackRequest> parse_track_request(std::string_view text);

struct TrackSelection {
  Status status;                // failed: no track for this GPU, a mismatched request, or not built
  Track track = Track::hopper;  // valid when status.ok()
  StepFn launcher = nullptr;    // info.launcher(track), non-null when status.ok()
};

TrackSelection select_track(int cc_major, int cc_minor, TrackRequest requested, const StepInfo& info);

}  // namespace gemm
