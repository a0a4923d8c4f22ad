# A catalogue of a student's likely mistakes (docs/course.md, "What a mistake looks like"): single-bug
# variants of the steps, made and run as those of variants.cmake are (cmake/GemmVariant.cmake), each
# one a slip a student writing the step's TODOs could make, and each failing on every seed it runs
# with with a message whose first line names the cause: the barrier or the operation, and what is
# wrong with it. With the variants of variants.cmake that are such mistakes too, at least three per
# step and track.

# --- Step 5: the three cases whose reports once named a consequence ------------------------------
# The epilogue waits on mma2ld for parity 1: on the fresh barrier that passes at once.
gemm_add_step_variant(step05_blackwell_mma2ld_parity_1 STEP 05 TRACK blackwell
  REPLACE [=[mbarrier_wait(&smem.mma2ld, 0, WaitTag{"mma2ld", "epilogue"});]=]
  WITH [=[mbarrier_wait(&smem.mma2ld, 1, WaitTag{"mma2ld", "epilogue"});]=]
  EXPECT [=[^emulator: mbarrier wait passed early: @FILE@:@LINE@: [^|]*role epilogue\) waited on mbarrier 'mma2ld' stage 0 \(shared 0x[0-9a-f]+\) for parity 1 and passed at once: the barrier had completed no phase yet[^|]*; then its tcgen05\.ld\.32x32b\.x32 at @FILE@:@LINE_OF:tmem_ld_32x32b_x32(taddr, v);@ read TMEM [^|]*a wrong initial phase\?]=])
# No tcgen05.commit to mma2tma: a stage is never released.
gemm_add_step_variant(step05_blackwell_no_commit_to_mma2tma STEP 05 TRACK blackwell
  REPLACE [=[tcgen05_commit<1>(&smem.mma2tma[read.stage]);]=]
  WITH [=[/* variant: no tcgen05.commit to mma2tma */]=]
  EXPECT [=[^emulator: deadlock: @FILE@:@LINE_OF:write.empty_parity(), WaitTag{"mma2tma", "producer"}@: [^|]*role producer\) waits on mbarrier 'mma2tma' stage [01] \(shared 0x[0-9a-f]+\) for parity 0 \(phase 0\), in step with its previous wait on it [^|]*0 of its 1 arrivals for that phase came[^|]*no arrival has ever reached it, and the arrive, tcgen05\.commit or arrive\.expect_tx that should complete its phases never comes]=])
# PipelineState::advance without the phase flip (common/pipeline.cuh, step 5's region there): the
# step's include of the helper replaced by a one-line PipelineState whose advance only wraps.
foreach(track hopper blackwell)
  gemm_add_step_variant(step05_${track}_advance_without_flip STEP 05 TRACK ${track}
    REPLACE [=[#include "common/pipeline.cuh"]=]
    WITH [=[namespace gemm { template <int Stages> struct PipelineState { int stage = 0; uint32_t phase = 0; GEMM_HD void advance() { if (++stage == Stages) stage = 0; } GEMM_HD uint32_t full_parity() const { return phase; } GEMM_HD uint32_t empty_parity() const { return phase ^ 1u; } }; }]=]
    EXPECT [=[^emulator: (mbarrier wait passed early|deadlock): @FILE@:[0-9]+: [^|]* waited on mbarrier '(full|empty|tma2mma|mma2tma)' stage [01] [^|]*for parity [01][^|]* on each other stage of the '(full|empty|tma2mma|mma2tma)' ring of 2 stages: its stage index wrapped to 0, where its phase should have flipped, and did not \(PipelineState::advance\)]=])
endforeach()
