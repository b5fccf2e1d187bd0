// Type-erased access to the CUTLASS sm90 convolution instantiations, the hooked ones (tile_sync_conv_instance.cuh)
// and CUTLASS's stock kernel of the same configurations (stock_conv_instance.cuh), so that host programs neither
// include CUTLASS nor recompile kernels: each instantiation lives in its own generated translation unit and
// registers itself at static-initialization time (as examples/gemm/gemm_registry.h). Host header (needs
// cuda_fp16.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "cusync/conv_halo.h"
#include "cusync/launch.cuh"
#include "cusync/stage_view.cuh"

namespace cusync::examples {

// The proven policies of examples/conv2d/conv2d_3x3.dep a convolution waits and posts with.
enum class ConvPolicyKind { TileSync, RowSync };
inline const char* convPolicyName(ConvPolicyKind p) { return p == ConvPolicyKind::TileSync ? "TileSync" : "RowSync"; }
// The name of CUTLASS's stock kernel in an entry's name, where a hooked entry has its policy's.
inline constexpr const char* kCutlassStockKernelName = "CutlassStock";

// One 2-D convolution layer, fprop, NHWC, fp16 in and out, fp32 accumulate:
// y[b, p, q, k] = relu(bias[k] + sum_{r, s, c} x[b, p*stride - pad + r, q*stride - pad + s, c] * w[k, r, s, c]).
struct ConvLayerShape {
  int batch = 1;
  int height = 0, width = 0;  // of the input image
  int inChannels = 0, outChannels = 0;
  int filter = 3;             // R = S
  int stride = 1;
  CUSYNC_HOST_DEVICE int padding() const { return filter / 2; }
  CUSYNC_HOST_DEVICE int outHeight() const { return (height + 2 * padding() - filter) / stride + 1; }
  CUSYNC_HOST_DEVICE int outWidth() const { return (width + 2 * padding() - filter) / stride + 1; }
  CUSYNC_HOST_DEVICE long long outPixels() const { return 1LL * batch * outHeight() * outWidth(); }
  ConvHalo halo() const {
    return ConvHalo{std::uint32_t(outHeight()), std::uint32_t(outWidth()), std::uint32_t(filter),
                    std::uint32_t(stride)};
  }
};

struct ConvLaunchArgs {
  ConvLayerShape shape;
  const __half* activation = nullptr;  // [batch, height, width, inChannels]
  const __half* filter = nullptr;      // [outChannels, R, S, inChannels]
  const __half* bias = nullptr;        // [outChannels]
  __half* output = nullptr;            // [batch, outHeight, outWidth, outChannels]
  StageView stage;                     // this convolution's stage; semaphores null = it posts nothing
  const std::uint32_t* producerSemaphores = nullptr;  // the activation's producer; null = no wait
  GridShape producerGrid;
  std::uint32_t producerTileM = 0;
  std::uint32_t producerTileN = 0;
  // With producerSemaphores: per pixel tile of this convolution, the producer pixel tiles its halo reads
  // (cusync/conv_halo_rows.h), `haloRowCount` rows on the device, alive as long as any launch reads them.
  const PixelTileRange* haloRows = nullptr;
  std::uint32_t haloRowCount = 0;
  // Split-K (stage.blocksPerTile > 1): stage.grid.tileCount() * blocksPerTile * TileM * TileN floats and one zeroed
  // arrival counter per tile (ConvSplitBuffers, conv_chain.cuh).
  float* splitPartials = nullptr;
  std::uint32_t* splitArrivals = nullptr;
  bool splitAccumulate = false;  // the parts sum into one slot in L2 (SplitKBuffers::accumulate)
  bool triggerDependentsAtStart = false;  // PDL producer
  LaunchOrdering launchOrdering = LaunchOrdering::StreamOrder;  // Programmatic: PDL consumer
};

struct ConvKernelEntry {
  std::string name;
  int tileM, tileN, tileK, stages, minBlocksPerSm;
  // The hooked kernel's policy, waited on (input) and posted with (output); none for CUTLASS's stock kernel, which
  // neither waits nor posts.
  std::optional<ConvPolicyKind> policy;
  GridShape (*tileGrid)(const ConvLayerShape& shape);
  // Why this instance cannot run `args` (CUTLASS's limits, the stage, the halo), or empty.
  std::string (*whyNotImplementable)(const ConvLaunchArgs& args);
  void (*launch)(const ConvLaunchArgs& args, cudaStream_t stream);  // throws cusync::Error when not implementable
  int (*blocksPerSm)();  // resident blocks per SM (occupancy at the kernel's shared memory): the waves' slots
};

std::vector<ConvKernelEntry>& convRegistry();

struct ConvRegistration {
  explicit ConvRegistration(ConvKernelEntry entry) { convRegistry().push_back(std::move(entry)); }
};

}  // namespace cusync::examples
