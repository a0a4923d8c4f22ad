#include "harness/track.h"

#include <string>

namespace gemm {

std::optional<TrackRequest> parse_track_request(std::string_view text) {
  if (text == "auto") return TrackRequest::automatic;
  if (text == "hopper") return TrackRequest::hopper;
  if (text == "blackwell") return TrackRequest::blackwell;
  return std::nullopt;
}

TrackSelection select_track(int cc_major, int cc_minor, TrackRequest requested, const StepInfo& info) {
  const std::string sm = "sm_" + std::to_string(cc_major) + std::to_string(cc_minor);
  const std::string step = "step " + std::to_string(info.number);
  TrackSelection sel;

  // The GPU decides the track: the instructions of one track do not exist on the other chip.
  if (cc_major == 9 && cc_minor == 0) {
    sel.track = Track::hopper;
  } else if (cc_major == 10 && cc_minor == 0) {
    sel.track = Track::blackwell;
  } else if (cc_major == 10 && cc_minor == 3 && info.blackwell_sm103a) {
    sel.track = Track::blackwell;
  } else if (cc_major == 10 && cc_minor == 3) {
    sel.status = Status::failure(
        "no track for this GPU (sm_103): the blackwell track was not built for sm_103a "
        "(configure with -DGEMM_SM103A=ON)");
    return sel;
  } else {
    sel.status = Status::failure("no track for this GPU (" + sm +
                                 "): this project builds hopper (sm_90a) and blackwell (sm_100a)");
    return sel;
  }

  if (requested != TrackRequest::automatic) {
    const Track want = requested == TrackRequest::hopper ? Track::hopper : Track::blackwell;
    if (want != sel.track) {
      sel.status = Status::failure(std::string("track ") + track_name(want) + " was requested, but this GPU (" + sm +
                                   ") runs the " + track_name(sel.track) + " track");
      return sel;
    }
  }

  sel.launcher = info.launcher(sel.track);
  if (sel.launcher == nullptr)
    sel.status = Status::failure(step + " was built without the " + track_name(sel.track) + " track, which this GPU (" +
                                 sm + ") needs: add " + track_name(sel.track) + " to GEMM_TRACKS and rebuild");
  return sel;
}

}  // namespace gemm
