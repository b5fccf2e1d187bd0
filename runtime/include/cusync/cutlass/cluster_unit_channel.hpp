// Hands the work units that a cluster's rank-0 load thread draws from the chain queue to the rank-1 load thread,
// through distributed shared memory: a ring of unit slots in rank 1's shared memory with one "full" mbarrier per slot
// there and one "empty" mbarrier per slot in rank 0. Device code (sm_90); needs CUTLASS's headers (cute cluster
// helpers).
//
// Why a hand-off and not two draws: the two blocks of a cluster share each weight tile through TMA multicast, so they
// must run the same units in the same order (tiles (x, 2y') and (x, 2y' + 1) of one split-K part). One drawer per
// cluster keeps the queue's progress argument (chain_queue.h) as it is, with clusters in place of blocks.
//
// Protocol, unit i in slot i % Slots, phase (i / Slots) & 1:
//  * rank 0 waits until slot i's previous unit (i - Slots) was read (empty barrier), draws, writes the unit into
//    rank 1's slot with st.shared::cluster, and arrives on rank 1's full barrier with release at cluster scope;
//  * rank 1 waits on its full barrier (acquire, cluster scope), reads the slot, and unless the unit is the stop
//    ticket arrives on rank 0's empty barrier (release, cluster scope). The stop unit is not acknowledged, so no
//    block ever arrives on a block that may have exited; before it exits, rank 0 waits for the receipts of its last
//    real units (senderTail).
#pragma once

#include <cstdint>
#include <type_traits>

#include <cute/arch/cluster_sm90.hpp>
#include <cutlass/arch/barrier.h>

#include "cusync/chain_queue.cuh"
#include "cusync/semaphore.cuh"  // detail::globalTimerNs, the watchdog's clock

namespace cusync::cutlass_sm90 {

template <int Slots>
struct ClusterUnitChannel {
  static_assert(std::is_trivially_copyable_v<ChainUnit> && sizeof(ChainUnit) % 4 == 0, "a unit is sent in words");
  static constexpr int kWords = int(sizeof(ChainUnit) / 4);

  struct SharedStorage {
    alignas(16) ChainUnit units[Slots];  // used in rank 1
    alignas(8) std::uint64_t full[Slots];   // rank 1's: rank 0 arrives once a unit is written
    alignas(8) std::uint64_t empty[Slots];  // rank 0's: rank 1 arrives once it has read a unit
  };

  // One thread per block, before the cluster barrier that follows every barrier initialization.
  CUTLASS_DEVICE static void init(SharedStorage& s) {
    for (int i = 0; i < Slots; ++i) {
      cutlass::arch::ClusterBarrier::init(&s.full[i], 1);
      cutlass::arch::ClusterBarrier::init(&s.empty[i], 1);
    }
    cutlass::arch::fence_barrier_init();
  }

  // Rank 0, before drawing unit `index`: waits until the unit that used its slot before was read.
  CUTLASS_DEVICE static void waitSlotFree(SharedStorage& s, std::uint32_t index) {
    waitParity(&s.empty[index % Slots], ((index / Slots) & 1u) ^ 1u, "rank 1's receipt of the slot's last unit");
  }

  // Rank 0: unit `index` into rank 1's slot.
  CUTLASS_DEVICE static void send(SharedStorage& s, std::uint32_t index, ChainUnit const& unit) {
    const int slot = int(index % Slots);
    const std::uint32_t* words = reinterpret_cast<const std::uint32_t*>(&unit);
    const std::uint32_t remoteUnit = remoteAddress(&s.units[slot], 1);
#pragma unroll
    for (int w = 0; w < kWords; ++w)
      asm volatile("st.shared::cluster.u32 [%0], %1;" ::"r"(remoteUnit + 4u * std::uint32_t(w)), "r"(words[w])
                   : "memory");
    arriveRemote(&s.full[slot], 1);
  }

  // Rank 1: unit `index`, once rank 0 has written it.
  CUTLASS_DEVICE static ChainUnit receive(SharedStorage& s, std::uint32_t index) {
    const int slot = int(index % Slots);
    waitParity(&s.full[slot], (index / Slots) & 1u, "rank 0's next unit");
    ChainUnit unit;
    std::uint32_t* words = reinterpret_cast<std::uint32_t*>(&unit);
    const volatile std::uint32_t* source = reinterpret_cast<const volatile std::uint32_t*>(&s.units[slot]);
#pragma unroll
    for (int w = 0; w < kWords; ++w) words[w] = source[w];
    if (unit.hasWork()) arriveRemote(&s.empty[slot], 0);
    return unit;
  }

  // Rank 0, after sending the stop unit as unit `stopIndex`: waits for the receipts of the real units before it
  // that may still be in flight, so that no arrive reaches this block after it exits.
  CUTLASS_DEVICE static void senderTail(SharedStorage& s, std::uint32_t stopIndex) {
    const std::uint32_t first = stopIndex > std::uint32_t(Slots) ? stopIndex - std::uint32_t(Slots) : 0u;
    for (std::uint32_t j = first; j < stopIndex; ++j)
      waitParity(&s.empty[j % Slots], (j / Slots) & 1u, "rank 1's receipt of a last unit");
  }

 private:
  CUTLASS_DEVICE static std::uint32_t remoteAddress(const void* local, std::uint32_t rank) {
    const std::uint32_t address = cute::cast_smem_ptr_to_uint(local);
    std::uint32_t remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(address), "r"(rank));
    return remote;
  }
  CUTLASS_DEVICE static void arriveRemote(std::uint64_t* barrier, std::uint32_t rank) {
    asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(remoteAddress(barrier, rank))
                 : "memory");
  }
  // Debug builds (CUSYNC_WAIT_TIMEOUT_NS) trap after the timeout, naming the wait.
  CUTLASS_DEVICE static void waitParity(std::uint64_t* barrier, std::uint32_t parity, const char* what) {
    const std::uint32_t address = cute::cast_smem_ptr_to_uint(barrier);
    std::uint32_t done = 0;
#if defined(CUSYNC_WAIT_TIMEOUT_NS)
    const std::uint64_t start = ::cusync::detail::globalTimerNs();
#endif
    while (!done) {
#if defined(CUSYNC_WAIT_TIMEOUT_NS)
      if (::cusync::detail::globalTimerNs() - start > CUSYNC_WAIT_TIMEOUT_NS) {
        printf("cusync watchdog: cluster unit hand-off: block %u (rank %u) waited %llu ns for %s (parity %u)\n",
               blockIdx.x, cute::block_rank_in_cluster(), static_cast<unsigned long long>(CUSYNC_WAIT_TIMEOUT_NS),
               what, parity);
        __trap();
      }
#endif
      asm volatile(
          "{\n"
          ".reg .pred p;\n"
          "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n"
          "selp.u32 %0, 1, 0, p;\n"
          "}\n"
          : "=r"(done)
          : "r"(address), "r"(parity)
          : "memory");
    }
  }
};

}  // namespace cusync::cutlass_sm90
