// The timeline (docs/timeline.md): the harness's side of a traced run. It allocates the trace
// buffer on the GPU (a GEMM_TRACE=ON build) or arms the emulator, reads the record back
// (common/trace.h) and writes it as a Chrome trace (the Trace Event Format, which Perfetto UI and
// chrome://tracing open): one process per recorded CTA, one thread per role. The step driver's
// --trace uses it; tools/timeline draws the picture from the file.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/trace.h"

namespace gemm {

// Whether the CUDA kernels of this build record (CMake option GEMM_TRACE). The emulator records in
// every build.
#if defined(GEMM_TRACE) && GEMM_TRACE
inline constexpr bool kTraceBuild = true;
#else
inline constexpr bool kTraceBuild = false;
#endif

// What to record.
struct TraceRequest {
  std::vector<int> sms;      // SMs whose CTAs record (GPU: %smid; emulator: blockIdx.x % its SMs); empty: all
  uint32_t max_ctas = 32;    // CTAs recorded at most, in the order they start
  uint32_t capacity = 8192;  // events kept per recording thread
};

// Parses "0,1" or "0-3" (SM indices); an error message, or "".
std::string parse_sm_list(const std::string& text, std::vector<int>* sms);

// The GPU side: the buffer, armed (common/trace.h, trace_launch_state) for every launch of this
// process until it is destroyed. A build without GEMM_TRACE allocates nothing, and its kernels
// record nothing.
class GpuTrace {
 public:
  explicit GpuTrace(const TraceRequest& request);
  ~GpuTrace();
  GpuTrace(const GpuTrace&) = delete;
  GpuTrace& operator=(const GpuTrace&) = delete;
  // The record of the last launch, once it has completed (synchronises the device).
  TraceDump collect() const;

 private:
  void* buffer_ = nullptr;
  TraceRequest request_;
};

// The emulator side: arms it for the launches that follow (emu::trace_arm); take() ends it.
void emu_trace_arm(const TraceRequest& request);
TraceDump emu_trace_take();

// What the file says about the run (its "otherData"), beside the record itself.
struct TraceMeta {
  int step = 0;
  std::string step_name;  // "warp_specialization"
  std::string track;      // "hopper"
  std::string device;     // "NVIDIA H200" or "emulator, 4 SMs, seed 1"
  std::string shape;      // "4096x4096x4096"
  std::string date;       // "2026-11-28" (UTC)
  std::vector<int> sms;   // the SMs asked for
};

// The Chrome trace of a record, and a one-line summary ("12 tracks of 4 CTAs, 9310 events").
std::string chrome_trace(const TraceDump& dump, const TraceMeta& meta, std::string* summary = nullptr);

// Today's date, UTC, as YYYY-MM-DD.
std::string utc_date();

}  // namespace gemm
