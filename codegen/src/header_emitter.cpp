#include <cusync/codegen/affine_form.h>
#include <cusync/codegen/header_emitter.h>
#include <cusync/dsl/cpp_names.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <sstream>

namespace cusync::codegen {
namespace {

const char* kHostDevice = "CUSYNC_HOST_DEVICE static constexpr";

std::string upper(std::string text) {
  for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

std::string location(const spec::SourceLocation& where, const std::string& sourceFile) {
  // The spec file as the command line named it (relative paths keep headers identical across checkouts).
  std::string file = sourceFile.empty() ? where.file : sourceFile;
  if (file.empty() || where.line == 0) return "";
  return " (" + file + ":" + std::to_string(where.line) + ":" + std::to_string(where.column) + ")";
}

// Comment lines of at most ~116 columns, each prefixed with `indent// `.
void comment(std::ostringstream& out, const std::string& text, const std::string& indent = "") {
  std::istringstream words(text);
  std::string word, line;
  auto flush = [&] {
    if (!line.empty()) out << indent << "// " << line << "\n";
    line.clear();
  };
  while (words >> word) {
    if (!line.empty() && line.size() + 1 + word.size() > 112 - indent.size()) flush();
    line += (line.empty() ? "" : " ") + word;
  }
  flush();
}

const spec::Dependency* findDependency(const spec::Spec& spec, const std::string& name) {
  for (const spec::Dependency& dependency : spec.dependencies)
    if (dependency.name == name) return &dependency;
  return nullptr;
}

std::string proofSentence(const Proof& proof) {
  std::string sentence = "Proven with isl " +
                         std::string(proof.scope == ProofScope::AllParameterValues ? "symbolically" : "concretely") +
                         ": " + proof.statement + ".";
  if (!proof.scopeNote.empty()) sentence += " Scope: " + proof.scopeNote + ".";
  return sentence;
}

void emitParameters(std::ostringstream& out, const Generation& generation) {
  out << "// Spec parameters. Concrete ones are constants; symbolic ones are not: everything that depends on them "
         "is\n// computed from the GridShape argument at run time.\n";
  out << "namespace parameters {\n";
  for (const spec::Parameter& parameter : generation.spec.parameters) {
    auto it = generation.parameterValues.find(parameter.name);
    std::int64_t value = it == generation.parameterValues.end() ? parameter.defaultValue : it->second;
    bool symbolic = std::find(generation.symbolicParameters.begin(), generation.symbolicParameters.end(),
                              parameter.name) != generation.symbolicParameters.end();
    if (symbolic)
      out << "// " << parameter.name << ": symbolic (example value " << value << ")\n";
    else
      // INT64_MIN has no literal: -9223372036854775808 is the negation of a literal that does not fit.
      out << "inline constexpr std::int64_t " << parameter.name << " = "
          << (value == std::numeric_limits<std::int64_t>::min() ? "-9223372036854775807 - 1" : std::to_string(value))
          << ";\n";
  }
  out << "}  // namespace parameters\n\n";
}

bool mentions(const IndexExpression& e, IndexExpression::Kind kind) {
  if (e.kind == kind) return true;
  for (const IndexExpression& operand : e.operands)
    if (mentions(operand, kind)) return true;
  return false;
}

// `static constexpr std::uint32_t NAME(TileCoord tile, GridShape grid)`, leaving unused parameters unnamed.
void emitFunction(std::ostringstream& out, const std::string& name, const IndexExpression& body, bool takesTile) {
  std::string tile = mentions(body, IndexExpression::Kind::Coordinate) ? "TileCoord tile" : "TileCoord";
  std::string grid = mentions(body, IndexExpression::Kind::Extent) ? "GridShape grid" : "GridShape";
  out << "  " << kHostDevice << " std::uint32_t " << name << "(" << (takesTile ? tile + ", " : "") << grid
      << ") {\n    return " << toCpp(body, "tile", "grid") << ";\n  }\n";
}

void emitPolicy(std::ostringstream& out, const PolicyResult& policy, const Generation& generation,
                const std::string& sourceFile) {
  const PolicyCandidate& c = policy.candidate;
  const spec::Dependency* dependency = findDependency(generation.spec, c.dependency);
  comment(out, "Dependency `" + c.dependency + "`" + (dependency ? location(dependency->location, sourceFile) : "") +
                   ": a " + c.consumerGrid + " tile waits for the " + c.producerGrid + " tiles it reads. " +
                   c.policy + ":");
  for (const std::string& line : c.rationale) comment(out, "  - " + line);
  if (!policy.proof.exact)
    comment(out, "Over-approximates: consumers may wait for producer tiles they do not read, e.g. " +
                     policy.proof.overApproximation + ".");
  comment(out, proofSentence(policy.proof));
  const PolicyFunctions& f = policy.functions;
  out << "struct " << c.structName() << " {\n";
  out << "  static constexpr const char* name = \"" << c.structName() << "\";\n";
  emitFunction(out, "semaphoreCount", f.semaphoreCount, false);
  emitFunction(out, "sem", f.semaphore, true);
  emitFunction(out, "value", f.value, true);
  out << "  // The tile's position among the tiles of its semaphore: the prover's witness, the grouped order's key.\n";
  emitFunction(out, "rankInSemaphore", f.rankInSemaphore, true);
  out << "};\n\n";
}

void emitProducerPolicy(std::ostringstream& out, const ProducerPolicyResult& policy, const Generation& generation,
                        const std::string& sourceFile) {
  std::string readers;
  for (const ProducerReader& reader : policy.readers) {
    const spec::Dependency* dependency = findDependency(generation.spec, reader.dependency);
    readers += (readers.empty() ? "" : ", ") + std::string("`") + reader.dependency + "`" +
               (dependency ? location(dependency->location, sourceFile) : "") + " (a " + reader.consumerGrid +
               " tile waits for the " + policy.producerGrid + " tiles it reads)";
  }
  comment(out, policy.producerGrid + " is read by " + std::to_string(policy.readers.size()) + " dependencies: " +
                   readers + ". A stage posts under one policy, so every consumer of " + policy.producerGrid +
                   " waits through this one. " + policy.policy + ":");
  for (const std::string& line : policy.rationale) comment(out, "  - " + line);
  if (!policy.proof.exact)
    comment(out, "Over-approximates: consumers may wait for producer tiles they do not read, e.g. " +
                     policy.proof.overApproximation + ".");
  comment(out, proofSentence(policy.proof));
  const PolicyFunctions& f = policy.functions;
  out << "struct " << policy.structName() << " {\n";
  out << "  static constexpr const char* name = \"" << policy.structName() << "\";\n";
  emitFunction(out, "semaphoreCount", f.semaphoreCount, false);
  emitFunction(out, "sem", f.semaphore, true);
  emitFunction(out, "value", f.value, true);
  out << "  // The tile's position among the tiles of its semaphore: the prover's witness, the grouped order's key.\n";
  emitFunction(out, "rankInSemaphore", f.rankInSemaphore, true);
  out << "};\n\n";
}

void emitOrder(std::ostringstream& out, const TileOrderResult& order) {
  const TileOrderCandidate& o = order.order;
  comment(out, "Tile order of " + o.grid + ": " + o.description + ".");
  comment(out, proofSentence(order.proof));
  out << "struct " << o.structName() << " {\n";
  out << "  static constexpr const char* name = \"" << o.structName() << "\";\n";
  if (o.policyStruct.empty()) {
    emitFunction(out, "index", o.index, true);
  } else if (!o.consumerOrderStruct.empty()) {
    out << "  using Policy = " << o.policyStruct << ";\n";
    out << "  using ConsumerOrder = " << o.consumerOrderStruct << ";\n";
    out << "  " << kHostDevice << " std::uint32_t index(TileCoord tile, GridShape grid) {\n";
    out << "    // The consumer tile that waits on this tile's semaphore, in a grid of the semaphores' shape.\n";
    std::string coordinates, extents;
    for (int d = 0; d < 3; ++d) {
      coordinates += std::string(d ? ", " : "") + toCpp(o.semaphoreCoordinates[d], "tile", "grid");
      extents += std::string(d ? ", " : "") + toCpp(o.semaphoreExtents[d], "tile", "grid");
    }
    out << "    const TileCoord consumerTile{" << coordinates << "};\n";
    out << "    const GridShape consumerGrid{" << extents << "};\n";
    out << "    return ConsumerOrder::index(consumerTile, consumerGrid) * Policy::value(tile, grid) +\n"
        << "           Policy::rankInSemaphore(tile, grid);\n  }\n";
  } else {
    out << "  using Policy = " << o.policyStruct << ";\n";
    out << "  " << kHostDevice << " std::uint32_t index(TileCoord tile, GridShape grid) {\n"
        << "    return Policy::sem(tile, grid) * Policy::value(tile, grid) + Policy::rankInSemaphore(tile, grid);\n"
        << "  }\n";
  }
  out << "};\n\n";
}

void emitOptimizations(std::ostringstream& out, const StageOptimization& stage, const Generation& generation) {
  comment(out, "Paper section IV-C for dependency `" + stage.dependency + "` on " +
                   std::to_string(generation.optimizationOptions.smCount) + " SMs, occupancy " +
                   std::to_string(stage.occupancy) + ": W (no wait-kernel) needs the tiles of " + stage.consumerGrid +
                   " and every stage it waits on to fit in one wave of slots = SMs * occupancy, so all blocks are "
                   "resident at once; T (no custom tile order) needs " + stage.consumerGrid +
                   " and the stages it reads directly to fit in two waves.");
  std::string counts;
  for (const std::string& grid : stage.grids)
    counts += (counts.empty() ? "" : ", ") + grid + " " + std::to_string(stage.tileCounts.at(grid));
  comment(out, "At the given parameter values: " + counts + " tiles (W counts " + std::to_string(stage.totalTiles) +
                   ", T counts " + std::to_string(stage.directTiles) + ").");
  if (!stage.waitKernelAvoidableFor.empty())
    comment(out, "W holds for " + stage.waitKernelAvoidableFor + "; T holds for " + stage.customOrderAvoidableFor + ".");
  // Parameters are named after the grids, unless a grid's name is one of the struct's own members.
  auto parameterOf = [](const std::string& grid) {
    bool clashes = grid == "slots" || grid == "smCount" || grid == "occupancy" || grid == "GridShape" ||
                   grid == "TileCoord";
    return clashes ? grid + "Grid" : grid;
  };
  auto parametersAndSum = [&](const std::vector<std::string>& grids) {
    std::string parameters, sum;
    for (const std::string& grid : grids) {
      parameters += (parameters.empty() ? "" : ", ") + std::string("GridShape ") + parameterOf(grid);
      // In 64 bits: each count fits 32 bits (the model checks it), their sum over a chain need not.
      sum += (sum.empty() ? "std::uint64_t{" + parameterOf(grid) + ".tileCount()}" : " + " + parameterOf(grid) + ".tileCount()");
    }
    return std::make_pair(parameters, sum);
  };
  auto [waitParameters, waitSum] = parametersAndSum(stage.grids);
  auto [orderParameters, orderSum] = parametersAndSum(stage.directGrids);
  out << "struct Optimizations_" << stage.dependency << " {\n";
  out << "  static constexpr std::uint32_t smCount = " << generation.optimizationOptions.smCount << ";\n";
  out << "  static constexpr std::uint32_t occupancy = " << stage.occupancy << ";\n";
  out << "  static constexpr std::uint64_t slots = std::uint64_t{smCount} * occupancy;\n";
  // Long parameter lists (chains) go on their own line, to stay within the line length.
  auto signature = [&](const std::string& name, const std::string& parameters) {
    std::string line = "  " + std::string(kHostDevice) + " bool " + name + "(" + parameters + ") {";
    if (line.size() <= 118) return line;
    return "  " + std::string(kHostDevice) + " bool " + name + "(\n      " + parameters + ") {";
  };
  out << signature("canAvoidWaitKernel", waitParameters) << "\n    return " << waitSum << " <= slots;\n  }\n";
  out << signature("canAvoidCustomOrder", orderParameters) << "\n    return " << orderSum
      << " <= 2 * slots;\n  }\n";
  out << "  static constexpr bool avoidWaitKernel = " << (stage.avoidWaitKernel ? "true" : "false")
      << ";  // at the given parameter values\n";
  out << "  static constexpr bool avoidCustomOrder = " << (stage.avoidCustomOrder ? "true" : "false") << ";\n";
  out << "};\n\n";
}

void emitLists(std::ostringstream& out, const Generation& generation, const std::string& ns) {
  std::string stem = "CUSYNC_" + upper(specIdentifier(generation.specName));
  out << "// Every policy above as X(type, dependency, producer grid, consumer grid), and every tile order as\n"
         "// X(type, grid): for host-side checks and for benchmarks that try each policy.\n";
  out << "#define " << stem << "_POLICIES(X)";
  for (const PolicyResult* policy : generation.emittedPolicies())
    out << " \\\n  X(" << ns << "::" << policy->candidate.structName() << ", \"" << policy->candidate.dependency
        << "\", \"" << policy->candidate.producerGrid << "\", \"" << policy->candidate.consumerGrid << "\")";
  out << "\n";
  out << "// Every producer policy as X(type, producer grid, \"dependencies it serves\"), space-separated.\n";
  out << "#define " << stem << "_PRODUCER_POLICIES(X)";
  for (const ProducerPolicyResult* policy : generation.emittedProducerPolicies())
    out << " \\\n  X(" << ns << "::" << policy->structName() << ", \"" << policy->producerGrid << "\", \""
        << policy->dependencyList() << "\")";
  out << "\n";
  out << "#define " << stem << "_TILE_ORDERS(X)";
  for (const TileOrderResult* order : generation.emittedOrders())
    out << " \\\n  X(" << ns << "::" << order->order.structName() << ", \"" << order->order.grid << "\")";
  out << "\n\n";
}

void emitRejected(std::ostringstream& out, const Generation& generation) {
  std::vector<std::string> lines;
  for (const PolicyResult& policy : generation.policies)
    if (!policy.proof.proven)
      lines.push_back(policy.candidate.structName() + ": " + policy.proof.failure +
                      (policy.proof.counterexample.empty() ? "" : "; counterexample " + policy.proof.counterexample));
  for (const ProducerPolicyResult& policy : generation.producerPolicies)
    if (!policy.proof.proven)
      lines.push_back(policy.structName() + ": " + policy.proof.failure +
                      (policy.proof.counterexample.empty() ? "" : "; counterexample " + policy.proof.counterexample));
  for (const DroppedCandidate& dropped : generation.dropped)
    lines.push_back("dependency " + dropped.dependency + ", producer " + dropped.producerGrid + ", " +
                    dropped.description + ": " + dropped.reason);
  for (const TileOrderResult& order : generation.orders) {
    if (!order.proof.proven)
      lines.push_back(order.order.structName() + ": " + order.proof.failure);
    else if (!order.sameAs.empty())
      lines.push_back(order.order.structName() + ": equal to " + order.sameAs + " on every tile (not repeated)");
  }
  if (lines.empty()) {
    out << "// Not emitted: none (every candidate was proven and distinct).\n";
    return;
  }
  out << "// Not emitted:\n";
  for (const std::string& line : lines) comment(out, "  - " + line);
}

}  // namespace

namespace {

// The spec name with every character outside [A-Za-z0-9_] replaced by '_' (and '_' before a leading digit).
std::string sanitized(const std::string& specName) {
  std::string id = specName.empty() ? "spec" : specName;
  for (char& c : id)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
  if (std::isdigit(static_cast<unsigned char>(id.front()))) id = "_" + id;
  return id;
}

}  // namespace

std::string specIdentifier(const std::string& specName) {
  std::string id = sanitized(specName);
  // A spec file class.dep names namespace cusync::generated::class_: a keyword cannot name a namespace.
  if (dsl::isCppKeyword(id)) id += "_";
  return id;
}

// The file keeps the spec's stem (class.dep -> class.h), which is what cusync_generate_policies expects.
std::string headerFileName(const Generation& generation) { return sanitized(generation.specName) + ".h"; }

std::string emitHeader(const Generation& generation, const std::string& sourceFile) {
  std::ostringstream out;
  std::string id = specIdentifier(generation.specName);
  std::string ns = "cusync::generated::" + id;
  comment(out, "Generated by cusyncgen from spec `" + generation.specName + "`" +
                   (sourceFile.empty() ? "" : " (" + sourceFile + ")") + ". Do not edit: regenerate.");
  out << "//\n";
  comment(out, "Synchronization policies and tile orders for the spec's dependencies. Each was proven with isl "
               "before being emitted (the statement is above each struct); candidates that failed are listed at "
               "the end. Serves nvcc and host compilers alike.");
  out << "#pragma once\n\n#include \"cusync/tile.h\"\n\n#include <cstdint>\n\n";
  out << "namespace " << ns << " {\n\n";
  emitParameters(out, generation);
  out << "// ---- Policies -------------------------------------------------------------------------------------\n\n";
  for (const PolicyResult* policy : generation.emittedPolicies()) emitPolicy(out, *policy, generation, sourceFile);
  if (!generation.emittedProducerPolicies().empty()) {
    out << "// ---- Producer policies: one per producer read by several dependencies ----------------------------\n\n";
    for (const ProducerPolicyResult* policy : generation.emittedProducerPolicies())
      emitProducerPolicy(out, *policy, generation, sourceFile);
  }
  out << "// ---- Tile orders ----------------------------------------------------------------------------------\n\n";
  for (const TileOrderResult* order : generation.emittedOrders()) emitOrder(out, *order);
  out << "// ---- Optimizations (wait-kernel, custom tile order) -----------------------------------------------\n\n";
  for (const StageOptimization& stage : generation.optimizations) emitOptimizations(out, stage, generation);
  out << "}  // namespace " << ns << "\n\n";
  emitLists(out, generation, ns);
  emitRejected(out, generation);
  return out.str();
}

}  // namespace cusync::codegen
