// The convolution chains conv2d_chain_example runs: per model, per layer, the dependent convolutions of one layer
// as stages, each reading the output of one earlier stage (or the chain's input). Host header, C++17, no CUDA.
//
//   resnet      the cuSync paper's Table II, ResNet-38: two 3x3 convolutions (C -> C, stride 1) per layer at
//               56x56x64, 28x28x128, 14x14x256 and 7x7x512 (examples/conv2d/conv2d_3x3.dep)
//   vgg         Table II, VGG-19: the same shapes, two 3x3 convolutions per layer at 56 and 28, four at 14 and 7
//               (each stage waits on the previous one: conv2d_3x3.dep's dependency, stage after stage)
//   bottleneck  ResNet-50's bottleneck block at the same four widths, C = 64..512: 1x1 (4C -> C), 3x3 (C -> C),
//               1x1 (C -> 4C) (examples/conv2d/conv2d_bottleneck.dep: a 3x3 after a 1x1, a 1x1 after a 3x3; the
//               spec's channel ratio s is 4 here, which changes only the grids' x extents)
//   stride2     ResNet's downsampling block at the transitions to 28x28x128, 14x14x256 and 7x7x512: the last 3x3
//               of the previous stage (2P x 2Q, C/2 -> C/2), then a 3x3 stride 2 (C/2 -> C) and the 1x1 stride-2
//               projection shortcut (C/2 -> C), both reading it (examples/conv2d/conv2d_stride2.dep), then a 3x3
//               stride 1 (C -> C) reading the stride-2 3x3 (conv2d_3x3.dep). The residual add is not a stage.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cusync::examples {

// One convolution of a chain: the layer's geometry (the batch is set per run) and where its input comes from.
struct ConvStageSpec {
  std::string name;         // "3x3", "1x1/2", ...: filter, and "/2" for stride 2
  int height = 0, width = 0;  // of the input image
  int inChannels = 0, outChannels = 0;
  int filter = 3;           // R = S: 1 or 3 (padding filter / 2)
  int stride = 1;           // 1 or 2
  int producer = -1;        // the stage whose output this one reads; -1: the chain's input
  int outHeight() const { return (height + 2 * (filter / 2) - filter) / stride + 1; }
  int outWidth() const { return (width + 2 * (filter / 2) - filter) / stride + 1; }
};

// One layer of a model: the stages in launch order (every producer index is smaller than its consumer's).
struct ConvChainSpec {
  std::string model;
  int width = 0;     // the layer's key on the command line: its output image width (56, 28, 14, 7)
  int channels = 0;  // its output channels (the Table II "K")
  std::vector<ConvStageSpec> stages;

  std::string label() const {
    return std::to_string(width) + "x" + std::to_string(width) + "x" + std::to_string(channels);
  }
  // Whether some stage reads stage `s`'s output (a stage nobody reads posts nothing).
  bool isRead(int s) const {
    for (const ConvStageSpec& stage : stages)
      if (stage.producer == s) return true;
    return false;
  }
};

inline const std::vector<std::string>& convModelNames() {
  static const std::vector<std::string> names = {"resnet", "vgg", "bottleneck", "stride2"};
  return names;
}

namespace detail {
inline ConvStageSpec convStage(const std::string& name, int size, int in, int out, int filter, int stride,
                               int producer) {
  ConvStageSpec s;
  s.name = name;
  s.height = s.width = size;
  s.inChannels = in;
  s.outChannels = out;
  s.filter = filter;
  s.stride = stride;
  s.producer = producer;
  return s;
}
}  // namespace detail

// The layers of `model` (one of convModelNames()), widest first; empty for an unknown model.
inline std::vector<ConvChainSpec> convModelLayers(const std::string& model) {
  using detail::convStage;
  std::vector<ConvChainSpec> layers;
  // Table II: (P = Q, C = K) of each ResNet-38 / VGG-19 layer.
  const int sizes[] = {56, 28, 14, 7};
  const int channels[] = {64, 128, 256, 512};
  for (int i = 0; i < 4; ++i) {
    const int p = sizes[i], c = channels[i];
    ConvChainSpec chain{model, p, c, {}};
    if (model == "resnet" || model == "vgg") {
      const int convs = model == "vgg" && p <= 14 ? 4 : 2;  // Table II, "Convs/Layer"
      for (int k = 0; k < convs; ++k) chain.stages.push_back(convStage("3x3", p, c, c, 3, 1, k - 1));
    } else if (model == "bottleneck") {
      chain.stages.push_back(convStage("1x1", p, 4 * c, c, 1, 1, -1));
      chain.stages.push_back(convStage("3x3", p, c, c, 3, 1, 0));
      chain.stages.push_back(convStage("1x1", p, c, 4 * c, 1, 1, 1));
    } else if (model == "stride2") {
      if (i == 0) continue;  // no transition into the first stage
      chain.stages.push_back(convStage("3x3", 2 * p, c / 2, c / 2, 3, 1, -1));
      chain.stages.push_back(convStage("3x3/2", 2 * p, c / 2, c, 3, 2, 0));
      chain.stages.push_back(convStage("1x1/2", 2 * p, c / 2, c, 1, 2, 0));
      chain.stages.push_back(convStage("3x3", p, c, c, 3, 1, 1));
    } else {
      return {};
    }
    layers.push_back(chain);
  }
  return layers;
}

// Why `chain` is not a chain the example can run, or empty: every producer is an earlier stage, every stage reads
// an image of its producer's output size and channels, and the filters and strides are the specs' (1x1 or 3x3,
// stride 1 or 2, the input stride times the output). tests/examples/conv_models_test.cpp holds every model to it.
inline std::string whyMalformed(const ConvChainSpec& chain) {
  if (chain.stages.empty()) return "no stages";
  for (std::size_t s = 0; s < chain.stages.size(); ++s) {
    const ConvStageSpec& stage = chain.stages[s];
    const std::string where = chain.model + " " + chain.label() + " stage " + std::to_string(s) + ": ";
    if (stage.filter != 1 && stage.filter != 3) return where + "filter is not 1 or 3";
    if (stage.stride != 1 && stage.stride != 2) return where + "stride is not 1 or 2";
    if (stage.height != stage.stride * stage.outHeight() || stage.width != stage.stride * stage.outWidth())
      return where + "input is not stride times the output (conv_halo.h)";
    if (stage.inChannels % 8 != 0 || stage.outChannels % 8 != 0) return where + "channels not a multiple of 8 (TMA)";
    if (stage.producer >= int(s)) return where + "reads a later stage";
    if (stage.producer >= 0) {
      const ConvStageSpec& producer = chain.stages[stage.producer];
      if (producer.outHeight() != stage.height || producer.outWidth() != stage.width ||
          producer.outChannels != stage.inChannels)
        return where + "does not read an image of its producer's shape";
    }
  }
  return "";
}

}  // namespace cusync::examples
