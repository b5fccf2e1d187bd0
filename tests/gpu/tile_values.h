// What the test stages write and read, and which producer tiles a consumer tile reads. Host and device: kernels
// produce and check these values, the host recomputes them to check outputs element by element.
//
// Every produced element is a hash of (run salt, iteration, tile, element). A consumer that reads a tile before its
// producer finished it sees either an unwritten element or last iteration's element, and neither can match: the
// check is exact, and stale data from a previous iteration is as visible as garbage.
#pragma once

#include <cstdint>

#include "cusync/tile.h"

namespace cusync::gpu_test {

// MurmurHash3's 32-bit finalizer: every input bit affects every output bit.
CUSYNC_HOST_DEVICE constexpr std::uint32_t mixBits(std::uint32_t h) {
  h ^= h >> 16;
  h *= 0x85EBCA6Bu;
  h ^= h >> 13;
  h *= 0xC2B2AE35u;
  h ^= h >> 16;
  return h;
}

// Element `element` of producer tile `linearTile` in `iteration` (0-based launch count) of a run salted `salt`.
CUSYNC_HOST_DEVICE constexpr std::uint32_t producedValue(std::uint32_t salt, std::uint32_t iteration,
                                                         std::uint32_t linearTile, std::uint32_t element) {
  return mixBits(salt ^ mixBits(iteration * 0x9E3779B9u ^ mixBits(linearTile * 0x27D4EB2Fu ^ mixBits(element))));
}

// What a consumer writes from the sum of the elements it read: a function of what it READ, so that a consumer that
// read wrong data also writes wrong data and a later stage (or the host) sees it.
CUSYNC_HOST_DEVICE constexpr std::uint32_t relayedValue(std::uint32_t sumOfReads) {
  return mixBits(sumOfReads ^ 0xA511E9B3u);
}

// The value a producer's tile element must hold, for a stage that reads a producer (`produceTiles`) ...
struct ProducedValue {
  std::uint32_t salt;
  CUSYNC_HOST_DEVICE std::uint32_t operator()(std::uint32_t iteration, std::uint32_t linearTile,
                                              std::uint32_t element) const {
    return producedValue(salt, iteration, linearTile, element);
  }
};

// ... or a stage that reads a relay (a `consumeTiles` stage with a SameTile dependency on a producer).
struct RelayedValue {
  std::uint32_t salt;
  CUSYNC_HOST_DEVICE std::uint32_t operator()(std::uint32_t iteration, std::uint32_t linearTile,
                                              std::uint32_t element) const {
    return relayedValue(producedValue(salt, iteration, linearTile, element));
  }
};

// Dependencies: which producer tiles consumer tile `c` reads, as the k-th of `count` tiles.
// Consumer tile (x, y, z) reads producer tile (x, y, z): the TileSync relation.
struct SameTile {
  CUSYNC_HOST_DEVICE static std::uint32_t count(GridShape) { return 1; }
  CUSYNC_HOST_DEVICE static TileCoord producerTile(TileCoord consumer, std::uint32_t, GridShape) { return consumer; }
};

// Consumer tile (x, y, z) reads the whole producer row y: tiles (0..X-1, y, z), as a GEMM reads a row of its A
// operand. The RowSync relation.
struct WholeRow {
  CUSYNC_HOST_DEVICE static std::uint32_t count(GridShape producerGrid) { return producerGrid.x; }
  CUSYNC_HOST_DEVICE static TileCoord producerTile(TileCoord consumer, std::uint32_t k, GridShape) {
    return TileCoord{k, consumer.y, consumer.z};
  }
};

}  // namespace cusync::gpu_test
