// The deliberately broken kernels of tests/emu/broken/: each must fail on the emulator with the
// message that names its rule. Asynchronous work completes as late as possible here
// (Options::async_period = 0: only when every thread waits), so that a missing wait is caught on
// every run, whatever the seed; one test also runs the missing waits with the default random
// completion over several seeds, where they must still never pass.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "emu/emu.h"
#include "harness/backend.h"
#include "harness/reference.h"
#include "harness/run.h"
#include "tests/emu/broken/broken.h"

namespace gemm {
namespace {

using broken::Bug;

// The kernel the current test runs (a StepFn cannot carry it).
std::function<Status(const Problem&)> g_kernel;
Status run_current(const Problem& p, cudaStream_t) { return g_kernel(p); }

struct Outcome {
  Status status;
  bool matched = false;  // D equals the reference (only meaningful when status.ok())
  std::string summary;
};

Outcome run(std::function<Status(const Problem&)> kernel, Problem shape, uint64_t seed = 1, int async_period = 0) {
  emu::Options o = emu::options();
  o.async_period = async_period;
  emu::set_options(o);
  const std::unique_ptr<Backend> backend = make_emu_backend(EmuSettings{2, seed});
  Operands ops(*backend, shape, 7, InputMode::exact_int);
  CpuReference reference;
  g_kernel = std::move(kernel);
  const CheckOutcome out = run_and_check(*backend, &run_current, ops, reference);
  o.async_period = emu::Options{}.async_period;
  emu::set_options(o);
  return {out.status, out.status.ok() && out.result.ok, out.status.ok() ? summary(out.result) : ""};
}

struct Case {
  const char* name;
  bool blackwell;  // track
  Bug bug;
  Problem shape;
  std::vector<std::string> expect;  // substrings of the failure message
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

constexpr Problem kTwoTiles{256, 128, 128};  // 2 tiles, 2 K slices
constexpr Problem kOneSlice{128, 128, 64};

std::vector<Case> cases() {
  std::vector<Case> v;
  for (bool bw : {false, true}) {
    const std::string t = bw ? "blackwell_" : "hopper_";
    auto add = [&](const char* name, Bug bug, Problem shape, std::vector<std::string> expect) {
      static std::vector<std::string> names;  // keeps the names alive
      names.push_back(t + name);
      v.push_back({names.back().c_str(), bw, bug, shape, std::move(expect)});
    };
    if (bw)
      add("missing_wait", Bug::missing_wait, kOneSlice,
          {"tcgen05.ld of TMEM an MMA is still writing", "after that MMA arrives, is missing: CTA (0,0,0) thread",
           "never waited on it"});
    else
      add("missing_wait", Bug::missing_wait, kOneSlice,
          {"wgmma accumulators not waited for", "a wait that covers the last wgmma group is missing"});
    add("wrong_initial_phase", Bug::wrong_initial_phase, kTwoTiles,
        {"mbarrier wait passed early", "for parity 1 and passed at once: the barrier had completed no phase yet",
         "a wrong initial phase?"});
    add("misaligned_tile", Bug::misaligned_tile, kTwoTiles,
        {"swizzled tile not aligned to its atom", "lies 128 bytes into a 1024-byte 128-byte swizzle atom"});
    add("missing_proxy_fence", Bug::missing_proxy_fence, kTwoTiles,
        {"missing fence.proxy.async", "wrote with ordinary stores and has not fenced"});
    add("expect_tx_too_few", Bug::expect_tx_too_few, kTwoTiles,
        {"expect_tx bytes differ from the bytes delivered", "announced fewer bytes than the loads deliver",
         "(announced by the arrive.expect_tx at tests/emu/broken/",
         "TMA load(s) crediting that phase are still in "
         "flight (cp.async.bulk.tensor.2d (TMA load) issued by"});
    add("expect_tx_too_many", Bug::expect_tx_too_many, kTwoTiles,
        {"deadlock:", "'full'", "expect_tx announced more bytes (33792) than the loads deliver (32768 so far)"});
    add("extra_arrival", Bug::extra_arrival, kTwoTiles,
        {"more arrivals than the init count", "(init count 1, phase 0, 32768 tx bytes pending)"});
    add("barrier_not_fenced", Bug::barrier_not_fenced, kTwoTiles,
        {"mbarrier used before fence.mbarrier_init", "has not run fence.mbarrier_init"});
    if (bw) {
      add("wrong_arrival_count", Bug::wrong_arrival_count, kTwoTiles,
          {"deadlock:", "mbarrier 'mma_done'", "1 of 2 arrivals came", "got 1 of its 2 arrivals"});
      add("wrong_n", Bug::wrong_n, kTwoTiles,
          {"tcgen05.ld of unwritten TMEM", "column 64", "is N in the instruction descriptor"});
      add("illegal_n", Bug::illegal_n, kTwoTiles,
          {"tcgen05 instruction descriptor", "illegal shape M=128 N=120 for cta_group::1"});
      add("bit46_cleared", Bug::bit46_cleared, kTwoTiles,
          {"tcgen05 shared-memory descriptor", "bits 46-48 must be the fixed constant 0b001 (got 0b000"});
      add("missing_tcgen05_fence", Bug::missing_tcgen05_fence, kTwoTiles,
          {"missing tcgen05.fence::after_thread_sync", "tcgen05.ld.32x32b.x32 after a thread synchronisation"});
      add("ld_outside_lanes", Bug::ld_outside_lanes, kTwoTiles,
          {"TMEM access outside the warp's lanes", "(lanes 0-31) by warp", "which may access only lanes"});
      add("alloc_not_pow2", Bug::alloc_not_pow2, kTwoTiles,
          {"TMEM allocation", "tcgen05.alloc of 96 columns: the count must be a power of 2 from 32 to 512"});
      // Lane 0 waits at tcgen05.alloc while the others reach the next .sync.aligned instruction.
      add("alloc_one_thread", Bug::alloc_one_thread, kTwoTiles,
          {"divergent .sync.aligned instruction", "tcgen05.alloc", "tcgen05.relinquish_alloc_permit",
           "every thread must execute the same instruction, convergently"});
      add("mixed_cta_group", Bug::mixed_cta_group, kTwoTiles,
          {"mixed cta_group in one kernel", "tcgen05.commit with cta_group::2"});
      add("dealloc_outstanding_ld", Bug::dealloc_outstanding_ld, kTwoTiles,
          {"dealloc while a load is outstanding", "has not completed (tcgen05.wait::ld"});
      add("no_dealloc", Bug::no_dealloc, kTwoTiles, {"TMEM not deallocated", "128 TMEM columns at column 0"});
      add("accumulate_first", Bug::accumulate_first, kTwoTiles,
          {"MMA accumulates into unwritten TMEM", "must pass enable_input_d = false"});
    } else {
      add("missing_wgmma_fence", Bug::missing_wgmma_fence, kTwoTiles, {"wgmma issued without wgmma.fence"});
      add("acc_touched", Bug::acc_touched, kTwoTiles,
          {"accumulators touched before the covering wait", "wrote its accumulator registers"});
      add("store_no_wait", Bug::store_no_wait, kTwoTiles,
          {"TMA store still reading shared memory at exit", "cp.async.bulk.wait_group.read 0 is missing"});
      add("store_overwritten", Bug::store_overwritten, kTwoTiles,
          {"shared memory overwritten while an asynchronous operation reads it", "the TMA store group committed at",
           "its issuer has not passed a cp.async.bulk.wait_group.read covering it"});
      add("divergent_wgmma", Bug::divergent_wgmma, kTwoTiles,
          {"divergent .sync.aligned instruction", "wgmma.commit_group", "wgmma.mma_async"});
      add("setmaxnreg_partial", Bug::setmaxnreg_partial, kTwoTiles,
          {"deadlock:", "setmaxnreg.dec (.sync.aligned): 96 of 128 threads arrived",
           "warpgroup 0 was reached by warps 0-2 only"});
      add("setmaxnreg_mismatch", Bug::setmaxnreg_mismatch, kTwoTiles,
          {"setmaxnreg: tests/emu/broken/hopper.cpp:", "setmaxnreg.dec 72 in thread 96 and 80 in thread 0",
           "one register count"});
    }
  }
  return v;
}

class Broken : public ::testing::TestWithParam<Case> {};

TEST_P(Broken, FailsWithItsRule) {
  const Case& c = GetParam();
  const Outcome out = run(
      [&](const Problem& p) { return c.blackwell ? broken::blackwell(c.bug, p) : broken::hopper(c.bug, p); }, c.shape);
  ASSERT_FALSE(out.status.ok()) << "the broken kernel ran without a failure; D "
                                << (out.matched ? "matched" : "differed") << ": " << out.summary;
  if (std::getenv("GEMM_EMU_SHOW")) std::printf("--- %s\n%s\n", c.name, out.status.message().c_str());
  for (const std::string& e : c.expect)
    EXPECT_NE(out.status.message().find(e), std::string::npos) << "expected \"" << e << "\" in:\n"
                                                               << out.status.message();
  EXPECT_EQ(out.status.message().rfind("emulator: ", 0), 0u) << out.status.message();
  EXPECT_NE(out.status.message().find("\n  replay: --emu-seed 1"), std::string::npos) << out.status.message();
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(Emu, Broken, ::testing::ValuesIn(cases()), case_name);

// The working versions the broken ones differ from.
TEST(BrokenControl, TheUnbrokenKernelsMatch) {
  for (bool bw : {false, true})
    for (Problem shape : {kTwoTiles, kOneSlice, Problem{200, 136, 72}}) {
      const Outcome out =
          run([&](const Problem& p) { return bw ? broken::blackwell(Bug::none, p) : broken::hopper(Bug::none, p); },
              shape, 3, 32);
      ASSERT_TRUE(out.status.ok()) << (bw ? "blackwell " : "hopper ") << out.status.message();
      EXPECT_TRUE(out.matched) << out.summary;
    }
}

// With the default random completion a missing wait is still never luck: it fails with a rule or
// gives wrong data, whatever the seed.
TEST(BrokenRandom, MissingWaitsNeverPass) {
  for (uint64_t seed = 1; seed <= 6; ++seed)
    for (bool bw : {false, true})
      for (Bug bug : {Bug::missing_wait, Bug::wrong_initial_phase}) {
        // A wrong initial phase on hopper can still be luck: the TMA may complete while the 128
        // threads gather for the wgmma (rarely: about once per async_period rounds).
        if (!bw && bug == Bug::wrong_initial_phase) continue;
        const Outcome out =
            run([&](const Problem& p) { return bw ? broken::blackwell(bug, p) : broken::hopper(bug, p); },
                bug == Bug::missing_wait ? kOneSlice : kTwoTiles, seed, 32);
        EXPECT_FALSE(out.status.ok() && out.matched)
            << (bw ? "blackwell " : "hopper ") << static_cast<int>(bug) << " passed with seed " << seed;
      }
}

// --- clusters and the output range ------------------------------------------------------------

TEST(BrokenCluster, RemoteArriveBeforeAClusterBarrier) {
  const Outcome out = run(broken::remote_arrive_before_cluster_sync, {128, 128, 64});
  ASSERT_FALSE(out.status.ok());
  EXPECT_NE(out.status.message().find("mbarrier used before"), std::string::npos) << out.status.message();
}

TEST(BrokenCluster, MulticastIntoAnExitedCta) {
  const Outcome out = run(broken::exit_with_peer_traffic, {128, 128, 64});
  ASSERT_FALSE(out.status.ok());
  EXPECT_NE(out.status.message().find("CTA exiting with peer traffic in flight"), std::string::npos)
      << out.status.message();
}

TEST(BrokenCluster, AlignedClusterBarrierNeedsAConvergedWarp) {
  for (uint64_t seed : {1, 2, 3}) {
    const Outcome good = run(broken::cluster_sync_reconverged, {128, 128, 64}, seed, 32);
    EXPECT_TRUE(good.status.ok()) << good.status.message();
    const Outcome bad = run(broken::cluster_sync_diverged, {128, 128, 64}, seed, 32);
    ASSERT_FALSE(bad.status.ok());
    const std::string& m = bad.status.message();
    if (std::getenv("GEMM_EMU_SHOW")) std::printf("--- cluster_sync_diverged\n%s\n", m.c_str());
    EXPECT_NE(m.find("lanes not converged at a .sync.aligned instruction: tests/emu/broken/cluster.cpp:"),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("barrier.cluster.arrive.release.aligned is reached by lane 0 of warp 0 after waiting on "
                     "mbarrier 'bar'"),
              std::string::npos)
        << m;
  }
}

// A relaxed arrive orders execution, not memory: stores it is meant to publish are not ordered
// before the TMA store that reads them.
TEST(BrokenCluster, RelaxedArrivePublishesNothing) {
  for (uint64_t seed : {1, 2, 3}) {
    const Outcome good = run(broken::staged_release_arrive, {128, 128, 64}, seed, 32);
    EXPECT_TRUE(good.status.ok()) << good.status.message();
    const Outcome bad = run(broken::staged_relaxed_arrive, {128, 128, 64}, seed, 32);
    ASSERT_FALSE(bad.status.ok());
    const std::string& m = bad.status.message();
    if (std::getenv("GEMM_EMU_SHOW")) std::printf("--- staged_relaxed_arrive\n%s\n", m.c_str());
    EXPECT_NE(m.find("asynchronous read not ordered after the stores: tests/emu/broken/cluster.cpp:"),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("wrote with ordinary stores, and no synchronisation orders those stores before this operation"),
              std::string::npos)
        << m;
  }
}

TEST(BrokenCluster, CtaPairMatches) {
  for (uint64_t seed : {1, 2, 3}) {
    const Outcome out = run(broken::cta_pair_ok, {256, 256, 64}, seed, 32);
    ASSERT_TRUE(out.status.ok()) << out.status.message();
    EXPECT_TRUE(out.matched) << out.summary;
  }
}

// M256 N128 (step 9's pair MMA): each CTA holds 64 rows of B, the leader's the first 64 columns of
// D, the peer's the next; each CTA's accumulator is 128 lanes x 128 columns of its own TMEM.
TEST(BrokenCluster, CtaPairM256N128Matches) {
  for (uint64_t seed : {1, 2, 3}) {
    const Outcome out = run(broken::cta_pair_n128_ok, {256, 128, 64}, seed, 32);
    ASSERT_TRUE(out.status.ok()) << out.status.message();
    EXPECT_TRUE(out.matched) << out.summary;
  }
}

// The pair's TMA loads complete on the barrier address the device code computes: without the mapa
// to the leader, the odd CTA's bytes would land on its own barrier.
TEST(BrokenCluster, PairLoadCreditsTheLeadersBarrier) {
  const Outcome out = run(broken::pair_load_own_barrier, {256, 256, 64});
  ASSERT_FALSE(out.status.ok());
  const std::string& m = out.status.message();
  if (std::getenv("GEMM_EMU_SHOW")) std::printf("--- pair_load_own_barrier\n%s\n", m.c_str());
  EXPECT_NE(m.find("cta_group::2 TMA load not crediting the leader's barrier: tests/emu/broken/cluster.cpp:"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("by CTA (1,0,0) [cluster rank 1] completes its bytes on mbarrier"), std::string::npos) << m;
}

// The pair's TMEM instructions: one warp of each CTA, the same warp, the same operands, together.
TEST(BrokenCluster, PairAllocFromDifferentWarps) {
  const Outcome out = run(broken::pair_alloc_other_warp, {128, 128, 64});
  ASSERT_FALSE(out.status.ok());
  const std::string& m = out.status.message();
  if (std::getenv("GEMM_EMU_SHOW")) std::printf("--- pair_alloc_other_warp\n%s\n", m.c_str());
  EXPECT_NE(m.find("CTA pair instruction differs between the CTAs: tests/emu/broken/cluster.cpp:"), std::string::npos)
      << m;
  EXPECT_NE(m.find("tcgen05.alloc.cta_group::2 executed by CTA (0,0,0) [cluster rank 0] warp 0 at "), std::string::npos)
      << m;
  EXPECT_NE(m.find("from warp 0 in one CTA and warp 1 in the other"), std::string::npos) << m;
}

TEST(BrokenCluster, PairAllocByOneCta) {
  const Outcome out = run(broken::pair_alloc_leader_only, {128, 128, 64});
  ASSERT_FALSE(out.status.ok());
  const std::string& m = out.status.message();
  if (std::getenv("GEMM_EMU_SHOW")) std::printf("--- pair_alloc_leader_only\n%s\n", m.c_str());
  EXPECT_NE(m.find("emulator: deadlock:"), std::string::npos) << m;
  EXPECT_NE(m.find("tcgen05.alloc.cta_group::2: waits for CTA (1,0,0) [cluster rank 1], the pair's other CTA, to "
                   "execute it too"),
            std::string::npos)
      << m;
}

// TMEM is per SM: two pairs sharing their SMs may hold 256 columns each, not 512.
TEST(BrokenCluster, PairTmemPerSm) {
  for (uint64_t seed : {1, 2, 3}) {
    const Outcome fits = run(broken::pair_tmem_fits, {128, 128, 64}, seed, 32);
    EXPECT_TRUE(fits.status.ok()) << fits.status.message();
    const Outcome out = run(broken::pair_tmem_contention, {128, 128, 64}, seed, 32);
    ASSERT_FALSE(out.status.ok());
    const std::string& m = out.status.message();
    if (std::getenv("GEMM_EMU_SHOW")) std::printf("--- pair_tmem_contention\n%s\n", m.c_str());
    EXPECT_NE(m.find("TMEM contention between co-resident CTAs: tests/emu/broken/cluster.cpp:"), std::string::npos)
        << m;
    // CTAs 0 and 2 share SM 0, CTAs 1 and 3 SM 1; the pair that runs second finds the other's columns.
    EXPECT_TRUE(m.find("of 512 columns in CTA (2,0,0) [cluster rank 0], which the launch places on SM 0 beside CTA "
                       "(0,0,0) [cluster rank 0] of another cluster") != std::string::npos ||
                m.find("of 512 columns in CTA (0,0,0) [cluster rank 0], which the launch places on SM 0 beside CTA "
                       "(2,0,0) [cluster rank 0] of another cluster") != std::string::npos)
        << m;
  }
}

TEST(BrokenCluster, PairDeallocWithoutClusterBarrier) {
  const Outcome out = run(broken::pair_dealloc_without_cluster_sync, {256, 256, 64});
  ASSERT_FALSE(out.status.ok());
  EXPECT_NE(out.status.message().find("dealloc while the peer CTA may still use TMEM"), std::string::npos)
      << out.status.message();
}

// --- global memory between CTAs ------------------------------------------------------------------

Outcome run_flag(broken::FlagProtocol protocol, uint64_t seed) {
  return run([protocol](const Problem& p) { return broken::flag_protocol(protocol, p); }, {128, 128, 64}, seed, 32);
}

TEST(BrokenGlobal, FlagProtocolsThatWork) {
  for (uint64_t seed : {1, 2, 3})
    for (auto protocol : {broken::FlagProtocol::release_store, broken::FlagProtocol::fence_atomic}) {
      const Outcome out = run_flag(protocol, seed);
      EXPECT_TRUE(out.status.ok()) << static_cast<int>(protocol) << ": " << out.status.message();
    }
}

TEST(BrokenGlobal, FlagProtocolsMissingAHalf) {
  struct Expect {
    broken::FlagProtocol protocol;
    std::vector<std::string> texts;
  };
  const std::vector<Expect> cases = {
      {broken::FlagProtocol::plain_store,
       {"global memory read without release/acquire: tests/emu/broken/global.cpp:",
        "which CTA (0,0,0) thread 0 wrote in this launch", "and no release of that CTA covers the write"}},
      {broken::FlagProtocol::atomic_without_release,
       {"global memory read without release/acquire: tests/emu/broken/global.cpp:", "(scratch data, word",
        "which CTA (0,0,0) thread", "and no release of that CTA covers the write"}},
      {broken::FlagProtocol::atomic_without_acquire,
       {"global memory read without release/acquire: tests/emu/broken/global.cpp:", "(scratch data, word",
        "and released at its fence.acq_rel.gpu at tests/emu/broken/global.cpp:",
        "read a value that release reached, and no fence.acq_rel.gpu followed it"}},
      {broken::FlagProtocol::never_written,
       {"global memory read of data no thread wrote: tests/emu/broken/global.cpp:",
        "which no thread has written in this launch"}},
  };
  for (uint64_t seed : {1, 2, 3})
    for (const Expect& c : cases) {
      const Outcome out = run_flag(c.protocol, seed);
      ASSERT_FALSE(out.status.ok()) << static_cast<int>(c.protocol) << " passed with seed " << seed;
      const std::string& m = out.status.message();
      if (std::getenv("GEMM_EMU_SHOW"))
        std::printf("--- flag protocol %d\n%s\n", static_cast<int>(c.protocol), m.c_str());
      for (const std::string& e : c.texts)
        EXPECT_NE(m.find(e), std::string::npos) << "expected \"" << e << "\" in:\n" << m;
    }
}

TEST(BrokenGlobal, CounterLeftNonZero) {
  const Outcome out = run(broken::counter_left_nonzero, {128, 128, 64});
  ASSERT_FALSE(out.status.ok());
  EXPECT_NE(out.status.message().find("scratch counter left non-zero: the launch ends with the counter at "),
            std::string::npos)
      << out.status.message();
  EXPECT_NE(
      out.status.message().find("last written by CTA (0,0,0) thread 0 (atom.add.u32 at tests/emu/broken/global.cpp:"),
      std::string::npos)
      << out.status.message();
}

// --- setmaxnreg's register pool ----------------------------------------------------------------

TEST(BrokenRegisters, DecFeedsInc) {
  for (uint64_t seed : {1, 2, 3}) {
    const Outcome out = run(broken::setmaxnreg_pool, {128, 128, 64}, seed, 32);
    EXPECT_TRUE(out.status.ok()) << out.status.message();
  }
}

TEST(BrokenRegisters, IncWithoutDecHangs) {
  const Outcome out = run(broken::setmaxnreg_no_dec, {128, 128, 64});
  ASSERT_FALSE(out.status.ok());
  const std::string& m = out.status.message();
  if (std::getenv("GEMM_EMU_SHOW")) std::printf("--- setmaxnreg_no_dec\n%s\n", m.c_str());
  for (const char* e :
       {"emulator: deadlock: tests/emu/broken/hopper.cpp:",
        "setmaxnreg.inc 232 (warpgroup 1): waits for 13312 registers (128 threads x (232 - 128)), "
        "the CTA's pool has 0 free; the launch gave its 256 threads 128 registers each (32768)",
        ": setmaxnreg.inc 232 in CTA (0,0,0) warpgroup 1 waits for 13312 registers", "has not run setmaxnreg.dec"})
    EXPECT_NE(m.find(e), std::string::npos) << "expected \"" << e << "\" in:\n" << m;
}

TEST(BrokenOutput, ElementWrittenTwice) {
  const Outcome out = run(broken::d_written_twice, {128, 128, 64});
  ASSERT_FALSE(out.status.ok());
  // The clusters run in an order drawn from the seed: either may be the one found second.
  EXPECT_TRUE(out.status.message().find("element of D written twice: element (0, 0) was written by cluster 0 and "
                                        "again by CTA (1,0,0)") != std::string::npos ||
              out.status.message().find("element of D written twice: element (0, 0) was written by cluster 1 and "
                                        "again by CTA (0,0,0)") != std::string::npos)
      << out.status.message();
}

TEST(BrokenOutput, WriteOutsideD) {
  const Outcome out = run(broken::write_outside_d, {128, 128, 64});
  ASSERT_FALSE(out.status.ok());
  EXPECT_NE(out.status.message().find("write outside D: CTA (0,0,0) wrote 1 element(s) before D's start"),
            std::string::npos)
      << out.status.message();
}

}  // namespace
}  // namespace gemm
