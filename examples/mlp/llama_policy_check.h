// The LLaMA example runs the registered GEMM instances, whose synchronization policies were compiled from the
// GPT-3 spec (examples/gemm/tile_sync_gemm_instance.cuh: PolicyType<P> = gpt3_mlp's Dep_dep_g1_TileSync / RowSync).
// Before it runs them it checks, tile by tile on the grids of the run, that
//   1. each compiled policy computes exactly what llama_mlp.dep's proven policy computes (semaphoreCount, and sem
//      and value of every tile) for the dependency it serves there:
//        GEMM 1 posts [gate | up]  with gpt3 Dep_dep_g1_TileSync   = llama Dep_swiglu_g1_TileSync   on g1
//        GEMM 2 waits for S        with gpt3 Dep_dep_g1_<P>        = llama Dep_down_gs_<P>          on gs
//   2. the policy is right for the dependency on those grids, whatever tile shapes the run uses (the proof covers
//      the spec's tile shape): every producer tile a consumer reads has sem < semaphoreCount and value equal to the
//      number of producer tiles sharing its semaphore, so a wait cannot end before that tile is posted.
// The SwiGLU stage itself uses llama_mlp.dep's policies directly. Host header.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cusync/tile.h"
#include "gpt3_mlp.h"   // the policies compiled into the GEMM instances (examples/gemm)
#include "llama_mlp.h"  // generated and proven by cusyncgen from examples/mlp/llama_mlp.dep
#include "swiglu_geometry.h"

namespace cusync::examples {

inline std::string describeTile(TileCoord t) {
  return "(" + std::to_string(t.x) + "," + std::to_string(t.y) + "," + std::to_string(t.z) + ")";
}
inline std::string describeGrid(GridShape g) {
  return std::to_string(g.x) + "x" + std::to_string(g.y) + "x" + std::to_string(g.z);
}

// Empty when `Compiled` and `Proven` agree on `grid`; otherwise the first difference.
template <class Compiled, class Proven>
std::string comparePolicies(GridShape grid) {
  const std::string both = std::string(Compiled::name) + " (compiled) and " + Proven::name + " (proven) on grid " +
                           describeGrid(grid) + ": ";
  if (Compiled::semaphoreCount(grid) != Proven::semaphoreCount(grid))
    return both + "semaphoreCount " + std::to_string(Compiled::semaphoreCount(grid)) + " vs " +
           std::to_string(Proven::semaphoreCount(grid));
  for (std::uint32_t linear = 0; linear < grid.tileCount(); ++linear) {
    const TileCoord t = tileAtLinear(linear, grid);
    if (Compiled::sem(t, grid) != Proven::sem(t, grid))
      return both + "sem of tile " + describeTile(t) + " is " + std::to_string(Compiled::sem(t, grid)) + " vs " +
             std::to_string(Proven::sem(t, grid));
    if (Compiled::value(t, grid) != Proven::value(t, grid))
      return both + "value of tile " + describeTile(t) + " is " + std::to_string(Compiled::value(t, grid)) + " vs " +
             std::to_string(Proven::value(t, grid));
  }
  return "";
}

// Empty when `Policy` is right on `grid` for a consumer that reads the tiles marked in `read` (by linear index);
// otherwise the first tile where it is not.
template <class Policy>
std::string checkPolicyOnGrid(GridShape grid, const std::vector<bool>& read) {
  const std::uint32_t count = Policy::semaphoreCount(grid);
  std::vector<std::uint32_t> tilesOfSemaphore(count, 0);
  for (std::uint32_t linear = 0; linear < grid.tileCount(); ++linear) {
    const TileCoord t = tileAtLinear(linear, grid);
    const std::uint32_t s = Policy::sem(t, grid);
    if (s >= count)
      return std::string(Policy::name) + " on grid " + describeGrid(grid) + ": tile " + describeTile(t) +
             " posts to semaphore " + std::to_string(s) + " of " + std::to_string(count);
    ++tilesOfSemaphore[s];
  }
  for (std::uint32_t linear = 0; linear < grid.tileCount(); ++linear) {
    if (!read[linear]) continue;
    const TileCoord t = tileAtLinear(linear, grid);
    const std::uint32_t s = Policy::sem(t, grid);
    if (Policy::value(t, grid) != tilesOfSemaphore[s])
      return std::string(Policy::name) + " on grid " + describeGrid(grid) + ": a wait for tile " + describeTile(t) +
             " expects " + std::to_string(Policy::value(t, grid)) + " posts on semaphore " + std::to_string(s) +
             ", which " + std::to_string(tilesOfSemaphore[s]) + " tiles post to";
  }
  return "";
}

// The GEMM-1 tiles the SwiGLU stage reads (every tile of S, through the kernel's own producer ranges); empty
// `error` unless a range leaves GEMM 1's grid.
inline std::vector<bool> gateUpTilesRead(const SwiGluGeometry& swiglu, GridShape g1, std::string& error) {
  std::vector<bool> read(g1.tileCount(), false);
  const GridShape gs = swiglu.grid();
  for (std::uint32_t linear = 0; linear < gs.tileCount(); ++linear) {
    const TileCoord s = tileAtLinear(linear, gs);
    swiglu.forEachProducerTile(s, [&](TileCoord p) {
      if (p.x >= g1.x || p.y >= g1.y) {
        if (error.empty())
          error = "SwiGLU tile " + describeTile(s) + " reads GEMM-1 tile " + describeTile(p) + ", outside grid " +
                  describeGrid(g1);
        return;
      }
      read[p.x + g1.x * p.y] = true;
    });
  }
  return read;
}

// Checks every policy the LLaMA chain uses on its grids: g1 (GEMM 1's tile grid), S's geometry, and the policy
// `DownPolicy` (llama Dep_down_gs_TileSync or _RowSync) with its compiled twin `CompiledDown` (gpt3 Dep_dep_g1_*)
// that GEMM 2 waits with. Returns the problems found (empty: every check passed).
template <class CompiledDown, class DownPolicy>
std::vector<std::string> checkLlamaPolicies(const SwiGluGeometry& swiglu, GridShape g1) {
  namespace gpt3 = cusync::generated::gpt3_mlp;
  namespace llama = cusync::generated::llama_mlp;
  std::vector<std::string> problems;
  auto note = [&](const std::string& problem) {
    if (!problem.empty()) problems.push_back(problem);
  };
  // GEMM 1 -> SwiGLU.
  note(comparePolicies<gpt3::Dep_dep_g1_TileSync, llama::Dep_swiglu_g1_TileSync>(g1));
  std::string rangeError;
  const std::vector<bool> gateUpRead = gateUpTilesRead(swiglu, g1, rangeError);
  note(rangeError);
  note(checkPolicyOnGrid<llama::Dep_swiglu_g1_TileSync>(g1, gateUpRead));
  // SwiGLU -> GEMM 2: a GEMM-2 tile reads all of S's columns in its rows, so every tile of S is read.
  const GridShape gs = swiglu.grid();
  note(comparePolicies<CompiledDown, DownPolicy>(gs));
  note(checkPolicyOnGrid<DownPolicy>(gs, std::vector<bool>(gs.tileCount(), true)));
  return problems;
}

}  // namespace cusync::examples
