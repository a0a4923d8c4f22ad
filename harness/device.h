// What GPU this is: the facts a result needs next to it (name, SMs, clocks, versions).
#pragma once

#include <cstdint>
#include <string>

namespace gemm {

struct DeviceInfo {
  int device = 0;
  std::string name;
  int sm_count = 0;
  int clock_mhz = 0;         // peak SM clock
  int memory_clock_mhz = 0;  // peak memory clock
  int cc_major = 0, cc_minor = 0;
  int64_t l2_bytes = 0;
  int64_t smem_optin_bytes = 0;  // shared memory per block, opted in
  int driver_version = 0;        // e.g. 13000 = CUDA 13.0
  int runtime_version = 0;
};

// Reads the device's attributes (CUDA 13 removed the clock fields of cudaDeviceProp, so clocks
// come from cudaDeviceGetAttribute). Throws gemm::Error if a query fails.
DeviceInfo query_device(int device = 0);

// "NVIDIA H100 80GB HBM3, 132 SMs, 1980 MHz, sm_90, driver 13.0, runtime 13.0"
std::string describe(const DeviceInfo& info);

}  // namespace gemm
