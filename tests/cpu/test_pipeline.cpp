// PipelineState (common/pipeline.cuh): the stage/phase sequence, and the producer/consumer parity
// convention run against a model of an mbarrier's phase parity.
#include "common/pipeline.cuh"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace gemm {
namespace {

template <int Stages>
void expect_sequence() {
  PipelineState<Stages> s;
  for (int i = 0; i < 5 * Stages + 3; ++i) {
    EXPECT_EQ(s.stage, i % Stages) << "step " << i;
    EXPECT_EQ(s.phase, static_cast<uint32_t>((i / Stages) % 2)) << "step " << i;
    EXPECT_EQ(s.full_parity(), s.phase);
    EXPECT_EQ(s.empty_parity(), s.phase ^ 1u);
    s.advance();
  }
}

TEST(Pipeline, StagePhaseSequence) {
  expect_sequence<1>();
  expect_sequence<2>();
  expect_sequence<4>();
  expect_sequence<7>();
}

TEST(Pipeline, HandWorkedTwoStages) {
  // (stage, phase): (0,0) (1,0) (0,1) (1,1) (0,0): the phase flips on each wrap to stage 0.
  PipelineState<2> s;
  const int stage[] = {0, 1, 0, 1, 0};
  const uint32_t phase[] = {0, 0, 1, 1, 0};
  for (int i = 0; i < 5; ++i, s.advance()) {
    EXPECT_EQ(s.stage, stage[i]);
    EXPECT_EQ(s.phase, phase[i]);
  }
}

TEST(Pipeline, OneStageFlipsEveryStep) {
  PipelineState<1> s;
  s.advance();
  EXPECT_EQ(s.stage, 0);
  EXPECT_EQ(s.phase, 1u);
  s.advance();
  EXPECT_EQ(s.phase, 0u);
}

// The observable part of an mbarrier for parity waits: phases completed so far. The current phase
// has parity completed % 2; try_wait.parity(p) succeeds when p names the phase just before the
// current one (that phase has completed), i.e. when p != completed % 2.
struct ModelBarrier {
  int completed = 0;
  bool wait_passes(uint32_t parity) const { return parity != static_cast<uint32_t>(completed % 2); }
};

TEST(Pipeline, FreshBarrierParity) {
  const ModelBarrier fresh;
  const PipelineState<4> s;
  EXPECT_TRUE(fresh.wait_passes(s.empty_parity())) << "a producer's first wait on empty[s] passes at once";
  EXPECT_FALSE(fresh.wait_passes(s.full_parity())) << "a consumer's first wait on full[s] blocks until filled";
}

// A producer and a consumer, each with its own PipelineState, interleaved in every order a simple
// round-robin with skips can produce, against model full/empty barriers. The convention must let
// the producer run at most Stages ahead, never overwrite a stage not yet consumed, and let the
// consumer read every item exactly once, in order, without deadlock.
template <int Stages>
void run_ring(int items, int producer_burst, int consumer_burst) {
  ModelBarrier full[Stages], empty[Stages];
  int slot[Stages];
  for (int& v : slot) v = -1;
  PipelineState<Stages> prod, cons;
  int produced = 0, consumed = 0;
  while (consumed < items) {
    bool progressed = false;
    for (int b = 0; b < producer_burst && produced < items; ++b) {
      if (!empty[prod.stage].wait_passes(prod.empty_parity())) break;
      ASSERT_EQ(slot[prod.stage], -1) << "producer overwrote stage " << prod.stage << " before it was consumed";
      ASSERT_LE(produced - consumed, Stages - 1) << "producer ran more than Stages ahead";
      slot[prod.stage] = produced++;
      ++full[prod.stage].completed;  // arrive.expect_tx + bytes landed
      prod.advance();
      progressed = true;
    }
    for (int b = 0; b < consumer_burst && consumed < produced; ++b) {
      if (!full[cons.stage].wait_passes(cons.full_parity())) break;
      ASSERT_EQ(slot[cons.stage], consumed) << "consumer read the wrong item from stage " << cons.stage;
      slot[cons.stage] = -1;
      ++consumed;
      ++empty[cons.stage].completed;  // consumer releases the stage
      cons.advance();
      progressed = true;
    }
    ASSERT_TRUE(progressed) << "deadlock at produced " << produced << ", consumed " << consumed;
  }
  EXPECT_EQ(produced, items);
}

TEST(Pipeline, ProducerConsumerConvention) {
  for (int pb : {1, 2, 3, 8}) {
    for (int cb : {1, 2, 5, 8}) {
      SCOPED_TRACE("bursts " + std::to_string(pb) + "/" + std::to_string(cb));
      run_ring<1>(23, pb, cb);
      run_ring<2>(23, pb, cb);
      run_ring<4>(23, pb, cb);
      run_ring<7>(23, pb, cb);
    }
  }
}

// The mismatch the convention prevents: a producer waiting on empty[s] with parity `phase` (not
// phase ^ 1) blocks on the very first fresh barrier with nobody to release it.
TEST(Pipeline, WrongProducerParityDeadlocks) {
  const ModelBarrier fresh;
  const PipelineState<2> s;
  EXPECT_FALSE(fresh.wait_passes(s.phase));
}

}  // namespace
}  // namespace gemm
