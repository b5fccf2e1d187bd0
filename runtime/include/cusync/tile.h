// Tiles, grids and the two concepts generated code implements: synchronization policies and tile orders.
//
// Serves host and device: generated policy headers include only this file, so they compile with nvcc for the
// GPU and with a plain C++ compiler for host-side checks against the isl model.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define CUSYNC_HOST_DEVICE __host__ __device__
#else
#define CUSYNC_HOST_DEVICE
#endif

namespace cusync {

// A tile coordinate in a kernel's 3-D tile space.
struct TileCoord {
  std::uint32_t x = 0, y = 0, z = 0;
  friend CUSYNC_HOST_DEVICE constexpr bool operator==(TileCoord a, TileCoord b) {
    return a.x == b.x && a.y == b.y && a.z == b.z;
  }
};

// The extents of a kernel's tile space (the grid of the cuSync paper; for a non-persistent kernel, its CUDA grid).
struct GridShape {
  std::uint32_t x = 1, y = 1, z = 1;
  CUSYNC_HOST_DEVICE constexpr std::uint32_t tileCount() const { return x * y * z; }
  CUSYNC_HOST_DEVICE constexpr bool contains(TileCoord t) const { return t.x < x && t.y < y && t.z < z; }
  friend CUSYNC_HOST_DEVICE constexpr bool operator==(GridShape a, GridShape b) {
    return a.x == b.x && a.y == b.y && a.z == b.z;
  }
};

// Row-major linear index of a tile: x fastest. The default tile order, and the inverse of `tileAtLinear`.
CUSYNC_HOST_DEVICE constexpr std::uint32_t linearIndex(TileCoord t, GridShape g) {
  return (t.z * g.y + t.y) * g.x + t.x;
}
// `i` < g.tileCount(); for a 2-D grid (z = 1, every stage but batched ones) one division instead of three.
CUSYNC_HOST_DEVICE constexpr TileCoord tileAtLinear(std::uint32_t i, GridShape g) {
  if (g.z == 1) return TileCoord{i % g.x, i / g.x, 0u};
  return TileCoord{i % g.x, (i / g.x) % g.y, i / (g.x * g.y)};
}

// ---- The policy concept -------------------------------------------------------------------------------------
// A synchronization policy for one producer -> consumer dependency is a type with
//
//   CUSYNC_HOST_DEVICE static std::uint32_t semaphoreCount(GridShape producerGrid);
//   CUSYNC_HOST_DEVICE static std::uint32_t sem(TileCoord producerTile, GridShape producerGrid);
//   CUSYNC_HOST_DEVICE static std::uint32_t value(TileCoord producerTile, GridShape producerGrid);
//
// `sem` maps a producer tile to its semaphore in [0, semaphoreCount); `value` is how many producer tiles post to
// that semaphore per iteration, i.e. |sem^-1(sem(p))| — the target a consumer waits for. cusyncgen proves both.
//
// ---- The tile-order concept ---------------------------------------------------------------------------------
// A tile order is a type with
//
//   CUSYNC_HOST_DEVICE static std::uint32_t index(TileCoord tile, GridShape grid);
//
// a bijection from the grid's tiles onto [0, tileCount). The runtime tabulates its inverse so that the b-th
// value of a stage's tile counter yields the tile of order index b.

// Row-major order: the identity on linear indices.
struct RowMajorOrder {
  CUSYNC_HOST_DEVICE static constexpr std::uint32_t index(TileCoord t, GridShape g) { return linearIndex(t, g); }
};

// One semaphore per producer tile, one post each: the finest policy, valid for every dependency.
struct TileSync {
  CUSYNC_HOST_DEVICE static constexpr std::uint32_t semaphoreCount(GridShape g) { return g.tileCount(); }
  CUSYNC_HOST_DEVICE static constexpr std::uint32_t sem(TileCoord p, GridShape g) { return linearIndex(p, g); }
  CUSYNC_HOST_DEVICE static constexpr std::uint32_t value(TileCoord, GridShape) { return 1; }
};

// One semaphore per producer row (all x of a given y, z): the policy for a consumer that reads whole rows.
struct RowSync {
  CUSYNC_HOST_DEVICE static constexpr std::uint32_t semaphoreCount(GridShape g) { return g.y * g.z; }
  CUSYNC_HOST_DEVICE static constexpr std::uint32_t sem(TileCoord p, GridShape g) { return p.z * g.y + p.y; }
  CUSYNC_HOST_DEVICE static constexpr std::uint32_t value(TileCoord, GridShape g) { return g.x; }
};

}  // namespace cusync
