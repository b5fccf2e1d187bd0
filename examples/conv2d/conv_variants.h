// How conv2d_chain_example and its stress test order and synchronize the stages of a chain. Host header, no CUDA.
//   StreamSync                 every stage on one stream, stream-ordered (the same kernels, no waits, no posts)
//   TileSync, RowSync          stage s on a stream of its own behind the wait-kernel on its producer (the paper's
//                              ordering); every tile waits for the producer tiles of its halo under the policy
//                              cusyncgen proves for the dependency (conv2d_3x3.dep, conv2d_bottleneck.dep,
//                              conv2d_stride2.dep: the same TileSync and RowSync functions of the grid)
//   TileSync-PDL, RowSync-PDL  one stream, programmatic dependent launch, the same waits
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace cusync::examples {

enum class ConvVariant { StreamSync, TileSync, RowSync, TileSyncPdl, RowSyncPdl };

inline const std::vector<std::pair<ConvVariant, std::string>>& convVariantNames() {
  static const std::vector<std::pair<ConvVariant, std::string>> names = {{ConvVariant::StreamSync, "StreamSync"},
                                                                         {ConvVariant::TileSync, "TileSync"},
                                                                         {ConvVariant::RowSync, "RowSync"},
                                                                         {ConvVariant::TileSyncPdl, "TileSync-PDL"},
                                                                         {ConvVariant::RowSyncPdl, "RowSync-PDL"}};
  return names;
}

inline std::string convVariantName(ConvVariant v) {
  for (const auto& [variant, name] : convVariantNames())
    if (variant == v) return name;
  return "?";
}

inline bool tileSynchronized(ConvVariant v) { return v != ConvVariant::StreamSync; }
inline bool programmaticLaunch(ConvVariant v) {
  return v == ConvVariant::TileSyncPdl || v == ConvVariant::RowSyncPdl;
}
inline bool rowSync(ConvVariant v) { return v == ConvVariant::RowSync || v == ConvVariant::RowSyncPdl; }

}  // namespace cusync::examples
