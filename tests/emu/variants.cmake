# Single-bug variants of the real steps (cmake/GemmVariant.cmake says how these are made and run):
# each is one bug, and must fail on the emulator with the message of its rule, naming the step file
# and the line, on every emulator seed it runs with. Grouped by the rule; both tracks wherever the
# bug exists on both. Keep REPLACE texts to code (comments change more often), and keep each
# replacement's line count so that the lines keep their numbers.

# The indentation of the code the texts below replace: step 5's kernel body and step 6's functions.
set(indent_05 "  ")
set(indent_06 "  ")

# --- tcgen05.fence::before_thread_sync dropped before a thread barrier (blackwell) ---------------
# A thread's tcgen05 work is handed to other threads by a barrier only when the thread fenced it:
# the other threads' after_thread_sync names the work, the barrier and the missing fence.
# At set-up: warp 0's tcgen05.alloc crosses the __syncthreads unfenced.
foreach(step 05 06)
  gemm_add_step_variant(step${step}_blackwell_no_fence_before_setup_barrier STEP ${step} TRACK blackwell
    REPLACE [=[  tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcgen05_fence_after_thread_sync();
  const uint32_t tmem_acc]=]
    WITH [=[  /* variant: no tcgen05_fence_before_thread_sync() */
  __syncthreads();
  tcgen05_fence_after_thread_sync();
  const uint32_t tmem_acc]=]
    EXPECT [=[^emulator: missing tcgen05\.fence::before_thread_sync: @FILE@:@LINE+2@: tcgen05\.fence::after_thread_sync follows a thread synchronisation that orders it after the tcgen05\.alloc at @FILE@:@LINE_OF:tmem_alloc<1, kTmemColumns>@ of .* no tcgen05\.fence::before_thread_sync between the operation and its __syncthreads at @FILE@:@LINE+1@]=])
endforeach()
# At the end of a tile (step 5: the only tile): every warp's tcgen05.ld crosses the barrier before
# the MMAs that overwrite the accumulator, and the dealloc.
foreach(step 05 06)
  set(in "${indent_${step}}")
  gemm_add_step_variant(step${step}_blackwell_no_fence_before_tile_end_barrier STEP ${step} TRACK blackwell
    REPLACE "${in}fence_proxy_async_shared();\n${in}tcgen05_fence_before_thread_sync();\n${in}__syncthreads();"
    WITH "${in}fence_proxy_async_shared();\n${in}/* variant: no tcgen05_fence_before_thread_sync() */\n${in}__syncthreads();"
    EXPECT [=[^emulator: missing tcgen05\.fence::before_thread_sync: @FILE@:@LINE+3@: tcgen05\.fence::after_thread_sync follows .* the tcgen05\.ld\.32x32b\.x32 at @FILE@:@LINE_OF:tmem_ld_32x32b_x32(taddr, v);@ of .* \(TMEM read\), .* its __syncthreads at @FILE@:@LINE+2@]=])
endforeach()

# --- A warp releases a stage before its own wgmma.wait_group (hopper) ----------------------------
# wgmma groups complete warp by warp; the stage's next TMA load must not be issued before every
# warp's covering wait is ordered before it: caught at that load, whatever the schedule. In step 7
# the producer is a warpgroup of its own, running ahead of the consumers.
foreach(step 05 06 07)
  gemm_add_step_variant(step${step}_hopper_release_before_wait STEP ${step} TRACK hopper
    REPLACE [=[wgmma_wait_group<0>();]=]
    WITH [=[if (lane_id() == 0) mbarrier_arrive(&smem.empty[read.stage]);  wgmma_wait_group<0>();]=]
    REPLACE [=[if (lane_id() == 0) mbarrier_arrive(&smem.empty[read.stage]);]=] WITH "/* variant: moved before the wait */"
    EXPECT [=[^emulator: shared memory overwritten while an asynchronous operation reads it: @FILE@:@LINE_OF:tma_load_2d(smem.a[s]@: .*warp [0-9]+'s share of the wgmma group committed at @FILE@:@LINE_OF:wgmma_commit_group();@.*arrived on mbarrier 'empty' stage [01] .*at @FILE@:@LINE@ before its wgmma\.wait_group covered this group]=])
endforeach()
# Step 4 has no release barrier: its K loop's __syncthreads is what orders every warp's wait before
# the next slice's load.
gemm_add_step_variant(step04_hopper_no_k_loop_barrier STEP 04 TRACK hopper
  REPLACE [=[    __syncthreads();
    // END SOLUTION step02]=]
  WITH [=[    /* variant: no __syncthreads() */
    // END SOLUTION step02]=]
  EXPECT [=[^emulator: shared memory overwritten while an asynchronous operation reads it: @FILE@:@LINE_OF:tma_load_2d(smem.a, &map_a@: .*warp [1-3]'s share of the wgmma group committed at @FILE@:@LINE_OF:wgmma_commit_group();@]=])

# --- warp_sync() removed before tcgen05.ld, after a branch only lane 0 took (blackwell) ----------
# Lanes 1-31 wait on mma2ld, which lane 0 completes from its K loop, after waiting there on TMA:
# the lanes ran apart, and tcgen05.ld (.sync.aligned) needs them reconverged.
# (Step 5: the kernel's warp_sync before the epilogue; step 6: the tile loop's.)
set(before_ld_05 "  warp_sync();\n\n")
set(before_ld_06 "    warp_sync();\n    epilogue_tile(")
foreach(step 05 06)
  string(REPLACE "warp_sync();" "/* variant: no warp_sync() */" without "${before_ld_${step}}")
  gemm_add_step_variant(step${step}_blackwell_no_warp_sync_before_ld STEP ${step} TRACK blackwell
    REPLACE "${before_ld_${step}}" WITH "${without}"
    EXPECT [=[^emulator: lanes not converged at a \.sync\.aligned instruction: @FILE@:@LINE_OF:tmem_ld_32x32b_x32(taddr, v);@: tcgen05\.ld\.32x32b\.x32 is reached by lanes 1-31 of warp 0 after waiting at @FILE@:@LINE_OF:WaitTag{"mma2ld"@ on mbarrier 'mma2ld'.*tcgen05\.commit at @FILE@:@LINE_OF:tcgen05_commit<1>(&smem.mma2ld);@.*mbarrier 'tma2mma' stage 0 .*at @FILE@:@LINE_OF:WaitTag{"tma2mma", "mma"}@]=])
endforeach()

# --- The K loop's __syncthreads removed: a waiter can fall two phases behind ---------------------
# Every thread waits on mma_done once per K slice; without the barrier nothing orders a thread's
# wait before the next slice's commit, so on hardware it can still be spinning when the barrier's
# parity comes round again. Reported when that next phase completes, whatever the schedule.
gemm_add_step_variant(step04_blackwell_no_k_loop_barrier STEP 04 TRACK blackwell
  REPLACE [=[    __syncthreads();
  }]=]
  WITH [=[    /* variant: no __syncthreads() */
  }]=]
  EXPECT [=[^emulator: mbarrier wait two phases behind: @FILE@:@LINE_OF:WaitTag{"mma_done", "k_loop"}@: .*waits for parity 0 of mbarrier 'mma_done' stage 0 .*phase 0.*phase \(1\) has now completed too \(tcgen05\.commit issued by CTA \([0-9,]+\) thread 0 .*at @FILE@:@LINE_OF:tcgen05_commit<1>(&smem.mma_done);@\)]=])

# --- An mbarrier initialised with too low a count (hopper; was reported as divergence) -----------
# The release barrier counts one arrival per consumer warp (4); with 1, the second warp's arrival
# of a phase comes after the phase completed, without being ordered after that: one too many.
foreach(step 05 06)
  gemm_add_step_variant(step${step}_hopper_empty_count_1 STEP ${step} TRACK hopper
    REPLACE [=[mbarrier_init(&smem.empty[s], kReleaseArrivals);]=]
    WITH [=[mbarrier_init(&smem.empty[s], 1);]=]
    EXPECT [=[^emulator: more arrivals than the init count: @FILE@:(@LINE_OF:if (lane_id() == 0) mbarrier_arrive(&smem.empty[read.stage]);@|@LINE_OF:tma_load_2d(smem.a[s]@): .*mbarrier 'empty' stage [01] .*\(init count 1, .*initialised at @FILE@:@LINE@]=])
endforeach()

# --- The barrier between the epilogue's stores and the TMA store removed (was reported as a
# missing fence.proxy.async) ----------------------------------------------------------------------
# Whichever runs first, the TMA store and the other threads' stores are not ordered.
gemm_add_step_variant(step06_hopper_no_barrier_before_store STEP 06 TRACK hopper
  REPLACE [=[  fence_proxy_async_shared();
  __syncthreads();]=]
  WITH [=[  fence_proxy_async_shared();
  /* variant: no __syncthreads() */]=]
  EXPECT [=[^emulator: asynchronous read not ordered after the stores: @FILE@:@LINE_OF:tma_store_2d(map_d@: .*no synchronisation orders those stores before (this operation|the TMA store).* a barrier]=])
gemm_add_step_variant(step06_blackwell_no_barrier_before_store STEP 06 TRACK blackwell
  REPLACE [=[  tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcgen05_fence_after_thread_sync();

  // BEGIN SOLUTION step04]=]
  WITH [=[  tcgen05_fence_before_thread_sync();
  /* variant: no __syncthreads() */
  tcgen05_fence_after_thread_sync();

  // BEGIN SOLUTION step04]=]
  EXPECT [=[^emulator: asynchronous read not ordered after the stores: @FILE@:@LINE_OF:tma_store_2d(map_d@: .*no synchronisation orders those stores before (this operation|the TMA store).* a barrier]=])

# --- A tensor map's swizzle that differs from the MMA descriptor's (was only wrong numbers) -------
gemm_add_step_variant(step05_hopper_map_without_swizzle STEP 05 TRACK hopper
  REPLACE [=[make_tensor_map_2d(&map_a, p.a, p.m, p.k, kTileM, kTileK, Swizzle::b128)]=]
  WITH [=[make_tensor_map_2d(&map_a, p.a, p.m, p.k, kTileM, kTileK, Swizzle::none)]=]
  EXPECT [=[^emulator: MMA descriptor swizzle differs from the TMA load's: @FILE@:@LINE_OF:wgmma_f32_f16_ss<kTileN>@: wgmma\.mma_async \(A\) reads shared memory .* as 128-byte swizzle .* used no swizzle]=])
gemm_add_step_variant(step05_blackwell_map_without_swizzle STEP 05 TRACK blackwell
  REPLACE [=[make_tensor_map_2d(&map_b, p.b, p.n, p.k, kTileN, kTileK, Swizzle::b128)]=]
  WITH [=[make_tensor_map_2d(&map_b, p.b, p.n, p.k, kTileN, kTileK, Swizzle::none)]=]
  EXPECT [=[^emulator: MMA descriptor swizzle differs from the TMA load's: @FILE@:@LINE_OF:tcgen05_mma_f16<1>(tmem_acc@: tcgen05\.mma \(B\) reads shared memory .* as 128-byte swizzle .* used no swizzle]=])

# --- The consumers' pipeline state reset at each tile (was a deadlock with no diagnosis) ----------
# The producer's position keeps counting across tiles; the consumers' restarts at stage 0, phase 0
# and waits for phases of its barriers that no longer come in that order: the deadlock report says
# which waits skipped phases, and why that points at a PipelineState.
# (The ring's barriers: full and empty on hopper, tma2mma and mma2tma on blackwell.)
set(full_hopper full)
set(empty_hopper empty)
set(full_blackwell tma2mma)
set(empty_blackwell mma2tma)
foreach(track hopper blackwell)
  set(full "${full_${track}}")
  set(empty "${empty_${track}}")
  gemm_add_step_variant(step06_${track}_read_reset_per_tile STEP 06 TRACK ${track}
    REPLACE [=[const Tile tile = sched.tile(cursor.unit, 0);]=]
    WITH [=[const Tile tile = sched.tile(cursor.unit, 0); read = PipelineState<kStages>{};]=]
    EXPECT "^emulator: deadlock: @FILE@:[0-9]+: threads waited for mbarrier phases out of step with their own earlier waits: .* waited at @FILE@:[0-9]+ (for phase [0-9]+ of mbarrier '${full}' stage [01] .*: it skipped phase|on the '${full}' ring for stage [01] phase [0-9]+ .*: it skipped [0-9]+ position).* is a PipelineState re-initialised.* mbarrier '${empty}' stage [01] .*waits for the phase of parity [01]; the barrier has completed [0-9]+ phase\\(s\\) \\(current phase parity [01]\\)")
endforeach()

# --- A hang: the producer waits on `empty` with the consumers' parity ----------------------------
# The deadlock report names each blocked thread's barrier, stage, parity and the barrier's phase,
# and the diagnosis the pattern (docs/emulator.md shows this report).
gemm_add_step_variant(step05_blackwell_producer_waits_consumer_parity STEP 05 TRACK blackwell
  REPLACE [=[write.empty_parity(), WaitTag{"mma2tma", "producer"}]=]
  WITH [=[write.full_parity(), WaitTag{"mma2tma", "producer"}]=]
  EXPECT [=[^emulator: deadlock: @FILE@:@LINE@: CTA \([0-9]+,0,0\) thread 0 \(warp 0, lane 0, role producer\) waits on mbarrier 'mma2tma' stage 0 \(shared 0x[0-9a-f]+\) for parity 0 \(phase 0\), and [^|]*role epilogue\) waits on mbarrier 'mma2ld' stage 0 [^|]*each its first wait, on a fresh barrier [^|]*a wrong initial phase\? A producer waiting for a free slot waits for parity phase \^ 1, which returns at once on a fresh barrier \(PipelineState::empty_parity\).* warp 0 lane 0, role producer, at @FILE@:@LINE@: mbarrier\.try_wait\.parity on mbarrier 'mma2tma' stage 0 \(shared 0x[0-9a-f]+\): waits for the phase of parity 0; the barrier has completed 0 phase\(s\) \(current phase parity 0\), 0 of 1 arrivals came]=])

# --- Warp-specialized steps (7 on): a wrong arrival count, a missing wait -------------------------
# The roles meet only at mbarriers, so each of these bugs is either a hang, reported with the
# barrier each blocked role waits on, or a rule broken at the operation that runs too early.
# An init count the arrivals never reach: the role that waits on the barrier hangs.
foreach(step 07 08)
  gemm_add_step_variant(step${step}_blackwell_tma2mma_count_2 STEP ${step} TRACK blackwell
    REPLACE [=[mbarrier_init(&smem.tma2mma[s], 1);]=] WITH [=[mbarrier_init(&smem.tma2mma[s], 2);]=]
    EXPECT [=[^emulator: deadlock: @FILE@:[0-9]+: mbarrier 'tma2mma' stage 0 .* got 1 of its 2 arrivals this phase, and .*role mma\) waits on it: the init count or the arriving threads are wrong.*role mma, at @FILE@:[0-9]+: mbarrier\.try_wait\.parity on mbarrier 'tma2mma' stage 0 .*1 of 2 arrivals came]=])
  gemm_add_step_variant(step${step}_hopper_empty_count_8 STEP ${step} TRACK hopper
    REPLACE [=[mbarrier_init(&smem.empty[s], kReleaseArrivals);]=] WITH [=[mbarrier_init(&smem.empty[s], 2 * kReleaseArrivals);]=]
    EXPECT [=[^emulator: deadlock: @FILE@:[0-9]+: mbarrier 'empty' stage 0 .* got 4 of its 8 arrivals this phase, and .*role producer\) waits on it: the init count or the arriving threads are wrong.*role producer, at @FILE@:[0-9]+: mbarrier\.try_wait\.parity on mbarrier 'empty' stage 0 .*4 of 8 arrivals came]=])
endforeach()
# A missing wait: the MMA warp no longer waits for the epilogue to have read the accumulator
# (blackwell), the consumer no longer waits for its K slice to land (hopper).
foreach(step 07 08)
  gemm_add_step_variant(step${step}_blackwell_no_ld2mma_wait STEP ${step} TRACK blackwell
    REPLACE [=[mbarrier_wait(&smem.ld2mma, static_cast<uint32_t>(local & 1) ^ 1u, WaitTag{"ld2mma", "mma"});]=]
    WITH "/* variant: no wait on ld2mma */"
    EXPECT [=[^emulator: tcgen05\.ld of TMEM an MMA is still writing: @FILE@:@LINE_OF:tmem_ld_32x32b_x32(taddr@: .*issued by .*role mma\) at @FILE@:@LINE_OF:tcgen05_mma_f16<1>(tmem_acc@\).*a release barrier such as ld2mma]=])
  gemm_add_step_variant(step${step}_hopper_no_full_wait STEP ${step} TRACK hopper
    REPLACE [=[mbarrier_wait(&smem.full[read.stage], read.full_parity(), WaitTag{"full", "consumer"});]=]
    WITH "/* variant: no wait on full */"
    EXPECT [=[^emulator: shared memory read while a TMA load writes it: @FILE@:@LINE_OF:wgmma_f32_f16_ss<kTileN>@: .*the load at @FILE@:(@LINE_OF:tma_load_2d(smem.a[s]@|@LINE_OF:tma_load_2d(smem.b[s]@), completing on mbarrier .*the wait on that mbarrier is missing]=])
endforeach()

# Steps 9-10, blackwell track
# --- The odd CTA's remote arrive on the leader's ld2mma dropped ----------------------------------
# ld2mma lives in the leader and counts the epilogue threads of both CTAs of the pair; the odd
# CTA's arrive remotely (mbarrier.arrive on a shared::cluster address). Without them each phase
# gets half its arrivals: the leader's MMA issuer hangs before the second tile, and the deadlock
# report names the barrier, the CTA (with its cluster rank) and the missing arrivals.
gemm_add_step_variant(step09_blackwell_no_peer_ld2mma_arrive STEP 09 TRACK blackwell
  REPLACE [=[mbarrier_arrive_cluster(&smem.ld2mma, 0);]=]
  WITH [=[if (cluster_ctarank() == 0) mbarrier_arrive_cluster(&smem.ld2mma, 0);]=]
  EXPECT [=[^emulator: deadlock: @FILE@:@LINE_OF:mbarrier_wait(&smem.ld2mma, static_cast<uint32_t>(local & 1) ^ 1u, WaitTag{"ld2mma", "mma"}@: mbarrier 'ld2mma' stage 0 \(shared 0x[0-9a-f]+\) of CTA \(0,0,0\) \[cluster rank 0\] got 128 of its 256 arrivals this phase, and .*role mma\) waits on it.*CTA \(0,0,0\) \[cluster rank 0\] warp 5 lane 0, role mma, at @FILE@:@LINE_OF:mbarrier_wait(&smem.ld2mma, static_cast<uint32_t>(local & 1) ^ 1u, WaitTag{"ld2mma", "mma"}@: mbarrier\.try_wait\.parity on mbarrier 'ld2mma' .*128 of 256 arrivals came]=])
# --- The leader's tma2mma expecting one CTA's bytes instead of the pair's ------------------------
# Both CTAs' TMA loads complete on the leader's barrier: with one CTA's bytes announced, the phase
# completes before the other half has landed (or a load arrives after its phase completed).
gemm_add_step_variant(step09_blackwell_expect_one_cta_bytes STEP 09 TRACK blackwell
  REPLACE [=[mbarrier_arrive_expect_tx(&smem.tma2mma[s], kPairStageBytes);]=]
  WITH [=[mbarrier_arrive_expect_tx(&smem.tma2mma[s], kStageBytes);]=]
  EXPECT [=[^emulator: expect_tx bytes differ from the bytes delivered: @FILE@:@LINE@: mbarrier .* of CTA \(0,0,0\) \[cluster rank 0\] completed phase [0-9]+ with all 1 arrivals and its expected 24576 tx bytes in \(announced by the arrive\.expect_tx at @FILE@:@LINE@\), while [12] TMA load\(s\) crediting that phase are still in flight \(cp\.async\.bulk\.tensor\.2d\.cta_group::2 \(TMA load\) issued by CTA \([01],0,0\) \[cluster rank [01]\]]=])
# --- Step 10: the odd CTA's remote arrives on ld2mma[consumer] dropped ----------------------------
# The same bug with two consumers: each MMA warp hangs before its second tile on its own ld2mma.
gemm_add_step_variant(step10_blackwell_no_peer_ld2mma_arrive STEP 10 TRACK blackwell
  REPLACE [=[mbarrier_arrive_cluster(&smem.ld2mma[consumer], 0);]=]
  WITH [=[if (cluster_ctarank() == 0) mbarrier_arrive_cluster(&smem.ld2mma[consumer], 0);]=]
  EXPECT [=[^emulator: deadlock: @FILE@:@LINE_OF:mbarrier_wait(&smem.ld2mma[consumer], static_cast<uint32_t>(local & 1) ^ 1u, WaitTag{"ld2mma", "mma"}@: mbarrier 'ld2mma' stage [01] \(shared 0x[0-9a-f]+\) of CTA \(0,0,0\) \[cluster rank 0\] got 128 of its 256 arrivals this phase, and .*role mma\) waits on it.*CTA \(0,0,0\) \[cluster rank 0\] warp (9|10) lane 0, role mma, at @FILE@:@LINE_OF:mbarrier_wait(&smem.ld2mma[consumer], static_cast<uint32_t>(local & 1) ^ 1u, WaitTag{"ld2mma", "mma"}@: mbarrier\.try_wait\.parity on mbarrier 'ld2mma' stage [01] .*128 of 256 arrivals came]=])
# --- Step 10: a stage released by one MMA warp's commit --------------------------------------------
# mma2tma[s] counts both MMA warps' commits; initialised for one, the first commit completes the
# phase and the second one arrives on a phase it is not ordered after, or (depending on the schedule)
# the producer refills the stage while the other MMA warp has not yet read it: that MMA warp's MMAs
# still read it, or its next wait on tma2mma falls two phases behind.
gemm_add_step_variant(step10_blackwell_release_count_1 STEP 10 TRACK blackwell
  REPLACE [=[mbarrier_init(&smem.mma2tma[s], kReleaseArrivals);]=]
  WITH [=[mbarrier_init(&smem.mma2tma[s], 1);]=]
  EXPECT [=[^emulator: (more arrivals than the init count: @FILE@:@LINE_OF:tcgen05_commit_multicast<kCtaGroup>(&smem.mma2tma@: .*arrives on mbarrier 'mma2tma' stage [0-3] .*\(init count 1,|mbarrier wait two phases behind: @FILE@:@LINE_OF:mbarrier_wait(&smem.tma2mma@: .*role mma\) waits for parity [01] of mbarrier 'tma2mma' stage [0-3] |shared memory overwritten while an asynchronous operation reads it: tcgen05\.mma \(A\) issued by .*role mma\) at @FILE@:@LINE_OF:tcgen05_mma_f16<kCtaGroup>(@ .*\(by a TMA load\))]=])

# Steps 9-10, hopper track
# --- The consumers' remote arrive on the peer's `empty` dropped ----------------------------------
# Each CTA's producer multicasts its half of B into both CTAs, so a stage's `empty` counts the
# consumer warps of both CTAs; the peer's arrive remotely (mbarrier.arrive on a shared::cluster
# address). With only the own CTA's arrivals every phase gets half its count: the producers hang at
# the end of the first lap of the ring, and the deadlock report names the barrier, the CTA (with its
# cluster rank) and the missing arrivals.
foreach(step 09 10)
  if(step STREQUAL "09")
    set(got "4")
    set(count "8")
  else()
    set(got "8")
    set(count "16")
  endif()
  gemm_add_step_variant(step${step}_hopper_no_peer_empty_arrive STEP ${step} TRACK hopper
    REPLACE [=[for (uint32_t r = 0; r < kClusterM; ++r) mbarrier_arrive_cluster(&smem.empty[s], r);]=]
    WITH [=[for (int own = 0; own < 1; ++own) mbarrier_arrive_cluster(&smem.empty[s], cluster_ctarank()); /* variant: the peer is never told (a loop still, for the #pragma unroll before it) */]=]
    EXPECT "^emulator: deadlock: @FILE@:@LINE_OF:WaitTag{\"empty\", \"producer\"}@: mbarrier 'empty' stage 0 \\(shared 0x[0-9a-f]+\\) of CTA \\([01],0,0\\) \\[cluster rank [01]\\] got ${got} of its ${count} arrivals this phase, and .*role producer\\) waits on it.*CTA \\([01],0,0\\) \\[cluster rank [01]\\] warp 0 lane [0-9]+, role producer, at @FILE@:@LINE_OF:WaitTag{\"empty\", \"producer\"}@: mbarrier\\.try_wait\\.parity on mbarrier 'empty' stage 0 .*${got} of ${count} arrivals came")
endforeach()
# --- B loaded by each CTA itself, no multicast, while both CTAs still release each stage -----------
# The remote arrivals on the peer's `empty` stay in phase only because of the multicast: a CTA's
# `full` then also waits for the peer producer's half of B, and that load waits for the peer's
# `empty`. With each CTA loading both halves itself, one CTA can run a lap ahead and arrive on the
# peer's barrier for the next phase before the peer's own consumer arrived for this one: the
# barrier gets more arrivals than its count (steps/09_cluster/NOTES.md).
foreach(step 09 10)
  gemm_add_step_variant(step${step}_hopper_release_without_multicast STEP ${step} TRACK hopper
    REPLACE [=[  tma_load_2d_multicast(smem.b[s] + rank * kBRowsPerCta * kTileK, map_b, &smem.full[s], k0,
                        static_cast<int32_t>(n0 + rank * kBRowsPerCta), kClusterMask);]=]
    WITH [=[  tma_load_2d(smem.b[s] + rank * kBRowsPerCta * kTileK, map_b, &smem.full[s], k0, static_cast<int32_t>(n0 + rank * kBRowsPerCta));
  tma_load_2d(smem.b[s] + (rank ^ 1) * kBRowsPerCta * kTileK, map_b, &smem.full[s], k0, static_cast<int32_t>(n0 + (rank ^ 1) * kBRowsPerCta));]=]
    EXPECT [=[^emulator: more arrivals than the init count: @FILE@:@LINE_OF:mbarrier_arrive_cluster(&smem.empty[s], r);@: mbarrier\.arrive\.relaxed\.shared::cluster arrives on mbarrier 'empty' stage [0-9]+ .*of CTA \([0-9]+,0,0\) \[cluster rank [01]\] .*is one more for phase [0-9]+.*a thread of another CTA of the cluster arrived for the next phase early]=])
endforeach()
# --- The producer's tail dropped ------------------------------------------------------------------
# No cluster barrier ends the kernel: a CTA may exit once its producer has seen the last release of
# every stage, the peer's remote arrivals among them. Without that tail a CTA that finishes first
# exits while its peer's consumers still arrive on its `empty` barriers. Whether one does depends on
# the schedule: step 10 runs at 257x264x200 with seeds 1, 3 and 5, whose schedules each do (2 and 4
# do not).
foreach(step 09 10)
  if(step STREQUAL "09")
    set(shape SHAPE 520x392x136)
  else()
    set(shape SHAPE 257x264x200 SEEDS 1 3 5)
  endif()
  gemm_add_step_variant(step${step}_hopper_no_producer_tail STEP ${step} TRACK hopper ${shape}
    REPLACE [=[    mbarrier_wait(&smem.empty[write.stage], write.empty_parity(), WaitTag{"empty", "producer tail"});]=]
    WITH [=[    /* variant: the tail waits for nothing */]=]
    EXPECT [=[^emulator: CTA exiting with peer traffic in flight: @FILE@:@LINE_OF:mbarrier_arrive_cluster(&smem.empty[s], r);@: mbarrier\.arrive\.relaxed\.shared::cluster reached mbarrier 'empty' stage [0-9]+ .*of CTA \([0-9]+,0,0\) \[cluster rank [01]\] after that CTA exited]=])
endforeach()
# --- Step 10: a staging slot reused before its TMA store has read it -----------------------------
# Each consumer stages box b in slot b % 2 and waits, before staging, until the store two boxes back
# has read the slot. Without that wait the staging stores overwrite a slot a TMA store may still be
# reading: the writers are not ordered after the wait_group.read that observes that store's read.
gemm_add_step_variant(step10_hopper_staging_slot_reused STEP 10 TRACK hopper
  REPLACE [=[if (t == 0) tma_store_wait_group_read<kStagingBoxes - 1>();]=]
  WITH [=[/* variant: the slot's previous store is not waited for */]=]
  EXPECT [=[^emulator: shared memory overwritten while an asynchronous operation reads it: @FILE@:@LINE_OF:fence_proxy_async_shared();@: .*role consumer\) \(found at its fence\.proxy\.async\.shared::cta at @FILE@:@LINE_OF:fence_proxy_async_shared();@\), while the TMA store group committed at @FILE@:@LINE_OF:tma_store_commit_group()@ by thread (128|256) still reads it]=])

# --- setmaxnreg's register pool (hopper) ---------------------------------------------------------
# The producer warpgroup never lowers its count: the consumers' setmaxnreg.inc waits for registers
# the CTA's pool never gets (on hardware: a hang). The deadlock report names the instruction, the
# registers it waits for and what each warpgroup holds.
gemm_add_step_variant(step10_hopper_no_setmaxnreg_dec STEP 10 TRACK hopper
  REPLACE [=[setmaxnreg_dec<kProducerRegs>();  // the whole warpgroup executes it (.sync.aligned)]=]
  WITH [=[/* variant: the producer keeps its registers */]=]
  EXPECT [=[^emulator: deadlock: @FILE@:@LINE_OF:setmaxnreg_inc<kConsumerRegs>();@: setmaxnreg\.inc 232 in CTA \([0-9]+,0,0\) \[cluster rank [01]\] warpgroup [12] waits for 8192 registers .*has not run setmaxnreg\.dec.*at @FILE@:@LINE_OF:setmaxnreg_inc<kConsumerRegs>();@: setmaxnreg\.inc 232 \(warpgroup [12]\): waits for 8192 registers \(128 threads x \(232 - 168\)\), the CTA's pool has 0 free; the launch gave its 384 threads 168 registers each \(64512\), held now per thread: warpgroup 0 168]=])

# --- tcgen05.fence::after_thread_sync on the MMA warp's path from ld2mma (blackwell) --------------
# The MMA warp waits on ld2mma (the epilogue has read the accumulator) before the tile's first
# MMAs overwrite it. Here the wait comes after the K loop's fence in mma_tile, right before the
# first MMA (mma_tile is handed the tile count for it): nothing orders the MMAs after the
# epilogue's tcgen05.ld. (Dropping only the fence after the ld2mma wait is no bug: the fence after
# the tma2mma wait that follows orders the MMAs after both waits, tcgen05.fence::after_thread_sync
# ordering what follows it after every synchronisation before it.)
gemm_add_step_variant(step08_blackwell_ld2mma_wait_after_fence STEP 08 TRACK blackwell
  REPLACE [=[    tcgen05_fence_after_thread_sync();
    // END SOLUTION step05]=]
  WITH [=[    tcgen05_fence_after_thread_sync();
    if (ks == 0) mbarrier_wait(&smem.ld2mma, static_cast<uint32_t>(local & 1) ^ 1u, WaitTag{"ld2mma", "mma"});]=]
  REPLACE [=[    mbarrier_wait(&smem.ld2mma, static_cast<uint32_t>(local & 1) ^ 1u, WaitTag{"ld2mma", "mma"});
    tcgen05_fence_after_thread_sync();]=]
  WITH [=[    /* variant: the wait on ld2mma moved after the fence in mma_tile */
    tcgen05_fence_after_thread_sync();]=]
  REPLACE [=[                                         uint32_t tmem_acc) {
  for (int64_t ks = 0; ks < k_slices; ++ks) {]=]
  WITH [=[                                         uint32_t tmem_acc, int64_t local = 0) {
  for (int64_t ks = 0; ks < k_slices; ++ks) {]=]
  REPLACE [=[mma_tile(smem, read, k_slices, tmem_acc);]=] WITH [=[mma_tile(smem, read, k_slices, tmem_acc, local);]=]
  EXPECT [=[^emulator: missing tcgen05\.fence::after_thread_sync: @FILE@:@LINE_OF:tcgen05_mma_f16<1>(tmem_acc@: tcgen05\.mma after a thread synchronisation \(its mbarrier wait at @FILE@:@LINE+1@\) that ordered it after other threads. work \(TMEM read by tcgen05\.ld\)]=])

# --- A warp that is not converged at an .aligned cluster barrier (blackwell) ----------------------
# In the producer and MMA warps one lane ran the role (and waited on mbarriers) while the others
# went straight to the teardown; barrier.cluster.arrive.aligned needs the whole warp together, which
# the teardown's warp_sync() restores.
gemm_add_step_variant(step09_blackwell_no_warp_sync_before_cluster_sync STEP 09 TRACK blackwell
  REPLACE [=[  warp_sync();
  tcgen05_fence_before_thread_sync();
  cluster_sync();]=]
  WITH [=[  /* variant: no warp_sync() */
  tcgen05_fence_before_thread_sync();
  cluster_sync();]=]
  EXPECT [=[^emulator: lanes not converged at a \.sync\.aligned instruction: @FILE@:@LINE+2@: barrier\.cluster\.arrive\.release\.aligned is reached by lane 0 of warp [45] after waiting on mbarrier '(empty|mma2tma|tma2mma|ld2mma)' .* and by lane [0-9]+, which did not wait there]=])

# --- A stage released through relaxed remote arrives before the warp's own wgmma.wait_group --------
# (hopper, step 9) The release tells the producers of both CTAs that the stage's wgmmas have
# finished reading it; a relaxed arrive orders execution, which is all a write after a read needs,
# but here it comes before the wait: the next TMA load into the stage is not ordered after the
# warp's wgmmas, and is caught whatever the schedule.
gemm_add_step_variant(step09_hopper_release_before_wait STEP 09 TRACK hopper
  REPLACE [=[    wgmma_wait_group<1>();  // this warp's share of slice ks-1's wgmmas has finished reading its stage]=]
  WITH [=[    if (ks > 0 && lane_id() == 0) release(smem, release_stage);  wgmma_wait_group<1>();]=]
  REPLACE [=[    if (ks > 0 && lane_id() == 0) release(smem, release_stage);]=] WITH "/* variant: moved before the wait */"
  EXPECT [=[^emulator: shared memory overwritten while an asynchronous operation reads it: @FILE@:@LINE_OF:tma_load_2d(smem.a[s]@: .*warp [0-9]+'s share of the wgmma group committed at @FILE@:@LINE_OF:wgmma_commit_group();@.*arrived on mbarrier 'empty' stage [0-9] .*at @FILE@:@LINE_OF:mbarrier_arrive_cluster(&smem.empty[s], r);@ before its wgmma\.wait_group covered this group]=])

# --- A CTA pair's TMA load completing on the wrong barrier (blackwell) ----------------------------
# tma_load_2d_cta_pair computes the leader's barrier address (mapa to rank & ~1, cta_pair_barrier)
# and the emulator credits the barrier that address names. Here the B load passes the CTA's own
# address, as a wrapper without the mapa would: the odd CTA's bytes would land on its own barrier.
gemm_add_step_variant(step09_blackwell_pair_load_without_mapa STEP 09 TRACK blackwell
  REPLACE [=[  tma_load_2d_cta_pair(smem.b[s], map_b, &smem.tma2mma[s], k0, static_cast<int32_t>(n0 + rank * kBRowsPerCta));]=]
  WITH [=[  tma_load_2d_cta_pair_at(smem.b[s], map_b, smem_addr(&smem.tma2mma[s]), k0, static_cast<int32_t>(n0 + rank * kBRowsPerCta), SourceLoc::current());]=]
  EXPECT [=[^emulator: cta_group::2 TMA load not crediting the leader's barrier: @FILE@:@LINE@: cp\.async\.bulk\.tensor\.2d\.cta_group::2 \(TMA load\) by CTA \(1,0,0\) \[cluster rank 1\] completes its bytes on mbarrier at shared 0x[0-9a-f]+ of CTA \(1,0,0\) \[cluster rank 1\], the odd CTA of the pair: .*on its own barrier \((at shared 0x[0-9a-f]+|'tma2mma' stage [0-9] )]=])

# --- The pair's TMEM instructions, across the pair (blackwell) ------------------------------------
# One warp of each CTA executes tcgen05.alloc.cta_group::2 (and dealloc, relinquish), the same warp
# with the same slot and columns: here the odd CTA allocates from warp 1.
gemm_add_step_variant(step10_blackwell_pair_alloc_other_warp STEP 10 TRACK blackwell
  REPLACE [=[  if (warp == 0) {
    tmem_alloc<kCtaGroup, kTmemColumns>(&smem.tmem_base);]=]
  WITH [=[  if (warp == static_cast<int>(rank)) {
    tmem_alloc<kCtaGroup, kTmemColumns>(&smem.tmem_base);]=]
  EXPECT [=[^emulator: CTA pair instruction differs between the CTAs: @FILE@:@LINE+1@: tcgen05\.alloc\.cta_group::2 executed by CTA \(0,0,0\) \[cluster rank 0\] warp 0 at @FILE@:@LINE+1@ and by CTA \(1,0,0\) \[cluster rank 1\] warp 1 at @FILE@:@LINE+1@ from warp 0 in one CTA and warp 1 in the other]=])
# --- TMEM is per SM: a ring shallow enough for two CTAs per SM (blackwell) ------------------------
# With one stage the shared memory lets two CTAs share an SM (the static_asserts that pin one CTA
# per SM taken out), and each allocates twice the columns it uses: the two pairs of the persistent
# grid on the tests' 2 SMs each allocate all 512 columns of their SMs' TMEM.
gemm_add_step_variant(step10_blackwell_two_ctas_per_sm STEP 10 TRACK blackwell
  REPLACE [=[constexpr int kStages = 4;]=] WITH [=[constexpr int kStages = 1;]=]
  REPLACE [=[constexpr uint32_t kTmemColumns = kConsumers * kTileN;]=] WITH [=[constexpr uint32_t kTmemColumns = 2 * kConsumers * kTileN;]=]
  REPLACE [=[static_assert(sizeof(SharedStorage) > kSmemLimit / 2, "one CTA per SM: no other CTA pair shares this pair's TMEM");]=]
  WITH [=[/* variant: no static_assert pinning one CTA per SM */]=]
  REPLACE [=[static_assert(tmem_limited_smem_bytes(smem_bytes<SharedStorage>(), kTmemColumns) == smem_bytes<SharedStorage>(),
              "TMEM must not hold fewer accumulators than shared memory holds CTAs");]=]
  WITH [=[/* variant: nor the one on TMEM against
   shared memory */]=]
  EXPECT [=[^emulator: TMEM contention between co-resident CTAs: @FILE@:@LINE_OF:tmem_alloc<kCtaGroup, kTmemColumns>(&smem.tmem_base);@: tcgen05\.alloc\.cta_group::2 of 512 columns in CTA \([0-3],0,0\) \[cluster rank [01]\], which the launch places on SM [01] beside CTA \([0-3],0,0\) \[cluster rank [01]\] of another cluster \(shared memory and threads let 2 CTAs reside on an SM at once\)]=])

# --- Step 11: the split of the last wave through global memory ------------------------------------
# The parts of a split tile meet in scratch (common/scratch.h): each stores its partial sum, then
# thread 0 of its warpgroup takes a ticket between two fence.acq_rel.gpu. The emulator lets a CTA
# read another's writes only through a release of the writer's CTA that the signal (the ticket)
# carries and an acquire of the reader's CTA after it. At 200x64x1536 on 4 SMs the one work unit
# (one cluster tile) is split in two parts, run by the two clusters one after the other in a seeded
# order: the part that takes the last ticket reads the other's slot. Two seeds each: a run costs a
# second or two (24 K slices); the fences dropped show on either order of the clusters, the wrong
# part on one.
set(split_shape11 SHAPE 200x64x1536 SMS 4 SEEDS 1 2)
# The same split in step 12, the tiling per problem: at 200 rows its rule takes 64-row tiles, four,
# one per SM, and splits nothing; at 64x64x1536 it takes one 64x64 tile (hopper) or one 128-row CTA
# tile (blackwell), split in two parts on two of the four SMs. So every variant runs on both steps,
# both tracks.
set(split_shape12 SHAPE 64x64x1536 SMS 4 SEEDS 1 2)
foreach(step 11 12)
  set(split_shape ${split_shape${step}})
  foreach(track hopper blackwell)
    if(track STREQUAL "hopper")
      set(c "c")
    else()
      set(c "consumer")
    endif()
    # The release fence before the ticket dropped: the writer's later fence (the acquire after its
    # ticket) does release the slot, but after the ticket, which so carries nothing.
    gemm_add_step_variant(step${step}_${track}_no_release_before_ticket STEP ${step} TRACK ${track} ${split_shape}
      REPLACE "    fence_acq_rel_gpu();\n    smem.ticket[${c}] = atomic_add_gpu(ticket, 1);"
      WITH "    /* variant: no release before the ticket */\n    smem.ticket[${c}] = atomic_add_gpu(ticket, 1);"
      EXPECT [=[^emulator: global memory read without release/acquire: @FILE@:[0-9]+: a load of global memory by CTA \([0-9]+,0,0\) .* reads 0x[0-9a-f]+ \(scratch data, word [0-9]+\), which CTA \([0-9]+,0,0\) thread [0-9]+ wrote in this launch \(before its [^)]* at @FILE@:[0-9]+\) and released at its fence\.acq_rel\.gpu at @FILE@:@LINE+2@ .*but no acquire of CTA .* synchronises with that release: the release must come before the signal]=])
    # The acquire fence after the ticket dropped: the ticket's atomic read the other part's release,
    # but nothing acquires it.
    gemm_add_step_variant(step${step}_${track}_no_acquire_after_ticket STEP ${step} TRACK ${track} ${split_shape}
      REPLACE "    smem.ticket[${c}] = atomic_add_gpu(ticket, 1);\n    fence_acq_rel_gpu();"
      WITH "    smem.ticket[${c}] = atomic_add_gpu(ticket, 1);\n    /* variant: no acquire after the ticket */"
      EXPECT [=[^emulator: global memory read without release/acquire: @FILE@:[0-9]+: a load of global memory .* reads 0x[0-9a-f]+ \(scratch data, word [0-9]+\), which CTA \([0-9]+,0,0\) thread [0-9]+ wrote in this launch .* and released at its fence\.acq_rel\.gpu at @FILE@:@LINE-1@ .*'s atomic at @FILE@:@LINE@ read a value that release reached, and no fence\.acq_rel\.gpu followed it]=])
    # The wrong part taken for the last one: the part with the highest index instead of the part that
    # took the last ticket. When that part runs first, it reads the other part's slot before anything
    # wrote it; seeds 1 and 2 order the two clusters so (seed 3 runs them the other way round, where
    # the wrong choice happens to be right and D is too).
    gemm_add_step_variant(step${step}_${track}_wrong_last_part STEP ${step} TRACK ${track} ${split_shape}
      REPLACE "if (smem.ticket[${c}] != static_cast<uint32_t>(item.parts - 1)) return false;"
      WITH "if (item.part != item.parts - 1) return false;"
      EXPECT [=[^emulator: global memory read of data no thread wrote: @FILE@:[0-9]+: a load of global memory .* reads 0x[0-9a-f]+ \(scratch data, word [0-9]+\), which no thread has written in this launch]=])
  endforeach()
endforeach()
