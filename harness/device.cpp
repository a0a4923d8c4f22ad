#include "harness/device.h"

#include <cuda_runtime.h>

#include "harness/check.h"

namespace gemm {
namespace {

int attribute(cudaDeviceAttr attr, int device) {
  int value = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&value, attr, device));
  return value;
}

std::string version_string(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

}  // namespace

DeviceInfo query_device(int device) {
  DeviceInfo info;
  info.device = device;
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  info.name = prop.name;
  info.sm_count = attribute(cudaDevAttrMultiProcessorCount, device);
  info.clock_mhz = attribute(cudaDevAttrClockRate, device) / 1000;  // kHz
  info.memory_clock_mhz = attribute(cudaDevAttrMemoryClockRate, device) / 1000;
  info.cc_major = attribute(cudaDevAttrComputeCapabilityMajor, device);
  info.cc_minor = attribute(cudaDevAttrComputeCapabilityMinor, device);
  info.l2_bytes = attribute(cudaDevAttrL2CacheSize, device);
  info.smem_optin_bytes = attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
  CUDA_CHECK(cudaDriverGetVersion(&info.driver_version));
  CUDA_CHECK(cudaRuntimeGetVersion(&info.runtime_version));
  return info;
}

std::string describe(const DeviceInfo& d) {
  return d.name + ", " + std::to_string(d.sm_count) + " SMs, " + std::to_string(d.clock_mhz) + " MHz, sm_" +
         std::to_string(d.cc_major) + std::to_string(d.cc_minor) + ", driver " + version_string(d.driver_version) +
         ", runtime " + version_string(d.runtime_version);
}

}  // namespace gemm
