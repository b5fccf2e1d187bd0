// The attention block of GPT-3 or LLaMA-65B (one GPU of 8-way tensor parallelism) as three tile-synchronized stages,
// in token generation or prompt processing, against the same kernels stream-ordered and against cuBLASLt GEMMs:
//
//   QKV = X[tokens, H] Wqkv^T               hooked CUTLASS GEMM; posts its tiles under StridedSync (the Q, K and V
//                                          tiles of one head share a semaphore), in the grouped tile order, or, in
//                                          96-column tiles (prompt), under RowSync in row-major order
//   T   = attention(Q, K, V, caches)       attention_kernels.cuh; waits for its head's tiles, appends K and V to the
//                                          caches in place, posts T's head tile under TileSync or RowSync
//   Y   = T Wo^T                           hooked CUTLASS GEMM; waits for the T tiles of each k-block (or row)
//
// Each variant searches the GEMMs' tile configurations (examples/attention/CMakeLists.txt lists them per role) and
// split-K choices (splitCandidates): first the QKV GEMM's with the output GEMM at its baseline, then the
// output GEMM's with the best QKV GEMM. Every configuration of every variant is checked against a reference
// (cuBLASLt GEMMs around an fp32 attention kernel) on fresh inputs, with QKV, T, Y and the caches' new positions
// poisoned with NaN, then timed with CUDA graphs (median of replays; --interleave: all of a problem's configurations
// together, in interleaved rounds, runVariantsInterleaved); the CSV has one row per configuration, the table last
// each variant's best. The policies and tile orders are generated and proven by cusyncgen from
// examples/attention/attention_decode.dep and attention_prompt.dep.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <cuda_runtime.h>

#include "attention_chain.h"
#include "attention_problem.h"
#include "common/checked_interleaved_timings.h"
#include "common/command_line_numbers.h"
#include "common/graph_timer.cuh"
#include "common/no_cuda_device.h"
#include "decode_attention_form.h"
#include "decode_carveout.h"
#include "phase_argument.h"

using namespace cusync;
using namespace cusync::examples;
using namespace cusync::examples::attention;

namespace {

constexpr double kRelativeErrorBound = 2e-2;  // fp16 operands and intermediates, fp32 accumulation

struct Options {
  AttentionProblem problem;
  std::uint64_t seed = 1;
  bool checkOnly = false;
  std::string csvPath = "attention.csv";
  int samples = 20;
  int repetitions = 10;  // chains per graph replay
  int warmupMilliseconds = 0;  // sustained warm-up before each timing (graph_timer.cuh): steady power state
  bool interleave = false;  // time the problem's chains together (runVariantsInterleaved), not one after another
  std::vector<std::string> variants;  // names to run; empty: all
  std::vector<std::string> gemmConfigs;  // GEMM tile configurations to search; empty: all registered
  AttentionOrder attentionOrder = AttentionOrder::LongestFirst;  // prompt processing
  PromptAttentionKernel attentionKernel =  // prompt processing
      CUSYNC_HAVE_CUTLASS_FMHA ? PromptAttentionKernel::CutlassFmha : PromptAttentionKernel::FlashMma;
  PartOrder splitOrder = PartOrder::KRangesInTurn;  // the GEMMs' split-K parts
  std::uint32_t attentionBlocks = 0;  // prompt processing: blocks per attention tile of 128 queries (0: auto)
  std::uint32_t decodeBlocksPerSm = kDecodeBlocksPerSm;  // token generation: attention blocks per SM (decodeParts)
  std::uint32_t qkvGroupRows = 1;  // the QKV GEMM's tile order (AttentionChain): 1 is the spec's
  // Persistent GEMMs: the unit schedules searched (GemmChoice::qkvStaticUnits): static, ticket or both.
  std::vector<bool> persistentUnits{true, false};
  std::uint32_t outputGroupRows = 0;  // the output GEMM's tile order (AttentionChain); 0: the model's default
  std::string tracePath;  // per-block timeline of each variant's best chain (empty: none)
  std::vector<std::string> splitKinds;  // the GEMMs' split choices to search, by kind (empty: all)
  bool decodeTriggerAfterWait = false;  // token generation: the attention stage triggers the output GEMM's launch
                                        // after its wait (else at block start)
  // token generation: how the attention stage computes each part's softmax (decode_attention_form.h)
  DecodeAttentionForm decodeForm = DecodeAttentionForm::Automatic;
  // Every stage kernel's preferred shared-memory carveout, percent (uniform_carveout.h); -1: the driver's choice per
  // kernel; unset: kDecodeSharedCarveoutPercent in token generation, the driver's in prompt processing.
  std::optional<int> carveoutPercent;
};

const char* const kUsage =
    "Usage: attention_example [--model gpt3|llama] [--phase decode|prompt] [--batch B] [--seq S] [--cache S']\n"
    "                         [--seed N] [--samples N] [--reps N] [--warmup-ms N] [--interleave]\n"
    "                         [--variants a,b]\n"
    "                         [--gemm-configs a,b]\n"
    "                         [--attention-order rows|longest-first] [--attention-blocks auto|1|2]\n"
    "                         [--attention-kernel cutlass-fmha|mma]\n"
    "                         [--split-order together|k-ranges] [--split-kinds a,b] [--decode-blocks-per-sm N]\n"
    "                         [--trace FILE]\n"
    "                         [--decode-trigger start|after-wait] [--out-group-rows N] [--qkv-group-rows N]\n"
    "                         [--carveout default|shared|PERCENT]\n"
    "                         [--decode-attention auto|two-pass|one-pass]\n"
    "                         [--persistent-units static,ticket]\n"
    "                         [--check-only] [--csv FILE]\n"
    "                         [--help]\n"
    "The attention block (QKV GEMM -> attention -> output GEMM) of one GPU under 8-way tensor parallelism,\n"
    "tile-synchronized with cusync, against the same kernels stream-ordered and cuBLASLt GEMMs; every variant\n"
    "checked against an fp32 reference, then timed with CUDA graphs.\n"
    "  --model   gpt3 (H = 12288, 12 heads of 128) or llama (H = 8192, 8 heads); default gpt3\n"
    "  --phase   decode: token generation, S = 1 new token per sequence over S' cached ones (default);\n"
    "            prompt: prompt processing, S' = 0, causal over S tokens (512, 1024 or 2048: the S with a proof)\n"
    "  --batch   sequences B (default 1; decode: at most 64; prompt: B*S at most 4096)\n"
    "  --seq     new tokens per sequence S (default 1 for decode, 512 for prompt)\n"
    "  --cache   cached tokens S' (default 1024 for decode, 0 for prompt)\n"
    "  --seed    seed of the random inputs (default 1)\n"
    "  --samples graph replays timed, the median reported (default 20); --reps chains per replay (default 10)\n"
    "  --warmup-ms N  replay each chain for at least N ms before timing it (default 0)\n"
    "  --interleave  check every configuration of every variant as it is made, then time them all together, in\n"
    "            rounds that replay each one's graph once in an order rotated per round, after one --warmup-ms\n"
    "            warm-up over all of them; then check each again after a replay of its own graph. The search's\n"
    "            QKV GEMM choice is timed that way too, before the output GEMM's candidates are made. Keeps every\n"
    "            chain (and its split-K scratch) in memory until the end. Nothing to time with --check-only\n"
    "  --variants    the variants to run, by name (default all: cuBLAS+attn, StreamSync, PDL-GridSync,\n"
    "            Strided+{TileSync,RowSync}+{WaitKernel,PDL}, Stream+{TileSync,RowSync}+PDL; Strided names the QKV\n"
    "            wait of head-wide QKV tiles, the prompt's narrower and wider ones wait under RowSync; Stream: the\n"
    "            attention stage runs after the whole QKV GEMM, only the output GEMM waits tile by tile; prompt\n"
    "            processing only)\n"
    "  --gemm-configs    the GEMM tile configurations to search, by name, e.g. 128x192x64_s4_coop_b1 (default\n"
    "            every one this build has for the phase; each role keeps those of its own that are named)\n"
    "  --attention-order    prompt processing: the order the attention kernel takes its head tiles in: rows\n"
    "            (query-row tiles in sequence order) or longest-first (causal: the tiles with the most keys first;\n"
    "            default)\n"
    "  --attention-blocks    prompt processing: blocks per attention tile of 128 queries, 1 (8 warps) or 2 (4\n"
    "            warps and 64 queries each); default auto: 2 where the tiles fill at most half the SMs (mma only)\n"
    "  --attention-kernel    prompt processing: the attention stage's kernel, cutlass-fmha (CUTLASS's Hopper\n"
    "            flash attention, TMA and wgmma; default where this build has it) or mma (this example's mma.sync\n"
    "            flash attention)\n"
    "  --split-order    how the GEMMs' split-K parts follow each other: together (a tile's parts one after\n"
    "            another) or k-ranges (every tile's first part, then every tile's second, ...: tiles sharing weights\n"
    "            read the same k-range at once; default)\n"
    "  --split-kinds    the GEMMs' split-K choices to search, by kind: unsplit, every-tile, last-wave (the tiles\n"
    "            after the full waves split), last-wave-sum (the same, the parts summed in L2: faster to reduce, not\n"
    "            bitwise reproducible), stream-k (persistent GEMMs: one chunk of k-blocks per block); default all\n"
    "  --decode-blocks-per-sm    token generation: the attention stage's blocks per SM, which sets how many parts\n"
    "            each head's cache is split into (1..16, default 8; at most what one wave of the attention kernel\n"
    "            holds: 8 two-pass, 5 one-pass, by their registers)\n"
    "  --decode-trigger    token generation, PDL variants: when the attention stage's blocks let the output GEMM's\n"
    "            blocks launch: at their start (default) or once they have their q, k and v (after-wait)\n"
    "  --carveout    every stage kernel's preferred share of the SM's memory as shared memory, in percent\n"
    "            (shared: 100), so that the stages' kernels can share an SM (uniform_carveout.h); default: left to\n"
    "            the driver per kernel. Unset: 28 in token generation (decode_carveout.h), default in prompt\n"
    "            processing\n"
    "  --decode-attention    token generation: the attention stage's softmax over a part's keys in two passes (the\n"
    "            keys' scores, the block's maximum and sum, then the values), in one (keys and values loaded\n"
    "            together, an online softmax per half-warp) or auto: one where each part's keys take one step of\n"
    "            its loop (64 keys), else two (decode_attention_form.h; default)\n"
    "  --out-group-rows N    the output GEMM's tile order: rows of tiles taken N at a time, column by column\n"
    "            (1: row-major; 16 is column-major at every prompt shape up to 2048 tokens; default 16 for gpt3,\n"
    "            1 for llama, the faster of the two in the chains)\n"
    "  --qkv-group-rows N    the QKV GEMM's tile order: a head's Q, K and V tiles of a row back to back, rows\n"
    "            taken N at a time, head by head (default 1: the spec's order, row by row); head-wide QKV tiles\n"
    "            only: the prompt's narrower ones (96 columns) run row-major\n"
    "  --persistent-units    how the persistent GEMM stages' blocks take their tiles, searched per GEMM: static\n"
    "            (block b takes units b, b + blocks, ..., as CUTLASS's persistent scheduler does), ticket (one atomic\n"
    "            ticket per unit, sessions 5-16's only schedule; named _ticket); default both\n"
    "  --trace FILE  run each variant's fastest chain once more recording when every block of the GEMV, the\n"
    "            one-tile CUTLASS GEMM, the decode attention and the flash attention stages started, finished\n"
    "            waiting (the GEMMs: their last MMA) and finished; writes FILE (CSV, us from the chain's first\n"
    "            block) and prints each stage's span\n"
    "  --check-only  check every variant once, time nothing\n"
    "  --csv     where to write the results (default attention.csv)\n"
    "Exit status: 0 all variants correct; 1 a variant failed its check; 2 bad command line; 77 no GPU.\n";

Options parseOptions(int argc, char** argv) {
  const std::string program = "attention_example";
  Options options;
  bool seqGiven = false, cacheGiven = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) exitWithUsageError(program, arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (arg == "--model") {
      options.problem.shape = twoWordArgument(program, arg, value(), "gpt3", "llama") ? kLlama : kGpt3;
    } else if (arg == "--phase") {
      options.problem.phase = phaseArgument(program, arg, value());
    } else if (arg == "--batch") {
      options.problem.batch = int(integerArgument(program, arg, value(), 1, 4096));
    } else if (arg == "--seq") {
      options.problem.sequence = int(integerArgument(program, arg, value(), 1, 4096));
      seqGiven = true;
    } else if (arg == "--cache") {
      options.problem.cached = int(integerArgument(program, arg, value(), 0, 65535));
      cacheGiven = true;
    } else if (arg == "--seed") {
      options.seed = std::uint64_t(integerArgument(program, arg, value(), 0, LLONG_MAX));
    } else if (arg == "--samples") {
      options.samples = positiveIntArgument(program, arg, value());
    } else if (arg == "--reps") {
      options.repetitions = positiveIntArgument(program, arg, value());
    } else if (arg == "--warmup-ms") {
      options.warmupMilliseconds = warmupMillisecondsArgument(program, arg, value());
    } else if (arg == "--interleave") {
      options.interleave = true;
    } else if (arg == "--variants") {
      for (const std::string& name : wordListArgument(program, arg, value())) {
        bool known = false;
        for (const Variant& v : allVariants()) known = known || v.name() == name;
        if (!known) exitWithUsageError(program, "--variants: unknown variant '" + name + "'");
        options.variants.push_back(name);
      }
    } else if (arg == "--attention-order") {
      options.attentionOrder = twoWordArgument(program, arg, value(), "rows", "longest-first")
                                   ? AttentionOrder::LongestFirst
                                   : AttentionOrder::Rows;
    } else if (arg == "--attention-kernel") {
      options.attentionKernel = twoWordArgument(program, arg, value(), "cutlass-fmha", "mma")
                                    ? PromptAttentionKernel::FlashMma
                                    : PromptAttentionKernel::CutlassFmha;
      if (options.attentionKernel == PromptAttentionKernel::CutlassFmha && !CUSYNC_HAVE_CUTLASS_FMHA)
        exitWithUsageError(program, "--attention-kernel cutlass-fmha: this build has no CUTLASS flash attention "
                                    "(the nvidia-cutlass package's examples/88_hopper_fmha was not found)");
    } else if (arg == "--attention-blocks") {
      const std::string v = value();
      options.attentionBlocks = v == "auto" ? 0u : std::uint32_t(integerArgument(program, arg, v, 1, 2));
    } else if (arg == "--decode-trigger") {
      options.decodeTriggerAfterWait = twoWordArgument(program, arg, value(), "start", "after-wait");
    } else if (arg == "--carveout") {
      const std::string v = value();
      if (v != "default" && v != "shared" && v.find_first_not_of("0123456789") != std::string::npos)
        exitWithUsageError(program, "--carveout: '" + v + "' is none of default, shared or a percent from 0 to 100");
      options.carveoutPercent = v == "default" ? -1
                                : v == "shared"  ? int(cudaSharedmemCarveoutMaxShared)
                                                 : int(integerArgument(program, arg, v, 0, 100));
    } else if (arg == "--decode-attention") {
      const std::string v = value();
      if (!parseDecodeAttentionForm(v, options.decodeForm))
        exitWithUsageError(program, "--decode-attention: '" + v + "' is none of auto, two-pass, one-pass");
    } else if (arg == "--trace") {
      options.tracePath = value();
    } else if (arg == "--decode-blocks-per-sm") {
      options.decodeBlocksPerSm = std::uint32_t(integerArgument(program, arg, value(), 1, 16));
    } else if (arg == "--persistent-units") {
      options.persistentUnits = twoWordListArgument(program, arg, value(), "unit schedule", "static", "ticket");
    } else if (arg == "--qkv-group-rows") {
      options.qkvGroupRows = std::uint32_t(integerArgument(program, arg, value(), 1, 1 << 16));
    } else if (arg == "--out-group-rows") {
      options.outputGroupRows = std::uint32_t(integerArgument(program, arg, value(), 1, 1 << 16));
    } else if (arg == "--split-order") {
      options.splitOrder = twoWordArgument(program, arg, value(), "together", "k-ranges")
                               ? PartOrder::KRangesInTurn
                               : PartOrder::PartsOfATileTogether;
    } else if (arg == "--split-kinds") {
      for (const std::string& kind : wordListArgument(program, arg, value())) {
        if (kind != "unsplit" && kind != "every-tile" && kind != "last-wave" && kind != "last-wave-sum" &&
            kind != "stream-k")
          exitWithUsageError(program, "--split-kinds: '" + kind +
                                          "' is none of unsplit, every-tile, last-wave, last-wave-sum, stream-k");
        options.splitKinds.push_back(kind);
      }
    } else if (arg == "--gemm-configs") {
      for (const std::string& name : wordListArgument(program, arg, value())) {
        if (!isAttentionGemmConfiguration(name))
          exitWithUsageError(program, "--gemm-configs: no GEMM configuration '" + name + "' in this build");
        options.gemmConfigs.push_back(name);
      }
    } else if (arg == "--check-only") {
      options.checkOnly = true;
    } else if (arg == "--csv") {
      options.csvPath = value();
    } else {
      exitWithUsageError(program, "unknown option '" + arg + "'");
    }
  }
  requireWritableOutput(program, "--csv", options.csvPath);
  if (!options.tracePath.empty()) requireWritableOutput(program, "--trace", options.tracePath);
  AttentionProblem& p = options.problem;
  if (!seqGiven) p.sequence = p.phase == Phase::Decode ? 1 : 512;
  if (!cacheGiven) p.cached = p.phase == Phase::Decode ? 1024 : 0;
  if (options.outputGroupRows == 0) options.outputGroupRows = defaultOutputGroupRows(p.shape.model);
  if (!options.carveoutPercent) options.carveoutPercent = p.phase == Phase::Decode ? kDecodeSharedCarveoutPercent : -1;
  if (p.phase == Phase::Prompt && options.attentionKernel == PromptAttentionKernel::CutlassFmha &&
      options.attentionBlocks > 1)
    exitWithUsageError(program, "--attention-blocks 2: CUTLASS's flash attention computes a tile in one block "
                                "(--attention-kernel mma splits it)");
  if (const auto why = whyNotRunnable(p)) exitWithUsageError(program, *why);
  // Each role needs a configuration left, under both T policies: none named by --gemm-configs, or none built (the
  // configuration lists are CMake's; a list may hold only tiles another model uses, as 144-column QKV tiles).
  for (GemmRole role : {GemmRole::Qkv, GemmRole::Output})
    for (TPolicyKind tPolicy : {TPolicyKind::TileSync, TPolicyKind::RowSync})
      if (findAttentionGemms(p.shape.model, p.phase, role, tPolicy, options.gemmConfigs).empty()) {
        const std::string roleName = role == GemmRole::Qkv ? "QKV" : "output";
        const std::string what = roleName + " GEMM's configurations for " + p.shape.name + " " + p.phaseName() +
                                 " (waiting under " + tPolicyName(tPolicy) + ")";
        if (!options.gemmConfigs.empty())
          exitWithUsageError(program, "--gemm-configs: none of the " + what + " is named");
        const std::string list = std::string("CUSYNC_ATTENTION_") + (p.phase == Phase::Decode ? "DECODE_" : "PROMPT_") +
                                 (role == GemmRole::Qkv ? "QKV" : "OUTPUT") + "_CONFIGS";
        exitWithUsageError(program, "this build has none of the " + what + ": CMake's " + list +
                                        (p.phase == Phase::Decode ? " and CUSYNC_ATTENTION_DECODE_GEMV_CONFIGS list"
                                                                  : " lists") +
                                        " none this model can use");
      }
  return options;
}

struct Result {
  std::string variant, configuration;
  GemmChoice gemms;  // the configuration's GEMMs and splits
  double microseconds = 0;
  Comparison output{}, attention{}, cache{};  // Y; T (which tells the attention stage from the GEMMs); the caches
  bool correct() const {
    return output.passes(kRelativeErrorBound) && attention.passes(kRelativeErrorBound) &&
           cache.passes(kRelativeErrorBound);
  }
};

// Poisons everything the chain writes, runs it once and checks Y, T and the caches' new positions.
template <class Chain>
Result checkChain(const Chain& chain, AttentionBuffers& buffers, const Options& options, cudaStream_t stream) {
  const AttentionProblem& p = options.problem;
  Result result;
  for (DeviceBuffer<__half>* buffer : {&buffers.qkv, &buffers.t, &buffers.y}) poison(*buffer, stream);
  poisonAppended(buffers, p, stream);
  CUSYNC_CUDA_CHECK(cudaStreamSynchronize(stream));
  chain.enqueue(stream);
  CUSYNC_CUDA_CHECK(cudaStreamSynchronize(stream));
  CUSYNC_CUDA_CHECK(cudaGetLastError());
  result.output = compareToReference(buffers.y, buffers.yReference);
  result.attention = compareToReference(buffers.t, buffers.tReference);
  gatherAppended(buffers, p, stream);
  CUSYNC_CUDA_CHECK(cudaStreamSynchronize(stream));
  result.cache = compareToReference(buffers.appended, buffers.appendedReference);
  return result;
}

// Checks the chain (checkChain), then, unless --check-only, times it alone with CUDA graphs and checks Y of the last
// replay again.
template <class Chain>
Result checkThenTime(const Chain& chain, AttentionBuffers& buffers, const Options& options, cudaStream_t stream) {
  Result result = checkChain(chain, buffers, options, stream);
  if (options.checkOnly) return result;
  poison(buffers.y, stream);
  CUSYNC_CUDA_CHECK(cudaStreamSynchronize(stream));
  result.microseconds = timeWithGraph([&](cudaStream_t s) { chain.enqueue(s); }, stream, options.repetitions, 3,
                                      options.samples, options.warmupMilliseconds)
                            .medianMicroseconds;
  const Comparison after = compareToReference(buffers.y, buffers.yReference);
  if (!after.passes(kRelativeErrorBound)) result.output = after;
  return result;
}

// One GEMM role's candidates: each selected configuration that fits on the device, with each of its split-K choices.
struct RoleCandidate {
  const AttentionGemm* gemm;
  SplitChoice split;
  bool staticUnits = true;  // persistent GEMMs: GemmChoice::qkvStaticUnits
};
std::vector<RoleCandidate> roleCandidates(const Options& options, GemmRole role, TPolicyKind tPolicy,
                                          int multiprocessors) {
  const AttentionProblem& p = options.problem;
  const bool qkv = role == GemmRole::Qkv;
  std::vector<RoleCandidate> candidates;
  for (const AttentionGemm* gemm : findAttentionGemms(p.shape.model, p.phase, role, tPolicy, options.gemmConfigs)) {
    if (gemm->maxActiveBlocksPerSm() == 0) {
      std::printf("%s: does not fit on this device (shared memory), not searched\n", gemm->name.c_str());
      continue;
    }
    for (const SplitChoice& split : splitCandidates(*gemm, p.phase, p.tokens(), qkv ? p.qkvColumns() : p.shape.hidden,
                                                    qkv ? p.shape.hidden : p.tColumns(), multiprocessors)) {
      if (!options.splitKinds.empty() && std::find(options.splitKinds.begin(), options.splitKinds.end(),
                                                   splitKindName(split)) == options.splitKinds.end())
        continue;
      for (const bool staticUnits : options.persistentUnits) {
        if (gemm->lean && !staticUnits) continue;  // it takes static units only
        // A one-tile GEMM has no unit schedule (once); a lean one takes static units whatever the list's order.
        if (gemm->persistent || staticUnits == options.persistentUnits.front())
          candidates.push_back({gemm, split, staticUnits});
      }
    }
  }
  return candidates;
}

// The chain of one variant and GEMM choice under the command line's chain options: the one place that passes them
// to the constructor, for the timed runs, the stage times and the traces alike. Shared: an interleaved timing
// (CheckedInterleavedTimings) keeps the chains until the problem's end. On the heap, as its stages' launches capture
// its address.
template <Model M, Phase P>
std::shared_ptr<AttentionChain<M, P>> chainFor(const Options& options, const Variant& variant, GemmChoice gemms,
                                               AttentionBuffers& buffers, int multiprocessors, cublasLtHandle_t lt,
                                               void* workspace, std::size_t workspaceBytes) {
  return std::make_shared<AttentionChain<M, P>>(
      options.problem, variant, gemms, buffers, multiprocessors, lt, workspace, workspaceBytes,
      options.attentionOrder, options.splitOrder, options.attentionBlocks, options.decodeBlocksPerSm,
      options.decodeTriggerAfterWait, options.outputGroupRows, options.attentionKernel, options.qkvGroupRows,
      options.decodeForm);
}

// One configuration's line: its time (or, `timed` false, that it was checked and waits for its interleaved timing),
// its errors and its configuration.
void printResult(const Result& result, bool timed) {
  char time[32] = "      checked";
  if (timed) std::snprintf(time, sizeof(time), "%10.1f us", result.microseconds);
  std::printf("%-28s %s  Y error %.2e  T error %.2e  cache error %.2e%s  [%s]\n", result.variant.c_str(), time,
              result.output.relativeError, result.attention.relativeError, result.cache.relativeError,
              result.correct() ? "" : "  FAILED", result.configuration.c_str());
}

// Checks, then times, one configuration of one variant; prints and records its result. With `interleaved`
// (--interleave), checks it only and hands its chain to `interleaved`, which times it later with the others under
// the index of its row in `results`, and keeps the chain until then: the graph launches kernels with pointers into
// the chain's state (stages, split-K partials, side streams and events), and other chains are made and checked
// before it is replayed; Y is checked again after that replay. Nullopt when a GEMM refuses the launch before any
// kernel runs (its why_not_implementable), which is printed.
template <Model M, Phase P>
std::optional<Result> runConfiguration(const Options& options, const Variant& variant, GemmChoice gemms,
                                       AttentionBuffers& buffers, int multiprocessors,
                                       cublasLtHandle_t lt, void* workspace, std::size_t workspaceBytes,
                                       cudaStream_t stream, std::vector<Result>& results,
                                       CheckedInterleavedTimings* interleaved = nullptr) {
  const std::shared_ptr<AttentionChain<M, P>> chain =
      chainFor<M, P>(options, variant, gemms, buffers, multiprocessors, lt, workspace, workspaceBytes);
  Result result;
  try {
    result = interleaved != nullptr ? checkChain(*chain, buffers, options, stream)
                                    : checkThenTime(*chain, buffers, options, stream);
  } catch (const cusync::Error& error) {
    std::printf("%-28s refused: %s  [%s]\n", variant.name().c_str(), error.what(), chain->description().c_str());
    CUSYNC_CUDA_CHECK(cudaDeviceSynchronize());
    return std::nullopt;
  }
  result.variant = variant.name();
  result.configuration = chain->description();
  result.gemms = gemms;
  printResult(result, interleaved == nullptr);
  if (interleaved != nullptr)
    interleaved->add(results.size(), [&chain = *chain](cudaStream_t s) { chain.enqueue(s); },
                     checkOutputAfterReplay(buffers.y, buffers.yReference), chain);
  results.push_back(result);
  return result;
}

// A variant to run and its GEMM roles' candidates.
struct VariantCandidates {
  Variant variant;
  std::vector<RoleCandidate> qkv, out;
};

// `variant`'s candidates; nullopt when it is not selected, or (printed) when this phase skips it or a role has no
// candidate.
template <Phase P>
std::optional<VariantCandidates> candidatesOf(const Options& options, const Variant& variant, int multiprocessors) {
  if (!options.variants.empty() &&
      std::find(options.variants.begin(), options.variants.end(), variant.name()) == options.variants.end())
    return std::nullopt;
  if (P == Phase::Decode && variant.ordering == Ordering::StreamThenPdl) {
    // Built for prompt processing's one-wave QKV GEMM (session 19) and run on a GPU there only.
    std::printf("%-28s skipped: prompt processing only\n", variant.name().c_str());
    return std::nullopt;
  }
  VariantCandidates candidates{variant, roleCandidates(options, GemmRole::Qkv, variant.tPolicy, multiprocessors),
                               roleCandidates(options, GemmRole::Output, variant.tPolicy, multiprocessors)};
  if (candidates.qkv.empty() || candidates.out.empty()) {
    std::printf("%-28s skipped: no selected GEMM configuration fits on this device with a selected split kind\n",
                variant.name().c_str());
    return std::nullopt;
  }
  return candidates;
}

// Which QKV candidate the output GEMM's candidates run with: the fastest correct one that was timed, else the first
// (--check-only times nothing). `tried` holds a variant's QKV candidates' results in candidate order, null where a
// GEMM refused the launch.
std::size_t chosenQkvCandidate(const std::vector<const Result*>& tried) {
  std::size_t chosen = 0;
  double best = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < tried.size(); ++i)
    if (tried[i] != nullptr && tried[i]->correct() && tried[i]->microseconds > 0 && tried[i]->microseconds < best)
      best = tried[i]->microseconds, chosen = i;
  return chosen;
}

// Every selected variant; each synchronized or stream-ordered one searches the GEMM configurations: the QKV
// GEMM's candidates with the output GEMM at its baseline (its list's first), then the output GEMM's with the
// chosen QKV GEMM (chosenQkvCandidate). Every configuration is checked before it is timed (--check-only: checked
// only, and the search keeps the baseline). Returns one result per configuration run.
template <Model M, Phase P>
std::vector<Result> runVariants(const Options& options, AttentionBuffers& buffers, int multiprocessors,
                                cublasLtHandle_t lt, void* workspace, std::size_t workspaceBytes, cudaStream_t stream) {
  std::vector<Result> results;
  for (const Variant& selected : allVariants()) {
    const std::optional<VariantCandidates> candidates = candidatesOf<P>(options, selected, multiprocessors);
    if (!candidates) continue;
    const Variant& variant = candidates->variant;
    const std::vector<RoleCandidate>& qkv = candidates->qkv;
    const std::vector<RoleCandidate>& out = candidates->out;
    auto run = [&](const RoleCandidate& q, const RoleCandidate& o) {
      return runConfiguration<M, P>(options, variant,
                                    GemmChoice{q.gemm, o.gemm, q.split, o.split, q.staticUnits, o.staticUnits},
                                    buffers, multiprocessors, lt, workspace, workspaceBytes, stream, results);
    };
    if (variant.ordering == Ordering::CublasAttention) {  // cuBLASLt GEMMs: nothing to search
      run(qkv.front(), out.front());
      continue;
    }
    std::vector<std::optional<Result>> tried;
    for (const RoleCandidate& q : qkv) tried.push_back(run(q, out.front()));
    std::vector<const Result*> triedResults;
    for (const std::optional<Result>& r : tried) triedResults.push_back(r ? &*r : nullptr);
    const std::size_t chosen = chosenQkvCandidate(triedResults);
    for (std::size_t i = 1; i < out.size(); ++i) run(qkv[chosen], out[i]);
  }
  return results;
}

// Fills in the rows' times from an interleaved timing (each CheckedTiming's id is its row in `results`). A chain
// whose Y after its own graph's replay is wrong is marked wrong by that comparison, as checkThenTime does after a
// chain's timing alone.
void recordInterleavedTimings(const std::vector<CheckedTiming>& timings, std::vector<Result>& results) {
  for (const CheckedTiming& timing : timings) {
    Result& row = results[timing.id];
    row.microseconds = timing.timing.medianMicroseconds;
    if (timing.passed) continue;
    if (row.correct())
      std::printf("FAILED after timing: %s: Y error %.2e, %llu non-finite  [%s]\n", row.variant.c_str(),
                  timing.after.relativeError, timing.after.nonFinite, row.configuration.c_str());
    row.output = timing.after;
  }
}

// runVariants' search under --interleave (not with --check-only, which times nothing): every configuration is
// checked as it is made, as there, but timed only together with the problem's other configurations
// (CheckedInterleavedTimings), which keeps their chains until the end. First every variant's QKV candidates (the output
// GEMM at its baseline) are made and checked; where a variant's QKV GEMM choice decides which output candidates
// follow, these are timed together to choose it; then each variant's output candidates are made and checked with
// its chosen QKV GEMM (in token generation: with every variant's chosen QKV GEMM, so that the variants' bests can be
// compared on the same GEMMs); then every chain of the problem is timed together once more, and those times are
// recorded.
template <Model M, Phase P>
std::vector<Result> runVariantsInterleaved(const Options& options, AttentionBuffers& buffers, int multiprocessors,
                                           cublasLtHandle_t lt, void* workspace, std::size_t workspaceBytes,
                                           cudaStream_t stream) {
  std::vector<Result> results;
  CheckedInterleavedTimings timer(stream, options.repetitions, kRelativeErrorBound);
  auto timeAll = [&](const char* purpose) {
    std::printf("timing %zu chains together (%s): %d ms of warm-up over all, then %d interleaved rounds\n",
                timer.size(), purpose, options.warmupMilliseconds, options.samples);
    recordInterleavedTimings(timer.timeAndCheck(options.warmupMilliseconds, options.samples), results);
  };
  // The row in `results` of each configuration run; nullopt where a GEMM refused it.
  auto run = [&](const VariantCandidates& c, const RoleCandidate& q, const RoleCandidate& o) {
    const std::optional<Result> result =
        runConfiguration<M, P>(options, c.variant, GemmChoice{q.gemm, o.gemm, q.split, o.split, q.staticUnits,
                                                              o.staticUnits},
                               buffers, multiprocessors, lt, workspace, workspaceBytes, stream, results, &timer);
    return result ? std::optional<std::size_t>(results.size() - 1) : std::nullopt;
  };
  struct QkvSearch {
    VariantCandidates candidates;
    std::vector<std::optional<std::size_t>> rows;  // per QKV candidate, with the output GEMM at its baseline
  };
  std::vector<QkvSearch> searches;
  bool choiceNeedsTimes = false;
  for (const Variant& selected : allVariants()) {
    std::optional<VariantCandidates> candidates = candidatesOf<P>(options, selected, multiprocessors);
    if (!candidates) continue;
    QkvSearch search{std::move(*candidates), {}};
    const VariantCandidates& c = search.candidates;
    if (c.variant.ordering == Ordering::CublasAttention) {  // cuBLASLt GEMMs: nothing to search
      run(c, c.qkv.front(), c.out.front());
      continue;
    }
    for (const RoleCandidate& q : c.qkv) search.rows.push_back(run(c, q, c.out.front()));
    choiceNeedsTimes = choiceNeedsTimes || (c.qkv.size() > 1 && c.out.size() > 1);
    searches.push_back(std::move(search));
  }
  if (choiceNeedsTimes) timeAll("to choose each variant's QKV GEMM");
  // In token generation each variant's output candidates run with every QKV candidate that some variant chose, not
  // only with its own choice: one timing round decides each choice, candidates within a few percent of each other
  // come out differently per variant, and the variants' bests would then compare different GEMMs (session 32: PDL
  // grid sync's best and the tile-synchronized variants' had different QKV stages at 3 of 4 decode shapes; on the
  // same GEMMs they were level). Candidates match by GEMM name, split and unit schedule. Prompt processing keeps each
  // variant's own choice: its chains are 10-50x longer, and the extra runs would multiply a search that
  // device_attention.sh bounds at 180 s per shape.
  // A variant's own QKV choice (an index into its candidates), from its timed rows.
  const auto ownChoice = [&](const QkvSearch& search) {
    std::vector<const Result*> tried;
    for (const std::optional<std::size_t>& row : search.rows) tried.push_back(row ? &results[*row] : nullptr);
    return chosenQkvCandidate(tried);
  };
  const auto sameCandidate = [](const RoleCandidate& a, const RoleCandidate& b) {
    return a.gemm->name == b.gemm->name && a.split == b.split && a.staticUnits == b.staticUnits;
  };
  std::vector<RoleCandidate> chosenQkvs;
  for (const QkvSearch& search : searches) {
    const RoleCandidate& chosen = search.candidates.qkv[ownChoice(search)];
    const auto isChosen = [&](const RoleCandidate& k) { return sameCandidate(k, chosen); };
    if (std::none_of(chosenQkvs.begin(), chosenQkvs.end(), isChosen)) chosenQkvs.push_back(chosen);
  }
  for (const QkvSearch& search : searches) {
    const VariantCandidates& c = search.candidates;
    const std::size_t own = ownChoice(search);
    for (std::size_t j = 0; j < c.qkv.size(); ++j) {
      const auto isQ = [&](const RoleCandidate& k) { return sameCandidate(k, c.qkv[j]); };
      const bool runs = j == own || (P == Phase::Decode && std::any_of(chosenQkvs.begin(), chosenQkvs.end(), isQ));
      if (!runs) continue;
      for (std::size_t i = 1; i < c.out.size(); ++i) run(c, c.qkv[j], c.out[i]);
    }
  }
  if (timer.size() == 0) return results;
  timeAll("the times recorded");
  for (const Result& r : results) printResult(r, true);
  return results;
}

// The fastest configuration of each variant, in the order the variants first ran; a variant with a configuration
// that failed its check is represented by that failure.
std::vector<Result> bestPerVariant(const std::vector<Result>& results) {
  std::vector<Result> best;
  for (const Result& r : results) {
    auto same = std::find_if(best.begin(), best.end(), [&](const Result& b) { return b.variant == r.variant; });
    if (same == best.end()) best.push_back(r);
    else if (!same->correct()) continue;  // a failure anywhere is what the variant's row shows
    else if (!r.correct() || r.microseconds < same->microseconds) *same = r;
  }
  return best;
}

// Where the stream-ordered chain's time goes: each stage of StreamSync's fastest configuration and of cuBLAS+attn
// timed alone (CUDA graphs, as the chains), printed beside the chains. The stages read what the chain left in the
// buffers, so the inputs are the checked ones.
template <Model M, Phase P>
void printStageTimes(const Options& options, const std::vector<Result>& best, AttentionBuffers& buffers,
                     int multiprocessors, cublasLtHandle_t lt, void* workspace, std::size_t workspaceBytes,
                     cudaStream_t stream) {
  for (const Result& r : best) {
    if ((r.variant != "StreamSync" && r.variant != "cuBLAS+attn") || !r.correct() || r.microseconds <= 0) continue;
    const Variant variant = r.variant == "StreamSync" ? Variant{Ordering::StreamSync, TPolicyKind::TileSync}
                                                      : Variant{Ordering::CublasAttention, TPolicyKind::TileSync};
    const std::shared_ptr<AttentionChain<M, P>> chain =
        chainFor<M, P>(options, variant, r.gemms, buffers, multiprocessors, lt, workspace, workspaceBytes);
    chain->enqueue(stream);
    std::printf("stages alone, %-12s", r.variant.c_str());
    double sum = 0;
    for (int i = 0; i < AttentionChain<M, P>::kStageCount; ++i) {
      const double us = timeWithGraph([&](cudaStream_t s) { chain->enqueueStage(i, s); }, stream,
                                      options.repetitions, 3, options.samples)
                            .medianMicroseconds;
      sum += us;
      std::printf(" %s %7.1f us", AttentionChain<M, P>::stageName(i), us);
    }
    std::printf("  sum %7.1f us, chain %7.1f us  [%s]\n", sum, r.microseconds, r.configuration.c_str());
  }
}

// Each variant's fastest chain (not cuBLAS+attn, whose GEMMs record nothing) run once more with a block trace
// (block_trace.h), after a few untraced runs; the records go to `path` as CSV (us since the chain's first block) and
// each stage's span is printed: on how many SMs its blocks ran, when they started (first, median, last), their
// median wait for producer tiles (the one-tile CUTLASS GEMMs: their median time to their last MMA), and when they
// finished (first, last). Stages whose kernels record nothing (the persistent CUTLASS GEMMs, the mma.sync prompt
// attention kernel) are left out.
template <Model M, Phase P>
void traceBestChains(const Options& options, const std::vector<Result>& best, AttentionBuffers& buffers,
                     int multiprocessors, cublasLtHandle_t lt, void* workspace, std::size_t workspaceBytes,
                     cudaStream_t stream) {
  std::FILE* file = std::fopen(options.tracePath.c_str(), "w");
  if (!file) {
    std::fprintf(stderr, "attention_example: cannot write %s\n", options.tracePath.c_str());
    return;
  }
  std::fprintf(file, "variant,configuration,stage,block,sm,tile_x,tile_y,part,start_us,waited_us,done_us\n");
  for (const Result& r : best) {
    if (r.variant == "cuBLAS+attn" || !r.correct()) continue;
    Variant variant{};
    for (const Variant& v : allVariants())
      if (v.name() == r.variant) variant = v;
    const std::shared_ptr<AttentionChain<M, P>> chain =
        chainFor<M, P>(options, variant, r.gemms, buffers, multiprocessors, lt, workspace, workspaceBytes);
    DeviceBuffer<BlockTrace> trace(chain->blocksPerLaunch());
    for (int i = 0; i < 3; ++i) chain->enqueue(stream);
    CUSYNC_CUDA_CHECK(cudaMemsetAsync(trace.get(), 0, trace.bytes(), stream));
    chain->setTrace(trace.get());
    chain->enqueue(stream);
    CUSYNC_CUDA_CHECK(cudaStreamSynchronize(stream));
    std::vector<BlockTrace> records(trace.size());
    CUSYNC_CUDA_CHECK(cudaMemcpy(records.data(), trace.get(), trace.bytes(), cudaMemcpyDeviceToHost));
    std::uint64_t origin = UINT64_MAX;
    for (const BlockTrace& t : records)
      if (t.start != 0) origin = std::min(origin, t.start);
    std::printf("trace %-26s [%s]\n", r.variant.c_str(), r.configuration.c_str());
    for (std::uint32_t stage = 0; stage < 3; ++stage) {
      std::vector<double> starts, waits, dones;
      std::map<std::uint32_t, int> blocksOnSm;  // where the stage ran: co-residence decides it (decode_carveout.h)
      for (const BlockTrace& t : records) {
        if (t.start == 0 || t.stage != stage) continue;
        ++blocksOnSm[t.sm];
        starts.push_back((t.start - origin) / 1000.0);
        waits.push_back((t.waited - t.start) / 1000.0);
        dones.push_back((t.done - origin) / 1000.0);
        std::fprintf(file, "%s,%s,%s,%u,%u,%u,%u,%u,%.3f,%.3f,%.3f\n", r.variant.c_str(), r.configuration.c_str(),
                     AttentionChain<M, P>::stageName(int(stage)), t.block, t.sm, t.tileX, t.tileY, t.part,
                     (t.start - origin) / 1000.0, (t.waited - origin) / 1000.0, (t.done - origin) / 1000.0);
      }
      if (starts.empty()) continue;
      std::sort(starts.begin(), starts.end());
      std::sort(waits.begin(), waits.end());
      std::sort(dones.begin(), dones.end());
      int mostOnOneSm = 0;
      for (const auto& [sm, blocks] : blocksOnSm) mostOnOneSm = std::max(mostOnOneSm, blocks);
      std::printf("  %-4s %4zu blocks on %3zu SMs (at most %d on one): start %6.1f / %6.1f / %6.1f us (first / median "
                  "/ last), wait %5.1f us (median), done %6.1f .. %6.1f us\n",
                  AttentionChain<M, P>::stageName(int(stage)), starts.size(), blocksOnSm.size(), mostOnOneSm,
                  starts.front(), starts[starts.size() / 2], starts.back(), waits[waits.size() / 2], dones.front(),
                  dones.back());
    }
  }
  std::fclose(file);
}

void writeCsv(const std::string& path, const Options& options, const std::vector<Result>& results,
              double streamSyncMicroseconds) {
  std::FILE* file = std::fopen(path.c_str(), "w");
  if (!file) {
    std::fprintf(stderr, "attention_example: cannot write %s\n", path.c_str());
    return;
  }
  const AttentionProblem& p = options.problem;
  std::fprintf(file, "model,phase,batch,seq,cache,tokens,variant,configuration,us,speedup_vs_streamsync,"
                     "relative_error,t_relative_error,cache_relative_error,nonfinite,correct,attention_kernel\n");
  for (const Result& r : results)
    std::fprintf(file, "%s,%s,%d,%d,%d,%d,%s,%s,%.3f,%.4f,%.3e,%.3e,%.3e,%llu,%d,%s\n", p.shape.name, p.phaseName(),
                 p.batch, p.sequence, p.cached, p.tokens(), r.variant.c_str(), r.configuration.c_str(),
                 r.microseconds,
                 r.microseconds > 0 && streamSyncMicroseconds > 0 ? streamSyncMicroseconds / r.microseconds : 0.0,
                 r.output.relativeError, r.attention.relativeError, r.cache.relativeError,
                 r.output.nonFinite + r.attention.nonFinite + r.cache.nonFinite,
                 r.correct() ? 1 : 0,
                 p.phase == Phase::Prompt ? promptAttentionKernelName(options.attentionKernel) : "decode");
  std::fclose(file);
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IONBF, 0);
  const Options options = parseOptions(argc, argv);  // before any CUDA call: a bad command line is exit 2
  const AttentionProblem& p = options.problem;
  setUniformSharedCarveout(*options.carveoutPercent);  // every stage kernel launched from here on
  if (missingCudaDevice(stderr, "attention_example: no CUDA device")) return kNoCudaDevice;
  cudaDeviceProp properties{};
  CUSYNC_CUDA_CHECK(cudaGetDeviceProperties(&properties, 0));
  std::printf("device: %s, %d SMs; %s %s: B = %d, S = %d, S' = %d (%d tokens, %d heads of 128); seed %llu\n",
              properties.name, properties.multiProcessorCount, p.shape.name, p.phaseName(), p.batch, p.sequence,
              p.cached, p.tokens(), p.shape.heads, static_cast<unsigned long long>(options.seed));

  cudaStream_t stream;
  // A blocking stream (and the chains' side streams too): the helpers that fill and compare buffers run on the
  // legacy default stream.
  CUSYNC_CUDA_CHECK(cudaStreamCreate(&stream));
  cublasLtHandle_t lt;
  checkCublas(cublasLtCreate(&lt), "create");
  const std::size_t workspaceBytes = 64ull << 20;
  DeviceBuffer<char> workspace(workspaceBytes);

  AttentionBuffers buffers(p);
  prepareAttentionReference(buffers, p, options.seed, lt, workspace.get(), workspaceBytes, stream);

  const int sms = properties.multiProcessorCount;
  // The chain's types follow the model and phase: `run` is called with them as integral constants.
  auto withChainTypes = [&](auto&& run) {
    using Gpt3 = std::integral_constant<Model, Model::Gpt3>;
    using Llama = std::integral_constant<Model, Model::Llama>;
    using Decode = std::integral_constant<Phase, Phase::Decode>;
    using Prompt = std::integral_constant<Phase, Phase::Prompt>;
    if (p.shape.model == Model::Gpt3) return p.phase == Phase::Decode ? run(Gpt3{}, Decode{}) : run(Gpt3{}, Prompt{});
    return p.phase == Phase::Decode ? run(Llama{}, Decode{}) : run(Llama{}, Prompt{});
  };
  const std::vector<Result> results = withChainTypes([&](auto model, auto phase) {
    constexpr Model M = decltype(model)::value;
    constexpr Phase P = decltype(phase)::value;
    if (options.interleave && !options.checkOnly)
      return runVariantsInterleaved<M, P>(options, buffers, sms, lt, workspace.get(), workspaceBytes, stream);
    return runVariants<M, P>(options, buffers, sms, lt, workspace.get(), workspaceBytes, stream);
  });
  const std::vector<Result> best = bestPerVariant(results);
  if (!options.checkOnly)
    withChainTypes([&](auto model, auto phase) {
      printStageTimes<decltype(model)::value, decltype(phase)::value>(options, best, buffers, sms, lt,
                                                                      workspace.get(), workspaceBytes, stream);
    });
  if (!options.tracePath.empty())
    withChainTypes([&](auto model, auto phase) {
      traceBestChains<decltype(model)::value, decltype(phase)::value>(options, best, buffers, sms, lt,
                                                                      workspace.get(), workspaceBytes, stream);
    });
  double streamSync = 0;
  for (const Result& r : best)
    if (r.variant == "StreamSync") streamSync = r.microseconds;
  writeCsv(options.csvPath, options, results, streamSync);

  bool allCorrect = !results.empty();
  for (const Result& r : results) allCorrect = allCorrect && r.correct();
  std::printf("\n%s %s B=%d S=%d S'=%d: each variant's best of %zu configurations run\n%-28s %10s %14s %10s %11s "
              "%-6s %s\n",
              p.shape.name, p.phaseName(), p.batch, p.sequence, p.cached, results.size(), "variant", "us",
              "vs StreamSync", "Y error", "cache error", "check", "configuration");
  for (const Result& r : best) {
    char speedup[32] = "-";
    if (r.microseconds > 0 && streamSync > 0) std::snprintf(speedup, sizeof(speedup), "%.3fx", streamSync / r.microseconds);
    std::printf("%-28s %10.1f %14s %10.2e %11.2e %-6s %s\n", r.variant.c_str(), r.microseconds, speedup,
                r.output.relativeError, r.cache.relativeError, r.correct() ? "ok" : "FAILED", r.configuration.c_str());
  }
  std::printf("all variants checked against the fp32 reference (bound %.0e): %s; CSV: %s\n", kRelativeErrorBound,
              allCorrect ? "all correct" : "FAILURES", options.csvPath.c_str());
  cublasLtDestroy(lt);
  return allCorrect ? 0 : 1;
}
