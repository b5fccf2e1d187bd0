// The C interface of cusync_mlp.h over MlpPlan (mlp_plan.h) and the fused-chain registry. Every entry point catches
// everything: no exception crosses the C boundary, failures become a status and a message (cusync_mlp_last_error).
#include "cusync_mlp.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <type_traits>

#include "cusync/gelu.cuh"
#include <utility>

#include "mlp_plan.h"
#include "gemv_mlp_plan.h"

using cusync::python::MlpOperands;
using cusync::python::MlpPlan;
using cusync::python::MlpPlanFor;
using cusync::python::MlpTileOrders;
using cusync::python::gemvTileConfigName;
using cusync::python::gemvRowsConfigName;
using cusync::python::gemvRowsMmaConfigName;
using cusync::python::gemvPackedConfigName;

struct cusync_mlp_plan {
  int device;
  std::unique_ptr<MlpPlan> plan;
};

namespace {

thread_local std::string lastError;

// A failure with the status it reports.
struct Failure {
  cusync_mlp_status status;
  std::string message;
};

int fail(cusync_mlp_status status, std::string message) {
  lastError = std::move(message);
  return status;
}

// Runs `body`, turning what it throws into a status: Failure as given, cusync::Error (a failed CUDA call or a
// refused chain) as a CUDA error when it names one, else as an invalid argument.
template <class Body>
int guarded(Body&& body) {
  try {
    body();
    return CUSYNC_MLP_OK;
  } catch (const Failure& f) {
    return fail(f.status, f.message);
  } catch (const std::bad_alloc&) {
    return fail(CUSYNC_MLP_INTERNAL_ERROR, "cusync mlp: host out of memory");
  } catch (const cusync::Error& e) {
    const std::string what = e.what();
    const bool cuda = what.find(" failed: cuda") != std::string::npos;
    return fail(cuda ? CUSYNC_MLP_CUDA_ERROR : CUSYNC_MLP_INVALID_ARGUMENT, what);
  } catch (const std::exception& e) {
    return fail(CUSYNC_MLP_INTERNAL_ERROR, std::string("cusync mlp: ") + e.what());
  } catch (...) {
    return fail(CUSYNC_MLP_INTERNAL_ERROR, "cusync mlp: unknown exception");
  }
}

void require(bool condition, cusync_mlp_status status, const std::string& message) {
  if (!condition) throw Failure{status, message};
}

// Makes `device` current for a scope and restores the caller's device after it.
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    CUSYNC_CUDA_CHECK(cudaGetDevice(&previous_));
    if (previous_ != device) CUSYNC_CUDA_CHECK(cudaSetDevice(device));
  }
  ~DeviceScope() {
    int current = previous_;
    if (cudaGetDevice(&current) == cudaSuccess && current != previous_) cudaSetDevice(previous_);
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_ = 0;
};

template <class Policy>
const cusync::examples::FusedChainEntryFor<Policy>& findConfig(const char* name) {
  require(name != nullptr, CUSYNC_MLP_INVALID_ARGUMENT, "cusync mlp: configuration name is null");
  for (const auto& entry : cusync::examples::fusedChainRegistry<Policy>())
    if (entry.name == name) return entry;
  std::string known;
  for (const auto& entry : cusync::examples::fusedChainRegistry<Policy>())
    known += (known.empty() ? "" : ", ") + entry.name;
  throw Failure{CUSYNC_MLP_INVALID_ARGUMENT,
                std::string("cusync mlp: configuration '") + name + "' is not compiled into this library for " +
                    (std::is_same_v<Policy, cusync::examples::SwiGluMlpPolicy> ? "SwiGLU" : "GELU") +
                    " (it has: " + known + ", " + gemvTileConfigName() + ", " + gemvRowsConfigName() + ", " +
                    gemvRowsMmaConfigName() + ", " + gemvPackedConfigName<3>() + ", " + gemvPackedConfigName<4>() +
                    "; CUSYNC_FUSED_CONFIGS and CUSYNC_SWIGLU_FUSED_CONFIGS choose them at build time)"};
}

void requireActivation(int activation) {
  require(activation == CUSYNC_MLP_GELU || activation == CUSYNC_MLP_SWIGLU, CUSYNC_MLP_INVALID_ARGUMENT,
          "cusync mlp: unknown activation " + std::to_string(activation));
}

// Calls body(policy tag) with the chain's policy type of `activation`.
template <class Body>
decltype(auto) withChain(int activation, Body&& body) {
  requireActivation(activation);
  if (activation == CUSYNC_MLP_SWIGLU) return body(cusync::examples::SwiGluMlpPolicy{});
  return body(cusync::examples::FusedMlpPolicy{});
}

// The kernels are compiled for sm_90a only.
void requireHopper(int device) {
  cudaDeviceProp properties{};
  CUSYNC_CUDA_CHECK(cudaGetDeviceProperties(&properties, device));
  require(properties.major == 9 && properties.minor == 0, CUSYNC_MLP_UNSUPPORTED_DEVICE,
          std::string("cusync mlp: device ") + std::to_string(device) + " (" + properties.name + ") is sm_" +
              std::to_string(properties.major) + std::to_string(properties.minor) +
              "; the fused-chain kernels are built for sm_90a (H100/H200) only");
}

// Each kernel's shared-memory opt-in is made once per process (examples/common/kernel_occupancy.cuh), on the device
// current at that moment; a kernel launched on another device would lack it. So every plan of a process lives on
// the device of its first plan.
std::atomic<int> planDevice{-1};

void requirePlanDevice(int device) {
  int expected = -1;
  if (planDevice.compare_exchange_strong(expected, device)) return;
  require(expected == device, CUSYNC_MLP_NOT_IMPLEMENTED,
          "cusync mlp: this process already runs the op on cuda:" + std::to_string(expected) +
              "; plans on a second device (cuda:" + std::to_string(device) +
              ") are not supported (the kernels' shared-memory opt-in is made once per process)");
}

std::mutex creationMutex;  // the registry's kernels set their attributes on first use

// What every plan creation requires once its arguments are valid: an sm_90 device, the process's plan device, and
// no capture on `stream` (creation allocates and zeroes memory).
void requirePlanCreatable(int device, void* stream) {
  requireHopper(device);
  requirePlanDevice(device);
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  CUSYNC_CUDA_CHECK(cudaStreamIsCapturing(static_cast<cudaStream_t>(stream), &capture));
  require(capture == cudaStreamCaptureStatusNone, CUSYNC_MLP_CAPTURING,
          "cusync mlp: creating a plan allocates and zeroes device memory, which a stream capture forbids; call "
          "the op once with this shape before capturing (a warm-up)");
}

// A created plan, handed to the caller once usable: its stages, chains and split-K buffers zero their memory with
// cudaMemset on the legacy stream, which is not ordered with the caller's (possibly non-blocking) stream, so the
// first run must not start before those zeroes land.
cusync_mlp_plan* published(std::unique_ptr<cusync_mlp_plan> created) {
  CUSYNC_CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
  return created.release();
}

// Plan creation for the chain of `Policy`, after the checks that need no configuration.
template <class Policy>
void createPlan(int device, int m, int hidden, int intermediate, const char* config, uint32_t first_parts,
              uint32_t second_parts, uint32_t producer_group_rows, uint32_t consumer_group_rows, void* stream,
              cusync_mlp_plan** plan) {
  const auto& entry = findConfig<Policy>(config);
  // The op's paired layout has groups of 64 rows (cusync_mlp.h): only 128-column SwiGLU tiles read it.
  require(!std::is_same_v<Policy, cusync::examples::SwiGluMlpPolicy> || entry.tile.n == 128,
          CUSYNC_MLP_INVALID_ARGUMENT,
          "cusync mlp: SwiGLU configuration " + entry.name + " has " + std::to_string(entry.tile.n) +
              "-column tiles; the op's paired weight layout (groups of 64 rows) needs 128");
  // Refused before anything is allocated: the partial buffers grow with the parts.
  const auto kBlocks = [](int k, int tileK) { return std::uint32_t((k + tileK - 1) / tileK); };
  const std::uint32_t firstKBlocks = kBlocks(hidden, entry.tile.k);
  const std::uint32_t secondKBlocks = kBlocks(intermediate, entry.secondTile.k);
  require(first_parts <= firstKBlocks && second_parts <= secondKBlocks, CUSYNC_MLP_INVALID_ARGUMENT,
          "cusync mlp: split-K " + std::to_string(first_parts) + "x" + std::to_string(second_parts) +
              " has more parts than k-blocks (" + std::to_string(firstKBlocks) + " and " +
              std::to_string(secondKBlocks) + " with " + entry.name + ")");
  requirePlanCreatable(device, stream);
  std::lock_guard<std::mutex> lock(creationMutex);
  DeviceScope scope(device);
  const int blocksPerSm = entry.maxActiveBlocksPerSm();
  require(blocksPerSm > 0, CUSYNC_MLP_INVALID_ARGUMENT,
          "cusync mlp: configuration " + entry.name + " does not fit on an SM of this device");
  int sms = 0;
  CUSYNC_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  std::unique_ptr<cusync_mlp_plan> created(new cusync_mlp_plan{
      device, std::make_unique<MlpPlanFor<Policy>>(entry, m, hidden, intermediate,
                                                   cusync::examples::FusedSplit{first_parts, second_parts},
                                                   MlpTileOrders{producer_group_rows, consumer_group_rows},
                                                   std::uint32_t(sms * blocksPerSm))});
  *plan = published(std::move(created));
}

// A GEMV chain (gemv_mlp_plan.h), for the configurations gemvTileConfigName() and gemvRowsConfigName() at M = 1 and
// gemvRowsMmaConfigName() at M = 1-8.
template <class Chain>
void createGemvPlan(int device, int m, int hidden, int intermediate, bool swiGlu, uint32_t first_parts,
                        uint32_t second_parts, void* stream, cusync_mlp_plan** plan) {
  const cusync::examples::FusedSplit split{first_parts, second_parts};
  const std::string why = cusync::python::whyNotGemv<Chain>(m, hidden, intermediate, swiGlu, split);
  require(why.empty(), CUSYNC_MLP_INVALID_ARGUMENT,
          "cusync mlp: configuration " + Chain::configName() + " cannot run M = " + std::to_string(m) + ", H = " +
              std::to_string(hidden) + ", I = " + std::to_string(intermediate) + ": " + why);
  requirePlanCreatable(device, stream);
  std::lock_guard<std::mutex> lock(creationMutex);
  DeviceScope scope(device);
  int sms = 0;
  CUSYNC_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  std::unique_ptr<cusync_mlp_plan> created(new cusync_mlp_plan{
      device, std::make_unique<cusync::python::GemvMlpPlan<Chain>>(m, hidden, intermediate, swiGlu, split, sms)});
  *plan = published(std::move(created));
}

bool isGemvRowsConfig(const char* name) { return name != nullptr && gemvRowsConfigName() == name; }
bool isGemvRowsMmaConfig(const char* name) { return name != nullptr && gemvRowsMmaConfigName() == name; }
// The packed GEMV chain's blocks per SM (3 or 4) that `name` names; 0: not a packed GEMV chain.
int packedGemvBlocksPerSm(const char* name) {
  if (name == nullptr) return 0;
  return gemvPackedConfigName<3>() == name ? 3 : gemvPackedConfigName<4>() == name ? 4 : 0;
}
bool isGemvConfig(const char* name) {
  return name != nullptr && (gemvTileConfigName() == name || isGemvRowsConfig(name) || isGemvRowsMmaConfig(name) ||
                             packedGemvBlocksPerSm(name) != 0);
}

// Calls visit(chain) with a value of the GEMV chain type that `config` (one of isGemvConfig's) names for
// `activation`: the one place that maps (configuration, activation) to a chain.
template <class Visit>
decltype(auto) withGemvChain(int activation, const char* config, Visit&& visit) {
  using namespace cusync::python;
  const bool swiGlu = activation == CUSYNC_MLP_SWIGLU;
  if (isGemvRowsConfig(config))
    return swiGlu ? visit(cusync::examples::SkinnyChainType<GemvRowsSwiGluChain>{})
                  : visit(cusync::examples::SkinnyChainType<GemvRowsGeluChain>{});
  if (isGemvRowsMmaConfig(config))
    return swiGlu ? visit(cusync::examples::SkinnyChainType<GemvRowsMmaSwiGluChain>{})
                  : visit(cusync::examples::SkinnyChainType<GemvRowsMmaGeluChain>{});
  if (packedGemvBlocksPerSm(config) == 3)
    return swiGlu ? visit(cusync::examples::SkinnyChainType<GemvPackedSwiGluChain<3>>{})
                  : visit(cusync::examples::SkinnyChainType<GemvPackedGeluChain<3>>{});
  if (packedGemvBlocksPerSm(config) == 4)
    return swiGlu ? visit(cusync::examples::SkinnyChainType<GemvPackedSwiGluChain<4>>{})
                  : visit(cusync::examples::SkinnyChainType<GemvPackedGeluChain<4>>{});
  return swiGlu ? visit(cusync::examples::SkinnyChainType<GemvTileSwiGluChain>{})
                : visit(cusync::examples::SkinnyChainType<GemvTileGeluChain>{});
}

// Blocks of a GEMV kernel per SM: its instance for the most tokens (SkinnyMlpChain::blocksPerSmAtMostTokens).
int gemvBlocksPerSm(int activation, const char* config) {
  return withGemvChain(activation, config,
                       [](auto chain) { return decltype(chain)::type::blocksPerSmAtMostTokens(); });
}

// The GEMV chains, in the order the configuration lists give them after the fused registry.
const std::string& gemvConfigAt(std::size_t index) {
  static const std::string names[] = {gemvTileConfigName(), gemvRowsConfigName(), gemvRowsMmaConfigName(),
                                      gemvPackedConfigName<3>(), gemvPackedConfigName<4>()};
  return names[index];
}
constexpr std::size_t kGemvConfigs = 5;

// The rows and K of W1 (`which` 1: [I, H], or for SwiGLU the paired [2I, H]) or W2 (`which` 2: [H, I]).
std::pair<int, int> weightShape(int activation, int hidden, int intermediate, int which) {
  requireActivation(activation);
  require(which == 1 || which == 2, CUSYNC_MLP_INVALID_ARGUMENT,
          "cusync mlp: `which` must be 1 (W1) or 2 (W2), got " + std::to_string(which));
  require(hidden > 0 && intermediate > 0 && hidden % 8 == 0 && intermediate % 8 == 0, CUSYNC_MLP_INVALID_ARGUMENT,
          "cusync mlp: hidden and intermediate must be positive multiples of 8");
  require(activation != CUSYNC_MLP_SWIGLU || intermediate % int(cusync::python::kOpPairedGroupRows) == 0,
          CUSYNC_MLP_INVALID_ARGUMENT, "cusync mlp: SwiGLU needs the intermediate size to be a multiple of 64");
  if (which == 2) return {hidden, intermediate};
  return {(activation == CUSYNC_MLP_SWIGLU ? 2 : 1) * intermediate, hidden};
}

}  // namespace

extern "C" {

int cusync_mlp_abi_version(void) { return CUSYNC_MLP_ABI_VERSION; }

const char* cusync_mlp_last_error(void) { return lastError.c_str(); }

const char* cusync_mlp_gelu_approximation(void) { return cusync::kGeluApproximation; }

// Each activation's list: the fused chain's registry, then the GEMV chains.
int cusync_mlp_config_count(int activation) {
  if (activation == CUSYNC_MLP_GELU)
    return int(cusync::examples::fusedChainRegistry<cusync::examples::FusedMlpPolicy>().size() + kGemvConfigs);
  if (activation == CUSYNC_MLP_SWIGLU)
    return int(cusync::examples::fusedChainRegistry<cusync::examples::SwiGluMlpPolicy>().size() + kGemvConfigs);
  return 0;
}

const char* cusync_mlp_config_name(int activation, int index) {
  if (activation != CUSYNC_MLP_GELU && activation != CUSYNC_MLP_SWIGLU) return nullptr;
  return withChain(activation, [&](auto policy) -> const char* {
    const auto& registry = cusync::examples::fusedChainRegistry<decltype(policy)>();
    if (index < 0 || std::size_t(index) >= registry.size() + kGemvConfigs) return nullptr;
    if (std::size_t(index) >= registry.size()) return gemvConfigAt(std::size_t(index) - registry.size()).c_str();
    return registry[std::size_t(index)].name.c_str();
  });
}

int cusync_mlp_config_tile(int activation, const char* config, int* tile_m, int* tile_n, int* tile_k) {
  return guarded([&] {
    require(tile_m && tile_n && tile_k, CUSYNC_MLP_INVALID_ARGUMENT, "cusync mlp: null output pointer");
    if (isGemvRowsConfig(config)) {  // one token by a block's weight rows, k read in block-wide pieces
      requireActivation(activation);
      *tile_m = 1;
      *tile_n = cusync::examples::kGemvRows;
      *tile_k = cusync::kRowGemvThreads * 8;
      return;
    }
    if (packedGemvBlocksPerSm(config) != 0) {  // up to 16 tokens by a block's 16 weight rows, each warp 128 k of 1024
      requireActivation(activation);
      *tile_m = cusync::kPacked16GemvMaxTokens;
      *tile_n = cusync::kPacked16GemvRows;
      *tile_k = cusync::packedGemvShareK(cusync::kPacked16GemvRows) * cusync::kPacked16GemvWarps;
      return;
    }
    if (isGemvRowsMmaConfig(config)) {  // up to 8 tokens by a block's weight rows, k read in block-wide pieces
      requireActivation(activation);
      *tile_m = cusync::kRowMmaGemvMaxTokens;
      *tile_n = cusync::kRowMmaGemvRows;
      *tile_k = cusync::kRowMmaGemvThreads * 8;
      return;
    }
    if (isGemvConfig(config)) {  // one token by 32 weight rows, split-K in 32-deep k-blocks
      requireActivation(activation);
      *tile_m = 1;
      *tile_n = cusync::python::GemvTileGeluChain::kTileN;
      *tile_k = cusync::skinny::kKStep;
      return;
    }
    withChain(activation, [&](auto policy) {
      const auto& entry = findConfig<decltype(policy)>(config);
      *tile_m = entry.tile.m;
      *tile_n = entry.tile.n;
      *tile_k = entry.tile.k;
    });
  });
}

int cusync_mlp_config_blocks_per_sm(int activation, const char* config, int device, int* blocks) {
  return guarded([&] {
    require(blocks != nullptr, CUSYNC_MLP_INVALID_ARGUMENT, "cusync mlp: null output pointer");
    // Occupancy is asked of the device the plans live on, as a plan's creation asks it.
    const auto onPlanDevice = [&](auto&& count) {
      requireHopper(device);
      requirePlanDevice(device);
      std::lock_guard<std::mutex> lock(creationMutex);
      DeviceScope scope(device);
      *blocks = count();
    };
    if (isGemvConfig(config)) {
      requireActivation(activation);
      onPlanDevice([&] { return gemvBlocksPerSm(activation, config); });
      return;
    }
    withChain(activation, [&](auto policy) {
      const auto& entry = findConfig<decltype(policy)>(config);
      onPlanDevice([&] { return entry.maxActiveBlocksPerSm(); });
    });
  });
}

int cusync_mlp_config_packs_weights(int activation, const char* config, int* packs) {
  return guarded([&] {
    require(packs != nullptr, CUSYNC_MLP_INVALID_ARGUMENT, "cusync mlp: null output pointer");
    requireActivation(activation);
    if (!isGemvConfig(config))
      withChain(activation, [&](auto policy) { findConfig<decltype(policy)>(config); });  // known, or refused
    *packs = packedGemvBlocksPerSm(config) != 0 ? 1 : 0;
  });
}

int cusync_mlp_packed_weight_bytes(int activation, int hidden, int intermediate, int which, uint64_t* bytes) {
  return guarded([&] {
    require(bytes != nullptr, CUSYNC_MLP_INVALID_ARGUMENT, "cusync mlp: null output pointer");
    const auto [rows, k] = weightShape(activation, hidden, intermediate, which);
    *bytes = uint64_t(cusync::packedGemvVectors(rows, k, cusync::kPacked16GemvRows)) * sizeof(uint4);
  });
}

int cusync_mlp_pack_weights(int activation, int hidden, int intermediate, int which, const void* w, void* packed,
                            void* stream) {
  return guarded([&] {
    const auto [rows, k] = weightShape(activation, hidden, intermediate, which);
    for (const void* pointer : {w, static_cast<const void*>(packed)})
      require(pointer != nullptr && std::uintptr_t(pointer) % 16 == 0, CUSYNC_MLP_INVALID_ARGUMENT,
              "cusync mlp: the weights and their packed copy must be non-null, 16-byte aligned device pointers");
    // On the current device, the caller's (the weights' device).
    cusync::packGemvWeights(static_cast<const __half*>(w), static_cast<uint4*>(packed), rows, k,
                            which == 1 && activation == CUSYNC_MLP_SWIGLU ? cusync::python::kOpPairedGroupRows : 0u,
                            static_cast<cudaStream_t>(stream), cusync::kPacked16GemvRows);
  });
}

int cusync_mlp_plan_create(int device, int m, int hidden, int intermediate, int activation, const char* config,
                           uint32_t first_parts, uint32_t second_parts, uint32_t producer_group_rows,
                           uint32_t consumer_group_rows, void* stream, cusync_mlp_plan** plan) {
  return guarded([&] {
    require(plan != nullptr, CUSYNC_MLP_INVALID_ARGUMENT, "cusync mlp: null plan pointer");
    *plan = nullptr;
    requireActivation(activation);
    require(m > 0 && hidden > 0 && intermediate > 0, CUSYNC_MLP_INVALID_ARGUMENT,
            "cusync mlp: m, hidden and intermediate must be positive");
    // TMA needs 16-byte row pitches: 8 fp16 elements.
    require(hidden % 8 == 0 && intermediate % 8 == 0, CUSYNC_MLP_INVALID_ARGUMENT,
            "cusync mlp: hidden and intermediate must be multiples of 8 (16-byte rows for TMA)");
    // CUTLASS's strides and the runtime's tile counts are 32-bit.
    require(std::int64_t(m) * std::max(hidden, intermediate) < (std::int64_t(1) << 31), CUSYNC_MLP_INVALID_ARGUMENT,
            "cusync mlp: m * max(hidden, intermediate) must be below 2^31");
    require(first_parts >= 1 && second_parts >= 1, CUSYNC_MLP_INVALID_ARGUMENT,
            "cusync mlp: split-K parts must be at least 1");
    // The paired SwiGLU tile holds TileN / 2 = 64 gate and 64 up columns of the same outputs (every SwiGLU
    // configuration has TileN = 128): the weight layout of cusync_mlp.h.
    require(activation != CUSYNC_MLP_SWIGLU || intermediate % 64 == 0, CUSYNC_MLP_INVALID_ARGUMENT,
            "cusync mlp: SwiGLU needs the intermediate size to be a multiple of 64 (gate and up rows paired in "
            "groups of 64)");
    if (isGemvConfig(config)) {
      withGemvChain(activation, config, [&](auto chain) {
        createGemvPlan<typename decltype(chain)::type>(device, m, hidden, intermediate,
                                                           activation == CUSYNC_MLP_SWIGLU, first_parts, second_parts,
                                                           stream, plan);
      });
      return;
    }
    withChain(activation, [&](auto policy) { createPlan<decltype(policy)>(device, m, hidden, intermediate, config,
                                                                          first_parts, second_parts,
                                                                          producer_group_rows, consumer_group_rows,
                                                                          stream, plan); });
  });
}

int cusync_mlp_plan_set_unit_wait(cusync_mlp_plan* plan, int whole_unit) {
  return guarded([&] {
    require(plan != nullptr, CUSYNC_MLP_INVALID_ARGUMENT, "cusync mlp: null plan");
    require(whole_unit == 0 || whole_unit == 1, CUSYNC_MLP_INVALID_ARGUMENT,
            "cusync mlp: whole_unit must be 0 (k-block by k-block) or 1 (whole k-range)");
    plan->plan->setWaitForWholeUnit(whole_unit == 1);
  });
}

int cusync_mlp_plan_info(const cusync_mlp_plan* plan, uint32_t* work_units, uint32_t* persistent_blocks) {
  return guarded([&] {
    require(plan && work_units && persistent_blocks, CUSYNC_MLP_INVALID_ARGUMENT, "cusync mlp: null pointer");
    *work_units = plan->plan->workUnits();
    *persistent_blocks = plan->plan->persistentBlocks();
  });
}

int cusync_mlp_run(cusync_mlp_plan* plan, const void* x, const void* w1, const void* w2, void* intermediate,
                   void* out, void* stream) {
  return guarded([&] {
    require(plan != nullptr, CUSYNC_MLP_INVALID_ARGUMENT, "cusync mlp: null plan");
    for (const void* pointer : {x, w1, w2, static_cast<const void*>(intermediate), static_cast<const void*>(out)})
      require(pointer != nullptr && std::uintptr_t(pointer) % 16 == 0, CUSYNC_MLP_INVALID_ARGUMENT,
              "cusync mlp: every operand must be a non-null, 16-byte aligned device pointer");
    DeviceScope scope(plan->device);
    MlpOperands operands;
    operands.x = static_cast<const __half*>(x);
    operands.w1 = static_cast<const __half*>(w1);
    operands.intermediate = static_cast<__half*>(intermediate);
    operands.w2 = static_cast<const __half*>(w2);
    operands.y = static_cast<__half*>(out);
    plan->plan->enqueue(operands, static_cast<cudaStream_t>(stream));
  });
}

int cusync_mlp_plan_destroy(cusync_mlp_plan* plan) {
  return guarded([&] {
    if (plan == nullptr) return;
    DeviceScope scope(plan->device);
    // A run may still be in flight on some stream; freeing its semaphores under it would corrupt memory.
    const cudaError_t synchronized = cudaDeviceSynchronize();
    if (synchronized != cudaSuccess) {
      // The device is unusable (sticky error) or capturing; leak the plan rather than free memory in use.
      throw Failure{CUSYNC_MLP_CUDA_ERROR, std::string("cusync mlp: plan not freed: cudaDeviceSynchronize: ") +
                                               cudaGetErrorString(synchronized)};
    }
    delete plan;
  });
}

}  // extern "C"
