// How conv2d_chain_example and its stress test order and synchronize the stages of a chain. Host header, no CUDA.
//   StreamSync                 every stage on one stream, stream-ordered (the same kernels, no waits, no posts)
//   TileSync, RowSync          stage s on a stream of its own behind the wait-kernel on its producer (the paper's
//                              ordering); every tile waits for the producer tiles of its halo under the policy
//                              cusyncgen proves for the dependency (conv2d_3x3.dep, conv2d_bottleneck.dep,
//                              conv2d_stride2.dep: the same TileSync and RowSync functions of the grid)
//   TileSync-PDL, RowSync-PDL  one stream, programmatic dependent launch, the same waits
//   TileSync-W, RowSync-W      "avoid wait-kernel" (the paper's W): the streams of TileSync and RowSync without any
//                              wait-kernel, legal only when every block of every stage is resident at once; decided
//                              at run time from occupancy (convChainFitsOneWave, conv_split.h), not applicable
//                              (reported, neither run nor failed) otherwise
//   CUTLASS-stock              CUTLASS 4.2's own sm90 implicit-GEMM convolution of the same tile configuration
//                              (stock_conv_instance.cuh), every stage on one stream: the baseline without cusync's
//                              kernel changes
//   CUTLASS-stock-PDL          the same, every stage after the first launched programmatically: CUTLASS's own PDL
//                              (its load warp waits for the previous grid; it lets the next launch after its mainloop)
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace cusync::examples {

enum class ConvVariant {
  StreamSync,
  TileSync,
  RowSync,
  TileSyncPdl,
  RowSyncPdl,
  TileSyncW,
  RowSyncW,
  CutlassStock,
  CutlassStockPdl
};

inline const std::vector<std::pair<ConvVariant, std::string>>& convVariantNames() {
  static const std::vector<std::pair<ConvVariant, std::string>> names = {
      {ConvVariant::StreamSync, "StreamSync"},        {ConvVariant::TileSync, "TileSync"},
      {ConvVariant::RowSync, "RowSync"},              {ConvVariant::TileSyncPdl, "TileSync-PDL"},
      {ConvVariant::RowSyncPdl, "RowSync-PDL"},       {ConvVariant::TileSyncW, "TileSync-W"},
      {ConvVariant::RowSyncW, "RowSync-W"},           {ConvVariant::CutlassStock, "CUTLASS-stock"},
      {ConvVariant::CutlassStockPdl, "CUTLASS-stock-PDL"}};
  return names;
}

inline std::string convVariantName(ConvVariant v) {
  for (const auto& [variant, name] : convVariantNames())
    if (variant == v) return name;
  return "?";
}

inline bool cutlassStock(ConvVariant v) { return v == ConvVariant::CutlassStock || v == ConvVariant::CutlassStockPdl; }
inline bool tileSynchronized(ConvVariant v) { return v != ConvVariant::StreamSync && !cutlassStock(v); }
inline bool programmaticLaunch(ConvVariant v) {
  return v == ConvVariant::TileSyncPdl || v == ConvVariant::RowSyncPdl || v == ConvVariant::CutlassStockPdl;
}
inline bool rowSync(ConvVariant v) {
  return v == ConvVariant::RowSync || v == ConvVariant::RowSyncPdl || v == ConvVariant::RowSyncW;
}
inline bool avoidsWaitKernel(ConvVariant v) { return v == ConvVariant::TileSyncW || v == ConvVariant::RowSyncW; }

}  // namespace cusync::examples
