# A catalogue of a student's likely mistakes (docs/course.md, "What a mistake looks like"): single-bug
# variants of the steps, made and run as those of variants.cmake are (cmake/GemmVariant.cmake), each
# one a slip a student writing the step's TODOs could make. Each must fail, on every seed it runs
# with, with a message whose first line names the cause: the barrier or the operation, and what is
# wrong with it (in EXPECT, [^|]* stays within a line). With the variants of variants.cmake that are
# such mistakes too, at least three per step and track.

# --- Step 5: a wait that passes early, a commit that never comes, a ring that does not flip -------
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
# PipelineState (common/pipeline.cuh, whose regions are step 5's) as a student may write it: the
# step's include of the helper replaced by a one-line PipelineState with one mistake. Its advance
# without the phase flip (only the stage wraps):
set(pipeline_state [=[namespace gemm { template <int Stages> struct PipelineState { int stage = 0; uint32_t phase = 0; GEMM_HD void advance() { if (++stage == Stages) { stage = 0; phase ^= 1u; } } GEMM_HD uint32_t full_parity() const { return phase; } GEMM_HD uint32_t empty_parity() const { return phase ^ 1u; } }; }]=])
string(REPLACE "{ stage = 0; phase ^= 1u; }" "stage = 0;" no_flip "${pipeline_state}")
foreach(track hopper blackwell)
  gemm_add_step_variant(step05_${track}_advance_without_flip STEP 05 TRACK ${track}
    REPLACE [=[#include "common/pipeline.cuh"]=]
    WITH "${no_flip}"
    EXPECT [=[^emulator: (mbarrier wait passed early|deadlock): @FILE@:[0-9]+: [^|]* waited on mbarrier '(full|empty|tma2mma|mma2tma)' stage [01] [^|]*for parity [01][^|]* on each other stage of the '(full|empty|tma2mma|mma2tma)' ring of 2 stages: its stage index wrapped to 0, where its phase should have flipped, and did not \(PipelineState::advance\)]=])
endforeach()
# The consumers' parity a phase off (full_parity returns phase ^ 1): the first wait on each stage
# passes at once on the fresh barrier, before the slice has landed.
string(REPLACE "full_parity() const { return phase; }" "full_parity() const { return phase ^ 1u; }" full_off "${pipeline_state}")
# The producer's parity that of the consumers (empty_parity returns phase): its first wait for a
# free slot waits for a release that only the MMAs it has not fed yet would make.
string(REPLACE "empty_parity() const { return phase ^ 1u; }" "empty_parity() const { return phase; }" empty_off "${pipeline_state}")
set(full_hopper full)
set(full_blackwell tma2mma)
set(empty_hopper empty)
set(empty_blackwell mma2tma)
foreach(track hopper blackwell)
  gemm_add_step_variant(step05_${track}_full_parity_off STEP 05 TRACK ${track}
    REPLACE [=[#include "common/pipeline.cuh"]=] WITH "${full_off}"
    EXPECT "^emulator: mbarrier wait passed early: @FILE@:[0-9]+: [^|]* waited on mbarrier '${full_${track}}' stage [01] [^|]*for parity 1 and passed at once: the barrier had completed no phase yet[^|]*then its (wgmma\\.mma_async|tcgen05\\.mma) \\([AB]\\) at @FILE@:[0-9]+ read shared memory [^|]*that a TMA load still in flight was writing[^|]*a wrong initial phase\\?")
  gemm_add_step_variant(step05_${track}_empty_parity_off STEP 05 TRACK ${track}
    REPLACE [=[#include "common/pipeline.cuh"]=] WITH "${empty_off}"
    EXPECT "^emulator: deadlock: @FILE@:[0-9]+: [^|]*role producer\\) waits on mbarrier '${empty_${track}}' stage 0 \\(shared 0x[0-9a-f]+\\) for parity 0 \\(phase 0\\)[^|]*first wait[^|]*a wrong initial phase\\? A producer waiting for a free slot waits for parity phase \\^ 1")
endforeach()

# --- Step 1: one tile ------------------------------------------------------------------------------
# hopper: the wgmma.fence before the first wgmma left out.
gemm_add_step_variant(step01_hopper_no_wgmma_fence STEP 01 TRACK hopper
  REPLACE [=[  wgmma_fence();  // the accumulators were written by ordinary instructions]=]
  WITH [=[  /* variant: no wgmma_fence() */]=]
  EXPECT [=[^emulator: wgmma issued without wgmma\.fence: @FILE@:@LINE_OF:wgmma_f32_f16_ss<kTileN>@: ]=])
# hopper: no wgmma.wait_group: the epilogue reads accumulators a wgmma may still write.
gemm_add_step_variant(step01_hopper_no_wait_group STEP 01 TRACK hopper
  REPLACE [=[  wgmma_wait_group<0>();  // the accumulators may be read only after a wait that covers them]=]
  WITH [=[  /* variant: no wgmma_wait_group<0>() */]=]
  EXPECT [=[^emulator: wgmma accumulators not waited for: @FILE@:[0-9]+: the thread exits while 64 accumulator registers of a wgmma still in flight were never handed back by wgmma\.wait_group: a wait that covers the last wgmma group is missing]=])
# hopper: the proxy fence after the copies into shared memory left out.
gemm_add_step_variant(step01_hopper_no_proxy_fence STEP 01 TRACK hopper
  REPLACE [=[  fence_proxy_async_shared();
  __syncthreads();]=]
  WITH [=[  /* variant: no fence_proxy_async_shared() */
  __syncthreads();]=]
  EXPECT [=[^emulator: missing fence\.proxy\.async: @FILE@:@LINE_OF:wgmma_f32_f16_ss<kTileN>@: wgmma\.mma_async \([AB]\) \(async proxy\) reads shared memory [^|]* wrote with ordinary stores and has not fenced]=])
# blackwell: the tile's first MMA accumulates (enable_input_d) into TMEM nothing has written.
gemm_add_step_variant(step01_blackwell_accumulate_first STEP 01 TRACK blackwell
  REPLACE [=[/*enable_input_d=*/k > 0);]=]
  WITH [=[/*enable_input_d=*/true);]=]
  EXPECT [=[^emulator: MMA accumulates into unwritten TMEM: @FILE@:@LINE@: a tcgen05\.mma issued by [^|]* with enable_input_d = true accumulates into TMEM [^|]*the first MMA of a tile must pass enable_input_d = false]=])
# blackwell: every warp reads the TMEM lanes of warp 0 (the lane base left at 0).
gemm_add_step_variant(step01_blackwell_ld_lane_base_0 STEP 01 TRACK blackwell
  REPLACE [=[    taddr = tmem_addr(tmem_acc, tmem_lane_base(warp), c);]=]
  WITH [=[    taddr = tmem_addr(tmem_acc, 0, c);]=]
  EXPECT [=[^emulator: TMEM access outside the warp's lanes: @FILE@:@LINE_OF:tmem_ld_32x32b_x32(taddr, v);@: tcgen05\.ld\.32x32b\.x32 at 0x[0-9a-f]+ \(lanes 0-31\) by warp [123], which may access only lanes]=])
# blackwell: the wait on mma_done for parity 1, which passes at once on the fresh barrier.
gemm_add_step_variant(step01_blackwell_mma_done_parity_1 STEP 01 TRACK blackwell
  REPLACE [=[mbarrier_wait(&smem.mma_done, 0, WaitTag{"mma_done", "epilogue"});]=]
  WITH [=[mbarrier_wait(&smem.mma_done, 1, WaitTag{"mma_done", "epilogue"});]=]
  EXPECT [=[^emulator: mbarrier wait passed early: @FILE@:@LINE@: [^|]* waited on mbarrier 'mma_done' stage 0 \(shared 0x[0-9a-f]+\) for parity 1 and passed at once: the barrier had completed no phase yet[^|]*then its tcgen05\.ld\.32x32b\.x32 at @FILE@:@LINE_OF:tmem_ld_32x32b_x32(taddr, v);@ read TMEM [^|]*a wrong initial phase\?]=])
# blackwell: no wait on mma_done: the epilogue reads TMEM the MMAs still write.
gemm_add_step_variant(step01_blackwell_no_mma_done_wait STEP 01 TRACK blackwell
  REPLACE [=[mbarrier_wait(&smem.mma_done, 0, WaitTag{"mma_done", "epilogue"});]=]
  WITH [=[/* variant: no wait on mma_done */]=]
  EXPECT [=[^emulator: tcgen05\.ld of TMEM an MMA is still writing: @FILE@:@LINE_OF:tmem_ld_32x32b_x32(taddr, v);@: [^|]*\(issued by [^|]* at @FILE@:@LINE_OF:tcgen05_mma_f16<1>(tmem_acc@\): the wait on mbarrier at shared 0x[0-9a-f]+, on which the tcgen05\.commit at @FILE@:@LINE_OF:tcgen05_commit<1>(&smem.mma_done);@ after that MMA arrives, is missing: [^|]* never waited on it]=])

# --- Step 2: the K loop ----------------------------------------------------------------------------
# hopper: the barrier after the wait_group dropped: the next slice's copies overwrite what other
# warps' wgmmas still read.
gemm_add_step_variant(step02_hopper_no_barrier_after_wait STEP 02 TRACK hopper
  REPLACE [=[    __syncthreads();
    // END SOLUTION step02]=]
  WITH [=[    /* variant: no __syncthreads() */
    // END SOLUTION step02]=]
  EXPECT [=[^emulator: shared memory overwritten while an asynchronous operation reads it: @FILE@:[0-9]+: shared memory at 0x[0-9a-f]+ \(CTA \(0,0,0\)\) is written by ordinary stores by [^|]*, while warp [0-3]'s share of the wgmma group committed at @FILE@:@LINE_OF:wgmma_commit_group();@ [^|]*(has not passed a wgmma\.wait_group covering it|nothing orders that wait before this write)]=])
# hopper: wait_group 1 leaves the slice's wgmmas in flight while the next slice is copied in.
gemm_add_step_variant(step02_hopper_wait_group_1 STEP 02 TRACK hopper
  REPLACE [=[    wgmma_wait_group<0>();  // this warp's share of the wgmmas has finished reading shared memory]=]
  WITH [=[    wgmma_wait_group<1>();  // variant]=]
  EXPECT [=[^emulator: shared memory overwritten while an asynchronous operation reads it: @FILE@:[0-9]+: shared memory at 0x[0-9a-f]+ \(CTA \(0,0,0\)\) is written by ordinary stores by [^|]*, while warp [0-3]'s share of the wgmma group committed at @FILE@:@LINE_OF:wgmma_commit_group();@ [^|]*(has not passed a wgmma\.wait_group covering it|nothing orders that wait before this write)]=])
# hopper: no wgmma.fence in the loop.
gemm_add_step_variant(step02_hopper_no_wgmma_fence STEP 02 TRACK hopper
  REPLACE [=[    wgmma_fence();  // orders the accumulators' earlier accesses before the wgmmas below]=]
  WITH [=[    /* variant: no wgmma_fence() */]=]
  EXPECT [=[^emulator: wgmma issued without wgmma\.fence: @FILE@:@LINE_OF:wgmma_f32_f16_ss<kTileN>@: ]=])
# blackwell: every slice waits on mma_done for parity 0.
gemm_add_step_variant(step02_blackwell_parity_0 STEP 02 TRACK blackwell
  REPLACE [=[    const uint32_t phase = static_cast<uint32_t>(k0 / kTileK) & 1;]=]
  WITH [=[    const uint32_t phase = 0;]=]
  EXPECT [=[^emulator: mbarrier wait passed early: @FILE@:@LINE+1@: [^|]* waited on mbarrier 'mma_done' stage 0 \(shared 0x[0-9a-f]+\) for parity 0 and passed at once: its previous wait on that barrier \(at @FILE@:@LINE+1@\) was for phase [0-9]+ too, and this one named that phase again[^|]*the parity is a phase off[^|]*then its stores to shared memory [^|]*refilled it before the tcgen05\.mma \([AB]\) at @FILE@:@LINE_OF:tcgen05_mma_f16<1>(tmem_acc@]=])
# blackwell: the parity a phase off from the first slice on (parity 1 first).
gemm_add_step_variant(step02_blackwell_parity_off STEP 02 TRACK blackwell
  REPLACE [=[    const uint32_t phase = static_cast<uint32_t>(k0 / kTileK) & 1;]=]
  WITH [=[    const uint32_t phase = (static_cast<uint32_t>(k0 / kTileK) + 1) & 1;]=]
  EXPECT [=[^emulator: mbarrier wait passed early: @FILE@:@LINE+1@: [^|]* waited on mbarrier 'mma_done' stage 0 \(shared 0x[0-9a-f]+\) for parity 1 and passed at once: the barrier had completed no phase yet[^|]*then its stores to shared memory [^|]*refilled it before the tcgen05\.mma \([AB]\) at @FILE@:@LINE_OF:tcgen05_mma_f16<1>(tmem_acc@[^|]*a wrong initial phase\?]=])
# blackwell: no wait on mma_done: the next slice's copies overwrite what the MMAs still read.
gemm_add_step_variant(step02_blackwell_no_mma_done_wait STEP 02 TRACK blackwell
  REPLACE [=[    mbarrier_wait(&smem.mma_done, phase, WaitTag{"mma_done", "k_loop"});]=]
  WITH [=[    /* variant: no wait on mma_done */ (void)phase;]=]
  EXPECT [=[^emulator: shared memory overwritten while an asynchronous operation reads it: @FILE@:@LINE_OF:tcgen05_mma_f16<1>(tmem_acc@: tcgen05\.mma \([AB]\) \(async proxy\) reads shared memory [^|]*whose previous contents [^|]*a synchronisation ordered before this operation, but which [^|]* has stored to again since[^|]*the buffer was refilled for its next use before this operation read it \(that thread's wait for the operation's completion, before it reuses the buffer, is missing\)]=])

# --- Step 3: tiles, ragged edges ---------------------------------------------------------------------
# The shape's ragged N (392) and M (520) leave the last tiles partly outside D.
# The store's column bound dropped: a row's columns past N run on into the next row.
# The store's row bound dropped: the last tiles' rows past M land past D's end (N = 8 keeps the
# stray rows inside the harness's guard band behind D).
# The tile origin not scaled by the tile size: neighbouring CTAs' tiles overlap.
set(store_hopper [=[      if (g_row < M && g_col < N)
        *reinterpret_cast<__half2*>]=])
set(store_blackwell [=[      if (g_row < M && g_col < N) *reinterpret_cast<uint4*>]=])
foreach(track hopper blackwell)
  string(REPLACE "g_row < M && g_col < N" "g_row < M" no_col "${store_${track}}")
  string(REPLACE "g_row < M && g_col < N" "g_col < N" no_row "${store_${track}}")
  gemm_add_step_variant(step03_${track}_store_without_column_bound STEP 03 TRACK ${track}
    REPLACE "${store_${track}}" WITH "${no_col}"
    EXPECT [=[^emulator: (element of D written twice: element \([0-9]+, [0-9]+\) was written by cluster [0-9]+ and again by CTA \([0-9]+,0,0\)|write outside D: CTA \([0-9]+,0,0\) wrote past D's end, at element [0-9]+ of a D of [0-9]+ elements)[^|]*a store not bounded by (M and )?N]=])
  gemm_add_step_variant(step03_${track}_store_without_row_bound STEP 03 TRACK ${track} SHAPE 520x8x136
    REPLACE "${store_${track}}" WITH "${no_row}"
    EXPECT [=[^emulator: write outside D: CTA \([0-9]+,0,0\) wrote past D's end, at element [0-9]+ of a D of 4160 elements \(D is 520 x 8\): a store not bounded by M and N]=])
  gemm_add_step_variant(step03_${track}_origin_not_scaled STEP 03 TRACK ${track}
    REPLACE [=[  m0 = (blockIdx.x % tiles_m) * kTileM;]=] WITH [=[  m0 = (blockIdx.x % tiles_m);]=]
    EXPECT [=[^emulator: element of D written twice: element \([0-9]+, [0-9]+\) was written by cluster [0-9]+ and again by CTA \([0-9]+,0,0\): two tiles overlap \(a tile origin not scaled by the tile size]=])
endforeach()

# --- Step 4: TMA -------------------------------------------------------------------------------------
# expect_tx announces half the slice's bytes: the phase completes before the second box lands.
set(full_hopper full)
set(full_blackwell tma2mma)
foreach(track hopper blackwell)
  set(full "${full_${track}}")
  gemm_add_step_variant(step04_${track}_expect_tx_half STEP 04 TRACK ${track}
    REPLACE "mbarrier_arrive_expect_tx(&smem.${full}, kStageBytes);"
    WITH "mbarrier_arrive_expect_tx(&smem.${full}, kStageBytes / 2);"
    EXPECT "^emulator: expect_tx bytes differ from the bytes delivered: @FILE@:@LINE@: mbarrier '${full}' stage 0 [^|]* completed phase 0 with all 1 arrivals and its expected 16384 tx bytes in \\(announced by the arrive\\.expect_tx at @FILE@:@LINE@\\), while 1 TMA load\\(s\\) crediting that phase are still in flight")
  # The slice's wait for parity 0 every time: from the second slice on it passes at once.
  gemm_add_step_variant(step04_${track}_full_parity_0 STEP 04 TRACK ${track}
    REPLACE "mbarrier_wait(&smem.${full}, static_cast<uint32_t>(k0 / kTileK) & 1,"
    WITH "mbarrier_wait(&smem.${full}, 0u,"
    EXPECT "^emulator: mbarrier wait passed early: @FILE@:@LINE@: [^|]* waited on mbarrier '${full}' stage 0 \\(shared 0x[0-9a-f]+\\) for parity 0 and passed at once: its previous wait on that barrier \\(at @FILE@:@LINE@\\) was for phase 0 too, and this one named that phase again[^|]*then its (wgmma\\.mma_async|tcgen05\\.mma) \\([AB]\\) at @FILE@:[0-9]+ read shared memory [^|]* that a TMA load still in flight was writing")
  # The TMA store's wait for its reads dropped: the CTA may exit while it still reads shared memory.
  gemm_add_step_variant(step04_${track}_no_store_wait STEP 04 TRACK ${track}
    REPLACE [=[    tma_store_wait_group_read<0>();
  }
  // END SOLUTION step04]=]
    WITH [=[    /* variant: no tma_store_wait_group_read<0>() */
  }
  // END SOLUTION step04]=]
    EXPECT [=[^emulator: TMA store still reading shared memory at exit: [^|]*the CTA exits while 1 bulk group\(s\) of TMA stores issued by [^|]* may still read its shared memory: cp\.async\.bulk\.wait_group\.read 0 is missing before the exit]=])
endforeach()

# --- Steps 6-8 (blackwell): the per-tile barriers' parities --------------------------------------
# The epilogue waits on mma2ld with the parity a phase off: the first tile's wait passes at once on
# the fresh barrier (the step 6 form of step05_blackwell_mma2ld_parity_1).
foreach(step 06 07)
  gemm_add_step_variant(step${step}_blackwell_mma2ld_parity_off STEP ${step} TRACK blackwell
    REPLACE [=[mbarrier_wait(&smem.mma2ld, static_cast<uint32_t>(local & 1), WaitTag{"mma2ld", "epilogue"});]=]
    WITH [=[mbarrier_wait(&smem.mma2ld, static_cast<uint32_t>(local & 1) ^ 1u, WaitTag{"mma2ld", "epilogue"});]=]
    EXPECT [=[^emulator: mbarrier wait passed early: @FILE@:@LINE@: [^|]*role epilogue\) waited on mbarrier 'mma2ld' stage 0 \(shared 0x[0-9a-f]+\) for parity 1 and passed at once: the barrier had completed no phase yet[^|]*; then its tcgen05\.ld\.32x32b\.x32 at @FILE@:[0-9]+ read TMEM [^|]*a wrong initial phase\?]=])
endforeach()
# The MMA warp waits on ld2mma with the epilogue's parity (local & 1): before the first tile it waits
# for a release the epilogue gives only after that tile.
foreach(step 07 08)
  gemm_add_step_variant(step${step}_blackwell_ld2mma_parity_off STEP ${step} TRACK blackwell
    REPLACE [=[mbarrier_wait(&smem.ld2mma, static_cast<uint32_t>(local & 1) ^ 1u, WaitTag{"ld2mma", "mma"});]=]
    WITH [=[mbarrier_wait(&smem.ld2mma, static_cast<uint32_t>(local & 1), WaitTag{"ld2mma", "mma"});]=]
    EXPECT [=[^emulator: deadlock: @FILE@:[0-9]+: [^|]*role mma\) waits on mbarrier 'ld2mma' stage 0 \(shared 0x[0-9a-f]+\) for parity 0 \(phase 0\)[^|]* each its first wait, on a fresh barrier that no arrival has reached[^|]*a wrong initial phase\? A first wait for a resource nothing has used yet \(a free slot, a free accumulator\) is for parity 1]=])
endforeach()

# --- Step 8 (hopper): the release of a stage with wait_group 1 --------------------------------------
# The stage released is the current slice's, whose wgmmas wait_group 1 leaves in flight.
gemm_add_step_variant(step08_hopper_release_current_stage STEP 08 TRACK hopper
  REPLACE [=[    if (ks > 0 && lane_id() == 0) mbarrier_arrive(&smem.empty[release_stage]);]=]
  WITH [=[    if (lane_id() == 0) mbarrier_arrive(&smem.empty[read.stage]);]=]
  EXPECT [=[^emulator: shared memory overwritten while an asynchronous operation reads it: @FILE@:@LINE_OF:tma_load_2d(smem.a[s]@: [^|]*warp [0-9]+'s share of the wgmma group committed at @FILE@:@LINE_OF:wgmma_commit_group();@ [^|]*arrived on mbarrier 'empty' stage [0-9] [^|]* at @FILE@:@LINE@ before its wgmma\.wait_group covered this group]=])
# The wait_group 0 after the last slice dropped: the epilogue reads accumulators still in flight.
gemm_add_step_variant(step08_hopper_no_final_wait_group STEP 08 TRACK hopper
  REPLACE [=[  wgmma_wait_group<0>();
  wgmma_fence_operands(acc[0]);
  wgmma_fence_operands(acc[1]);
  if (lane_id() == 0) mbarrier_arrive(&smem.empty[release_stage]);]=]
  WITH [=[  /* variant: no wgmma_wait_group<0>() */
  wgmma_fence_operands(acc[0]);
  wgmma_fence_operands(acc[1]);
  if (lane_id() == 0) mbarrier_arrive(&smem.empty[release_stage]);]=]
  EXPECT [=[^emulator: shared memory overwritten while an asynchronous operation reads it: @FILE@:@LINE_OF:tma_load_2d(smem.a[s]@: [^|]*warp [0-9]+'s share of the wgmma group committed at @FILE@:@LINE_OF:wgmma_commit_group();@ [^|]*arrived on mbarrier 'empty' stage [0-9] [^|]* at @FILE@:@LINE+3@ before its wgmma\.wait_group covered this group]=])

# --- Steps 7 and 12: the pipeline's parities in the warp-specialized kernels ----------------------
# hopper step 7: PipelineState::advance without the flip, the producer warpgroup and the consumers
# each walking their ring.
gemm_add_step_variant(step07_hopper_advance_without_flip STEP 07 TRACK hopper
  REPLACE [=[#include "common/pipeline.cuh"]=] WITH "${no_flip}"
  EXPECT [=[^emulator: (mbarrier wait passed early|deadlock): @FILE@:[0-9]+: [^|]* waited on mbarrier '(full|empty)' stage [0-9] [^|]*for parity [01][^|]* on each other stage of the '(full|empty)' ring of [0-9] stages: its stage index wrapped to 0, where its phase should have flipped, and did not \(PipelineState::advance\)]=])
# step 12: the consumer's wait on its stage with the producer's parity (hopper), the epilogue's on
# mma2ld a phase off (blackwell).
gemm_add_step_variant(step12_hopper_consumer_waits_producer_parity STEP 12 TRACK hopper
  REPLACE [=[mbarrier_wait(&smem.full[read.stage], read.full_parity(), WaitTag{"full", "consumer"});]=]
  WITH [=[mbarrier_wait(&smem.full[read.stage], read.empty_parity(), WaitTag{"full", "consumer"});]=]
  EXPECT [=[^emulator: mbarrier wait passed early: @FILE@:@LINE@: [^|]*role consumer\) waited on mbarrier 'full' stage [0-9] [^|]*for parity 1 and passed at once: the barrier had completed no phase yet[^|]*then its wgmma\.mma_async \([AB]\) at @FILE@:[0-9]+ read shared memory [^|]*that a TMA load still in flight was writing[^|]*a wrong initial phase\?]=])
gemm_add_step_variant(step12_blackwell_mma2ld_parity_off STEP 12 TRACK blackwell
  REPLACE [=[mbarrier_wait(&smem.mma2ld[consumer], static_cast<uint32_t>(local & 1), WaitTag{"mma2ld", "epilogue"});]=]
  WITH [=[mbarrier_wait(&smem.mma2ld[consumer], static_cast<uint32_t>(local & 1) ^ 1u, WaitTag{"mma2ld", "epilogue"});]=]
  EXPECT [=[^emulator: mbarrier wait passed early: @FILE@:@LINE@: [^|]*role epilogue\) waited on mbarrier 'mma2ld' stage [01] \(shared 0x[0-9a-f]+\)( of CTA \([0-9]+,0,0\) \[cluster rank [01]\])? for parity 1 and passed at once: the barrier had completed no phase yet[^|]*; then its tcgen05\.ld\.32x32b\.x32 at @FILE@:[0-9]+ read TMEM [^|]*a wrong initial phase\?]=])
