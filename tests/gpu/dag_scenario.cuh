// A stage graph of any shape (chains, diamonds, attention's five kernels) for the GPU tests of generated
// policies: each source stage writes hashed tiles (produceTiles), each other stage reads up to two producers
// through `Read` relations, waits for every producer tile it reads under the producer's policy, and writes
// relayedValue of the sum of what it read, so a read of an unfinished tile shows in its own output. The host
// recomputes every stage's output per iteration from the same relations. Host code (launches device kernels).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include <cuda_runtime.h>

#include "cusync/cusync.cuh"
#include "device_memory.h"
#include "pipeline.cuh"
#include "scenarios.cuh"
#include "test_kernels.cuh"
#include "tile_values.h"

namespace cusync::gpu_test {

// Read relations beyond SameTile and WholeRow (tile_values.h): which producer tiles consumer tile c reads, as the
// k-th of count. Host and device.
struct NoRead {
  CUSYNC_HOST_DEVICE static std::uint32_t count(GridShape) { return 0; }
  CUSYNC_HOST_DEVICE static TileCoord producerTile(TileCoord c, std::uint32_t, GridShape) { return c; }
};
// (x + k*Stride, y) for k < Count: the attention QKV split.
template <std::uint32_t Stride, std::uint32_t Count>
struct StridedReads {
  CUSYNC_HOST_DEVICE static std::uint32_t count(GridShape) { return Count; }
  CUSYNC_HOST_DEVICE static TileCoord producerTile(TileCoord c, std::uint32_t k, GridShape) {
    return TileCoord{c.x + k * Stride, c.y, c.z};
  }
};
// (x, 0..Y-1): a whole producer column.
struct WholeColumn {
  CUSYNC_HOST_DEVICE static std::uint32_t count(GridShape producer) { return producer.y; }
  CUSYNC_HOST_DEVICE static TileCoord producerTile(TileCoord c, std::uint32_t k, GridShape) {
    return TileCoord{c.x, k, c.z};
  }
};
// (N*x + k, y) for k < N: a block of N consecutive tiles.
template <std::uint32_t N>
struct BlockReads {
  CUSYNC_HOST_DEVICE static std::uint32_t count(GridShape) { return N; }
  CUSYNC_HOST_DEVICE static TileCoord producerTile(TileCoord c, std::uint32_t k, GridShape) {
    return TileCoord{N * c.x + k, c.y, c.z};
  }
};
// (x*S, y): chained convolutions.
template <std::uint32_t S>
struct ScaledRead {
  CUSYNC_HOST_DEVICE static std::uint32_t count(GridShape) { return 1; }
  CUSYNC_HOST_DEVICE static TileCoord producerTile(TileCoord c, std::uint32_t, GridShape) {
    return TileCoord{c.x * S, c.y, c.z};
  }
};
// (x + Offset, y): the V part of the QKV grid.
template <std::uint32_t Offset>
struct ShiftedRead {
  CUSYNC_HOST_DEVICE static std::uint32_t count(GridShape) { return 1; }
  CUSYNC_HOST_DEVICE static TileCoord producerTile(TileCoord c, std::uint32_t, GridShape) {
    return TileCoord{c.x + Offset, c.y, c.z};
  }
};
// (x, 0): the one row of a reduction.
struct RowZero {
  CUSYNC_HOST_DEVICE static std::uint32_t count(GridShape) { return 1; }
  CUSYNC_HOST_DEVICE static TileCoord producerTile(TileCoord c, std::uint32_t, GridShape) {
    return TileCoord{c.x, 0, c.z};
  }
};

// Adds every element of the producer tiles `Read` names to the thread's elements of `tileOutput`, waiting for each
// tile under `Policy` first (thread 0, once per semaphore; the barrier extends its acquire to the block).
template <class Policy, class Read>
__device__ void accumulateReads(const InputView<Policy>& input, GridShape producerGrid, const std::uint32_t* data,
                                const TileTicket& ticket, const StageView& self, std::uint32_t* tileOutput,
                                std::uint32_t elementsPerTile) {
  SatisfiedSemaphoreCache<> satisfied;
  for (std::uint32_t k = 0; k < Read::count(producerGrid); ++k) {
    const TileCoord producerTile = Read::producerTile(ticket.tile, k, producerGrid);
    if (threadIdx.x == 0) waitThreadCached(input, satisfied, producerTile, ticket.iteration, self, ticket.tile);
    __syncthreads();
    const std::uint32_t* source = data + std::size_t(linearIndex(producerTile, producerGrid)) * elementsPerTile;
    for (std::uint32_t element = threadIdx.x; element < elementsPerTile; element += blockDim.x)
      tileOutput[element] += source[element];  // each thread owns its elements
  }
}

// A stage reading producers A and B (B may be NoRead), writing relayedValue(sum of everything read), posting its
// tile under OutputPolicy.
template <class PolicyA, class ReadA, class PolicyB, class ReadB, class OutputPolicy>
__global__ void relayTiles(StageView self, InputView<PolicyA> inputA, GridShape gridA, const std::uint32_t* dataA,
                           InputView<PolicyB> inputB, GridShape gridB, const std::uint32_t* dataB,
                           std::uint32_t* output, std::uint32_t elementsPerTile, const std::uint32_t* delays) {
  triggerDependentLaunch();
  const TileTicket ticket = blockAcquireTile(self);
  const std::uint32_t tile = linearIndex(ticket.tile, self.grid);
  if (delays != nullptr) delayFor(delays[tile]);
  std::uint32_t* tileOutput = output + std::size_t(tile) * elementsPerTile;
  for (std::uint32_t element = threadIdx.x; element < elementsPerTile; element += blockDim.x) tileOutput[element] = 0;
  accumulateReads<PolicyA, ReadA>(inputA, gridA, dataA, ticket, self, tileOutput, elementsPerTile);
  accumulateReads<PolicyB, ReadB>(inputB, gridB, dataB, ticket, self, tileOutput, elementsPerTile);
  for (std::uint32_t element = threadIdx.x; element < elementsPerTile; element += blockDim.x)
    tileOutput[element] = relayedValue(tileOutput[element]);
  blockPost<OutputPolicy>(self, ticket.tile);
}

class DagScenario {
 public:
  DagScenario(StageOrdering ordering, std::uint32_t elementsPerTile, std::uint32_t maxDelayNanoseconds,
              std::uint32_t seed)
      : pipeline_(ordering), elementsPerTile_(elementsPerTile), maxDelay_(maxDelayNanoseconds), random_(seed) {}

  // A stage without inputs: hashed tiles after random delays, posted under OutputPolicy. Returns its index.
  template <class OutputPolicy>
  std::size_t addSource(const std::string& name, GridShape grid) {
    Node& node = addNode(name, grid);
    node.stage->setOutputPolicy<OutputPolicy>();
    const std::uint32_t salt = random_();
    node.reference = [this, grid, salt](std::uint32_t iteration) {
      std::vector<std::uint32_t> values(std::size_t(grid.tileCount()) * elementsPerTile_);
      for (std::size_t i = 0; i < values.size(); ++i)
        values[i] = producedValue(salt, iteration, static_cast<std::uint32_t>(i / elementsPerTile_),
                                  static_cast<std::uint32_t>(i % elementsPerTile_));
      return values;
    };
    const std::size_t index = nodes_.size() - 1;
    pipeline_.add(*node.stage, {}, [this, index, salt](cudaStream_t stream, LaunchOrdering ordering, bool) {
      Node& n = *nodes_[index];
      launchKernel(produceTiles<OutputPolicy>, launchGrid(n.grid), dim3(kThreads), 0, stream, ordering,
                   n.stage->template view<OutputPolicy>(), n.data->data(), elementsPerTile_, salt, n.delays->data());
    });
    return index;
  }

  // A stage reading `a` through ReadA under PolicyA and, unless ReadB is NoRead, `b` through ReadB under PolicyB;
  // it posts under OutputPolicy (TileSync when nothing reads it). Producers must have been added before.
  template <class OutputPolicy, class PolicyA, class ReadA, class PolicyB = TileSync, class ReadB = NoRead>
  std::size_t addRelay(const std::string& name, GridShape grid, std::size_t a, std::size_t b = 0) {
    Node& node = addNode(name, grid);
    node.stage->setOutputPolicy<OutputPolicy>();
    const bool readsB = !std::is_same_v<ReadB, NoRead>;
    const std::size_t index = nodes_.size() - 1;
    node.reference = [this, index, a, b, readsB](std::uint32_t) {
      const Node& n = *nodes_[index];
      const Node& na = *nodes_[a];
      const Node& nb = *nodes_[b];
      std::vector<std::uint32_t> values(std::size_t(n.grid.tileCount()) * elementsPerTile_, 0);
      for (std::uint32_t tile = 0; tile < n.grid.tileCount(); ++tile) {
        const TileCoord c = tileAtLinear(tile, n.grid);
        auto add = [&](const Node& producer, std::uint32_t k, TileCoord p) {
          (void)k;
          const std::size_t base = std::size_t(linearIndex(p, producer.grid)) * elementsPerTile_;
          for (std::uint32_t e = 0; e < elementsPerTile_; ++e)
            values[std::size_t(tile) * elementsPerTile_ + e] += producer.expected[base + e];
        };
        for (std::uint32_t k = 0; k < ReadA::count(na.grid); ++k) add(na, k, ReadA::producerTile(c, k, na.grid));
        if (readsB)
          for (std::uint32_t k = 0; k < ReadB::count(nb.grid); ++k) add(nb, k, ReadB::producerTile(c, k, nb.grid));
      }
      for (std::uint32_t& v : values) v = relayedValue(v);
      return values;
    };
    std::vector<const Stage*> producers{nodes_[a]->stage.get()};
    if (readsB) producers.push_back(nodes_[b]->stage.get());
    pipeline_.add(*node.stage, producers, [this, index, a, b, readsB](cudaStream_t stream, LaunchOrdering ordering,
                                                                      bool synchronizedInputs) {
      Node& n = *nodes_[index];
      Node& na = *nodes_[a];
      Node& nb = *nodes_[b];
      // One output policy per producer stage: every consumer of it waits under that same policy (inputFor
      // checks the pairing on the host).
      const InputView<PolicyA> inputA =
          synchronizedInputs ? na.stage->inputFor<PolicyA>(*n.stage) : InputView<PolicyA>{};
      const InputView<PolicyB> inputB =
          synchronizedInputs && readsB ? nb.stage->inputFor<PolicyB>(*n.stage) : InputView<PolicyB>{};
      launchKernel(relayTiles<PolicyA, ReadA, PolicyB, ReadB, OutputPolicy>, launchGrid(n.grid), dim3(kThreads), 0,
                   stream, ordering, n.stage->view(), inputA, na.grid, na.data->data(), inputB, nb.grid,
                   nb.data->data(), n.data->data(), elementsPerTile_, n.delays->data());
    });
    return index;
  }

  Stage& stage(std::size_t index) { return *nodes_[index]->stage; }
  Pipeline& pipeline() { return pipeline_; }
  const DeviceMismatchLog& log() const { return log_; }  // relays check nothing on the device: always 0

  // Every stage's output against the host's recomputation of `iteration`, stage by stage.
  OutputCheck checkOutputs(std::uint32_t iteration) {
    OutputCheck check;
    for (auto& node : nodes_) {
      node->expected = node->reference(iteration);
      check = combine(check, compareTiles(node->name.c_str(), node->data->toHost(), node->expected, elementsPerTile_));
    }
    return check;
  }

 private:
  static constexpr std::uint32_t kThreads = 128;

  struct Node {
    std::string name;
    GridShape grid;
    std::unique_ptr<Stage> stage;
    std::unique_ptr<DeviceArray<std::uint32_t>> data, delays;
    std::function<std::vector<std::uint32_t>(std::uint32_t)> reference;
    std::vector<std::uint32_t> expected;  // the reference output of the iteration last checked
  };

  Node& addNode(const std::string& name, GridShape grid) {
    auto node = std::make_unique<Node>();
    node->name = name;
    node->grid = grid;
    node->stage = std::make_unique<Stage>(name, grid);
    node->data = std::make_unique<DeviceArray<std::uint32_t>>(std::size_t(grid.tileCount()) * elementsPerTile_);
    node->delays = std::make_unique<DeviceArray<std::uint32_t>>(grid.tileCount());
    node->delays->fromHost(randomDelays(grid.tileCount(), maxDelay_, random_));
    nodes_.push_back(std::move(node));
    return *nodes_.back();
  }

  Pipeline pipeline_;
  std::uint32_t elementsPerTile_;
  std::uint32_t maxDelay_;
  std::mt19937 random_;
  std::vector<std::unique_ptr<Node>> nodes_;
  DeviceMismatchLog log_;
};

}  // namespace cusync::gpu_test
