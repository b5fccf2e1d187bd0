// The stage graphs the GPU tests run, each owning its stages, buffers and pipeline, and each able to recompute on
// the host what every output element must be in a given iteration:
//   PairScenario         producer -> consumer under one policy and dependency shape
//   ChainScenario        A -(TileSync)-> B -(RowSync)-> C, three stages
//   TwoProducerScenario  A, B -(TileSync each)-> C, a consumer of two producers
// Host code (launches the kernels of test_kernels.cuh).
#pragma once

#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "cusync/cusync.cuh"
#include "device_memory.h"
#include "pipeline.cuh"
#include "test_config.h"
#include "test_kernels.cuh"
#include "test_policies.h"
#include "tile_values.h"

namespace cusync::gpu_test {

inline dim3 launchGrid(GridShape grid) { return dim3(grid.x, grid.y, grid.z); }

inline int multiprocessorCount() {
  int device = 0, count = 0;
  CUSYNC_CUDA_CHECK(cudaGetDevice(&device));
  CUSYNC_CUDA_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device));
  return count;
}

// The outcome of comparing an output buffer with its host reference, element by element.
struct OutputCheck {
  std::size_t wrongElements = 0;
  std::string firstWrong;  // empty when nothing is wrong
};

inline OutputCheck compareTiles(const char* bufferName, const std::vector<std::uint32_t>& seen,
                                const std::vector<std::uint32_t>& expected, std::uint32_t elementsPerTile) {
  OutputCheck check;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    if (seen[i] == expected[i]) continue;
    if (check.wrongElements++ == 0) {
      std::ostringstream message;
      message << bufferName << ": tile " << i / elementsPerTile << " element " << i % elementsPerTile << " is 0x"
              << std::hex << seen[i] << ", expected 0x" << expected[i];
      check.firstWrong = message.str();
    }
  }
  return check;
}

inline OutputCheck combine(OutputCheck a, const OutputCheck& b) {
  if (a.wrongElements == 0) a.firstWrong = b.firstWrong;
  a.wrongElements += b.wrongElements;
  return a;
}

// What a consumeTiles stage writes in `iteration`: relayedValue of the sum of the producer elements it reads.
template <class Dependency, class Expectation>
std::vector<std::uint32_t> expectedConsumerOutput(GridShape consumerGrid, GridShape producerGrid,
                                                  std::uint32_t elementsPerTile, Expectation expected,
                                                  std::uint32_t iteration) {
  std::vector<std::uint32_t> output(std::size_t(consumerGrid.tileCount()) * elementsPerTile);
  for (std::uint32_t tile = 0; tile < consumerGrid.tileCount(); ++tile) {
    const TileCoord consumerTile = tileAtLinear(tile, consumerGrid);
    for (std::uint32_t element = 0; element < elementsPerTile; ++element) {
      std::uint32_t sum = 0;
      for (std::uint32_t k = 0; k < Dependency::count(producerGrid); ++k)
        sum += expected(iteration, linearIndex(Dependency::producerTile(consumerTile, k, producerGrid), producerGrid),
                        element);
      output[std::size_t(tile) * elementsPerTile + element] = relayedValue(sum);
    }
  }
  return output;
}

// The consumers' device-side count of wrong elements read, with the first one.
class DeviceMismatchLog {
 public:
  MismatchLog view() const { return MismatchLog{count_.data(), first_.data()}; }
  unsigned int total() const { return count_.toHost()[0]; }
  std::string describeFirst() const {
    if (total() == 0) return "no wrong element read";
    const Mismatch m = first_.toHost()[0];
    std::ostringstream message;
    message << "stage " << m.stage << " read producer tile " << m.producerTile << " element " << m.element
            << " in iteration " << m.iteration << ": 0x" << std::hex << m.seen << ", expected 0x" << m.expected;
    return message.str();
  }

 private:
  DeviceArray<unsigned int> count_{1};
  DeviceArray<Mismatch> first_{1};
};

// Sizes of a test's stages. Delays apply to producer tiles.
struct ScenarioShape {
  GridShape producerGrid;
  GridShape consumerGrid;
  std::uint32_t elementsPerTile = 1024;
  std::uint32_t threads = 128;
  std::uint32_t minDelayNanoseconds = 0;
  std::uint32_t maxDelayNanoseconds = 0;

  std::uint32_t blocks() const { return producerGrid.tileCount() + consumerGrid.tileCount(); }
};

inline std::vector<std::uint32_t> delaysFor(const ScenarioShape& shape, std::mt19937& random) {
  std::vector<std::uint32_t> delays = randomDelays(shape.producerGrid.tileCount(),
                                                   shape.maxDelayNanoseconds - shape.minDelayNanoseconds, random);
  for (auto& d : delays) d += shape.minDelayNanoseconds;
  return delays;
}

// Producer -> consumer. `Policy` is what the producer posts under and the consumer waits under; `Dependency` is
// which producer tiles a consumer tile reads. With `consumerWaits` false the consumer never waits (a planted bug).
template <class Policy, class Dependency>
class PairScenario {
 public:
  PairScenario(const ScenarioShape& shape, StageOrdering ordering, std::uint32_t seed, bool consumerWaits = true)
      : shape_(shape),
        producer_("producer", shape.producerGrid),
        consumer_("consumer", shape.consumerGrid),
        pipeline_(ordering),
        produced_(std::size_t(shape.producerGrid.tileCount()) * shape.elementsPerTile),
        consumed_(std::size_t(shape.consumerGrid.tileCount()) * shape.elementsPerTile),
        delays_(shape.producerGrid.tileCount()) {
    std::mt19937 random(seed);
    salt_ = random();
    delays_.fromHost(delaysFor(shape, random));
    producer_.setOutputPolicy<Policy>();
    pipeline_.add(producer_, {}, [this](cudaStream_t stream, LaunchOrdering ordering, bool) {
      launchKernel(produceTiles<Policy>, launchGrid(shape_.producerGrid), dim3(shape_.threads), 0, stream,
                   ordering, producer_.view<Policy>(), produced_.data(), shape_.elementsPerTile, salt_, delays_.data());
    });
    pipeline_.add(consumer_, {&producer_}, [this, consumerWaits](cudaStream_t stream, LaunchOrdering ordering,
                                                                 bool synchronizedInputs) {
      const InputView<Policy> input =
          synchronizedInputs && consumerWaits ? producer_.inputFor<Policy>(consumer_) : InputView<Policy>{};
      launchKernel(consumeTiles<Policy, Dependency, ProducedValue>, launchGrid(shape_.consumerGrid),
                   dim3(shape_.threads), 0, stream, ordering, consumer_.view(), input, shape_.producerGrid,
                   produced_.data(), consumed_.data(), shape_.elementsPerTile, ProducedValue{salt_}, log_.view(),
                   1u, nullptr);
    });
  }

  Stage& producer() { return producer_; }
  Stage& consumer() { return consumer_; }
  Pipeline& pipeline() { return pipeline_; }
  const DeviceMismatchLog& log() const { return log_; }

  OutputCheck checkOutputs(std::uint32_t iteration) const {
    return compareTiles("consumer output", consumed_.toHost(),
                        expectedConsumerOutput<Dependency>(shape_.consumerGrid, shape_.producerGrid,
                                                           shape_.elementsPerTile, ProducedValue{salt_}, iteration),
                        shape_.elementsPerTile);
  }

 private:
  ScenarioShape shape_;
  Stage producer_, consumer_;
  Pipeline pipeline_;
  DeviceArray<std::uint32_t> produced_, consumed_, delays_;
  DeviceMismatchLog log_;
  std::uint32_t salt_ = 0;
};

// A -(TilePolicy, SameTile)-> B -(RowPolicy, WholeRow)-> C. A and B have `producerGrid`, C has `consumerGrid`
// (same y). B is both a consumer and a producer; A and B tiles get the random delays.
class ChainScenario {
 public:
  ChainScenario(const ScenarioShape& shape, StageOrdering ordering, std::uint32_t seed)
      : shape_(shape),
        a_("chain_a", shape.producerGrid),
        b_("chain_b", shape.producerGrid),
        c_("chain_c", shape.consumerGrid),
        pipeline_(ordering),
        aData_(std::size_t(shape.producerGrid.tileCount()) * shape.elementsPerTile),
        bData_(aData_.size()),
        cData_(std::size_t(shape.consumerGrid.tileCount()) * shape.elementsPerTile),
        delays_(shape.producerGrid.tileCount()) {
    std::mt19937 random(seed);
    salt_ = random();
    delays_.fromHost(delaysFor(shape, random));
    a_.setOutputPolicy<TilePolicy>();
    b_.setOutputPolicy<RowPolicy>();
    pipeline_.add(a_, {}, [this](cudaStream_t stream, LaunchOrdering ordering, bool) {
      launchKernel(produceTiles<TilePolicy>, launchGrid(shape_.producerGrid), dim3(shape_.threads), 0, stream,
                   ordering, a_.view<TilePolicy>(), aData_.data(), shape_.elementsPerTile, salt_, delays_.data());
    });
    pipeline_.add(b_, {&a_}, [this](cudaStream_t stream, LaunchOrdering ordering, bool synchronizedInputs) {
      const auto input = synchronizedInputs ? a_.inputFor<TilePolicy>(b_) : InputView<TilePolicy>{};
      launchKernel(consumeTiles<TilePolicy, SameTile, ProducedValue, RowPolicy>, launchGrid(shape_.producerGrid),
                   dim3(shape_.threads), 0, stream, ordering, b_.view(), input, shape_.producerGrid,
                   aData_.data(), bData_.data(), shape_.elementsPerTile, ProducedValue{salt_}, log_.view(), 2u,
                   delays_.data());
    });
    pipeline_.add(c_, {&b_}, [this](cudaStream_t stream, LaunchOrdering ordering, bool synchronizedInputs) {
      const auto input = synchronizedInputs ? b_.inputFor<RowPolicy>(c_) : InputView<RowPolicy>{};
      launchKernel(consumeTiles<RowPolicy, WholeRow, RelayedValue>, launchGrid(shape_.consumerGrid),
                   dim3(shape_.threads), 0, stream, ordering, c_.view(), input, shape_.producerGrid,
                   bData_.data(), cData_.data(), shape_.elementsPerTile, RelayedValue{salt_}, log_.view(), 3u,
                   nullptr);
    });
  }

  Stage& a() { return a_; }
  Stage& b() { return b_; }
  Stage& c() { return c_; }
  Pipeline& pipeline() { return pipeline_; }
  const DeviceMismatchLog& log() const { return log_; }

  OutputCheck checkOutputs(std::uint32_t iteration) const {
    const auto expectedB = expectedConsumerOutput<SameTile>(shape_.producerGrid, shape_.producerGrid,
                                                            shape_.elementsPerTile, ProducedValue{salt_}, iteration);
    const auto expectedC = expectedConsumerOutput<WholeRow>(shape_.consumerGrid, shape_.producerGrid,
                                                            shape_.elementsPerTile, RelayedValue{salt_}, iteration);
    return combine(compareTiles("stage B output", bData_.toHost(), expectedB, shape_.elementsPerTile),
                   compareTiles("stage C output", cData_.toHost(), expectedC, shape_.elementsPerTile));
  }

 private:
  ScenarioShape shape_;
  Stage a_, b_, c_;
  Pipeline pipeline_;
  DeviceArray<std::uint32_t> aData_, bData_, cData_, delays_;
  DeviceMismatchLog log_;
  std::uint32_t salt_ = 0;
};

// A and B (both `producerGrid`) -(TilePolicy each)-> C (`producerGrid` too): a consumer with two producers, so
// two wait-kernels (or two programmatic launches) stand before it.
class TwoProducerScenario {
 public:
  TwoProducerScenario(const ScenarioShape& shape, StageOrdering ordering, std::uint32_t seed)
      : shape_(shape),
        a_("left_producer", shape.producerGrid),
        b_("right_producer", shape.producerGrid),
        c_("sum_consumer", shape.producerGrid),
        pipeline_(ordering),
        aData_(std::size_t(shape.producerGrid.tileCount()) * shape.elementsPerTile),
        bData_(aData_.size()),
        cData_(aData_.size()),
        delaysA_(shape.producerGrid.tileCount()),
        delaysB_(shape.producerGrid.tileCount()) {
    std::mt19937 random(seed);
    saltA_ = random();
    saltB_ = random();
    delaysA_.fromHost(delaysFor(shape, random));
    delaysB_.fromHost(delaysFor(shape, random));
    a_.setOutputPolicy<TilePolicy>();
    b_.setOutputPolicy<TilePolicy>();
    pipeline_.add(a_, {}, [this](cudaStream_t stream, LaunchOrdering ordering, bool) {
      launchKernel(produceTiles<TilePolicy>, launchGrid(shape_.producerGrid), dim3(shape_.threads), 0, stream,
                   ordering, a_.view<TilePolicy>(), aData_.data(), shape_.elementsPerTile, saltA_, delaysA_.data());
    });
    pipeline_.add(b_, {}, [this](cudaStream_t stream, LaunchOrdering ordering, bool) {
      launchKernel(produceTiles<TilePolicy>, launchGrid(shape_.producerGrid), dim3(shape_.threads), 0, stream,
                   ordering, b_.view<TilePolicy>(), bData_.data(), shape_.elementsPerTile, saltB_, delaysB_.data());
    });
    pipeline_.add(c_, {&a_, &b_}, [this](cudaStream_t stream, LaunchOrdering ordering, bool synchronizedInputs) {
      const auto inputA = synchronizedInputs ? a_.inputFor<TilePolicy>(c_) : InputView<TilePolicy>{};
      const auto inputB = synchronizedInputs ? b_.inputFor<TilePolicy>(c_) : InputView<TilePolicy>{};
      launchKernel(sumTwoProducers<TilePolicy, TilePolicy>, launchGrid(shape_.producerGrid), dim3(shape_.threads),
                   0, stream, ordering, c_.view(), inputA, inputB, aData_.data(), bData_.data(), cData_.data(),
                   shape_.elementsPerTile, ProducedValue{saltA_}, ProducedValue{saltB_}, log_.view(), 1u);
    });
  }

  Pipeline& pipeline() { return pipeline_; }
  const DeviceMismatchLog& log() const { return log_; }

  OutputCheck checkOutputs(std::uint32_t iteration) const {
    std::vector<std::uint32_t> expected(cData_.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
      const auto tile = static_cast<std::uint32_t>(i / shape_.elementsPerTile);
      const auto element = static_cast<std::uint32_t>(i % shape_.elementsPerTile);
      expected[i] = relayedValue(producedValue(saltA_, iteration, tile, element) +
                                 producedValue(saltB_, iteration, tile, element));
    }
    return compareTiles("sum output", cData_.toHost(), expected, shape_.elementsPerTile);
  }

 private:
  ScenarioShape shape_;
  Stage a_, b_, c_;
  Pipeline pipeline_;
  DeviceArray<std::uint32_t> aData_, bData_, cData_, delaysA_, delaysB_;
  DeviceMismatchLog log_;
  std::uint32_t saltA_ = 0, saltB_ = 0;
};

}  // namespace cusync::gpu_test
