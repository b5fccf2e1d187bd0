#include <cusync/codegen/affine_form.h>
#include <cusync/codegen/policy_candidate.h>

#include <isl/map.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

namespace cusync::codegen {
namespace {

const char* kAxisNames[] = {"x", "y", "z"};

// Pairs of producer tiles of the grid that differ only along `dimension` (the "line" through a tile).
isl::map sameLineExcept(const isl::set& domain, int dimension) {
  isl_map* pairs = isl_map_from_domain_and_range(domain.copy(), domain.copy());
  int rank = static_cast<int>(isl_set_dim(domain.get(), isl_dim_set));
  for (int i = 0; i < rank; ++i)
    if (i != dimension) pairs = isl_map_equate(pairs, isl_dim_in, i, isl_dim_out, i);
  return isl::manage(pairs);
}

// The relation restricted to admissible parameters and to producer tiles inside the producer grid.
isl::map readRelation(const analysis::IslModel& model, const isl::map& relation, const std::string& producerGrid) {
  return relation.intersect_range(model.grid(producerGrid).domain).intersect_params(model.context());
}

struct DimensionFacts {
  bool whole = false;                  // every consumer reads the whole line along this dimension
  std::set<std::int64_t> strides;      // Strided(S) groupings the tile offsets suggest
  std::set<std::int64_t> blocks;       // Block(N) groupings
  std::map<std::int64_t, std::string> stepSources;
  std::vector<std::string> rationale;  // one line per grouping found
};

std::string axisOf(const spec::Grid& grid, int dimension) {
  return dimension < static_cast<int>(grid.dimensions.size()) ? grid.dimensions[dimension] : kAxisNames[dimension];
}

// Whether every consumer reads, with any producer tile, every tile on the same line along `dimension` — found
// with isl, so it holds for all admissible parameter values, however the spec wrote the range.
bool readsWholeLines(const isl::map& relation, const isl::set& producerDomain, int dimension) {
  isl::map line = sameLineExcept(producerDomain, dimension);
  isl::map others = line.subtract(producerDomain.identity());
  if (others.is_empty()) return false;  // the line has one tile: nothing to group
  if (relation.is_empty()) return false;
  return relation.apply_range(line).is_subset(relation);
}

struct Offsets {
  std::map<std::int64_t, std::string> values;  // offset value -> source text
  bool symbolic = false;
};

// Groups the producer coordinates along `dimension` of all tile sets by their variable part; tiles of one group
// differ by constant offsets (x and x + H/(8*TileN)), which is what a Strided or Block grouping merges.
void collectSyntacticGroupings(const spec::ProducerTiles& producer, int dimension, const ExpressionContext& context,
                               const spec::Grid& producerGrid, DimensionFacts& facts, bool& scaledRelation,
                               std::vector<DroppedCandidate>& dropped, const std::string& dependency) {
  std::map<std::map<std::string, std::int64_t>, Offsets> groups;
  for (const spec::TileSet& tiles : producer.tiles) {
    if (dimension >= static_cast<int>(tiles.tile.coordinates.size())) continue;
    auto form = affineForm(tiles.tile.coordinates[dimension], context);
    if (!form) continue;
    std::set<std::string> ranged;
    for (const auto& range : tiles.ranges) ranged.insert(range.dimension);
    int rangedCount = 0;
    for (const auto& [variable, coefficient] : form->coefficients) {
      if (ranged.count(variable)) {
        ++rangedCount;
        continue;
      }
      if (coefficient != 1) scaledRelation = true;
    }
    if (rangedCount == 0) {
      Offsets& offsets = groups[form->coefficients];
      offsets.values.emplace(form->offset, form->offsetSource);
      offsets.symbolic = offsets.symbolic || form->offsetIsSymbolic;
      // x*s: consecutive consumer tiles read producer tiles s apart; the s tiles of a block are read by one
      // consumer only if the spec lists them, so a scaled coordinate alone suggests no grouping.
      continue;
    }
    if (rangedCount != 1) continue;
    for (const auto& range : tiles.ranges) {
      auto it = form->coefficients.find(range.dimension);
      if (it == form->coefficients.end() || it->second != 1) continue;
      auto lower = evaluate(range.range.lower, context), upper = evaluate(range.range.upper, context);
      if (!lower || !upper) continue;
      bool symbolicLength = involvesSymbolicParameter(range.range.lower, context) ||
                            involvesSymbolicParameter(range.range.upper, context);
      std::int64_t length = *upper - *lower;
      if (length <= 1) continue;
      if (symbolicLength) {
        if (!facts.whole)
          dropped.push_back({dependency, producer.grid,
                             "Block grouping along " + axisOf(producerGrid, dimension),
                             "the range length " + toSourceText(range.range.upper) + " - " +
                                 toSourceText(range.range.lower) +
                                 " depends on a symbolic parameter, so it cannot be a constant block length"});
        continue;
      }
      if (facts.whole) continue;
      if (facts.blocks.insert(length).second) {
        facts.stepSources[length] = toSourceText(range.range.upper) + " - " + toSourceText(range.range.lower);
        facts.rationale.push_back(axisOf(producerGrid, dimension) + ": a consumer tile reads " +
                                  std::to_string(length) + " consecutive tiles (ForAll " + range.dimension +
                                  " over a range of length " + std::to_string(length) + ")");
      }
    }
  }
  for (const auto& [coefficients, offsets] : groups) {
    if (offsets.values.size() < 2) continue;
    if (offsets.symbolic) {
      dropped.push_back({dependency, producer.grid, "Strided grouping along " + axisOf(producerGrid, dimension),
                         "the offsets between the tiles one consumer reads depend on a symbolic parameter, so "
                         "the stride cannot be emitted as a constant"});
      continue;
    }
    std::int64_t first = offsets.values.begin()->first, last = offsets.values.rbegin()->first;
    std::int64_t stride = 0;
    for (const auto& [value, source] : offsets.values) stride = std::gcd(stride, value - first);
    std::string sources;
    for (const auto& [value, source] : offsets.values) sources += (sources.empty() ? "" : ", ") + source;
    std::string axis = axisOf(producerGrid, dimension);
    if (stride == 1) {
      std::int64_t length = last - first + 1;
      if (facts.blocks.insert(length).second) {
        facts.stepSources[length] = std::to_string(length);
        facts.rationale.push_back(axis + ": a consumer tile reads " + std::to_string(offsets.values.size()) +
                                  " tiles at consecutive offsets {" + sources + "}");
      }
    } else if (facts.strides.insert(stride).second) {
      std::string strideSource = std::to_string(stride);
      for (const auto& [value, source] : offsets.values)
        if (value - first == stride) strideSource = source;
      facts.stepSources[-stride] = strideSource;
      facts.rationale.push_back(axis + ": a consumer tile reads " + std::to_string(offsets.values.size()) +
                                " tiles at offsets {" + sources + "}, stride " + std::to_string(stride) + " (" +
                                strideSource + ")");
    }
  }
}

std::vector<std::vector<DimensionGrouping>> cartesianProduct(const std::vector<std::vector<DimensionGrouping>>& options) {
  std::vector<std::vector<DimensionGrouping>> result{{}};
  for (const auto& choices : options) {
    std::vector<std::vector<DimensionGrouping>> next;
    for (const auto& prefix : result)
      for (const auto& choice : choices) {
        next.push_back(prefix);
        next.back().push_back(choice);
      }
    result = std::move(next);
  }
  return result;
}

bool allSeparate(const std::vector<DimensionGrouping>& dimensions) {
  return std::all_of(dimensions.begin(), dimensions.end(),
                     [](const DimensionGrouping& g) { return g.kind == Grouping::Separate; });
}

}  // namespace

std::string PolicyCandidate::structName() const { return "Dep_" + dependency + "_" + producerGrid + "_" + policy; }

std::string policyName(const std::vector<DimensionGrouping>& dimensions, bool scaledRelation) {
  if (allSeparate(dimensions)) return scaledRelation ? "Conv2DTileSync" : "TileSync";
  // One word per grouped dimension, x first: a Whole x-line is a row, a Whole y-line a column.
  static const char* whole[] = {"Row", "Column", "Batch"};
  static const char* strided[] = {"Strided", "StridedY", "StridedZ"};
  static const char* block[] = {"Block", "BlockY", "BlockZ"};
  std::string name;
  for (std::size_t i = 0; i < dimensions.size() && i < 3; ++i) {
    const DimensionGrouping& g = dimensions[i];
    switch (g.kind) {
      case Grouping::Separate: break;
      case Grouping::Whole: name += whole[i]; break;
      case Grouping::Strided: name += strided[i]; break;
      case Grouping::Block: name += block[i] + std::to_string(g.step); break;
    }
  }
  return name + "Sync";
}

CandidateDerivation derivePolicyCandidates(const analysis::IslModel& model) {
  CandidateDerivation derivation;
  const spec::Spec& spec = model.spec();
  ExpressionContext context{spec, model.parameterValues(), model.symbolicParameters()};
  for (const analysis::DependencyModel& dependency : model.dependencies()) {
    for (std::size_t p = 0; p < dependency.producers.size(); ++p) {
      const analysis::ProducerModel& producer = dependency.producers[p];
      const analysis::GridModel& producerGrid = model.grid(producer.producer.grid);
      const std::string& name = dependency.dependency.name;
      int rank = static_cast<int>(producerGrid.grid.dimensions.size());
      isl::map relation = readRelation(model, producer.relation, producer.producer.grid);
      bool scaledRelation = false;
      std::vector<std::vector<DimensionGrouping>> options;
      std::vector<std::string> rationale;
      for (int d = 0; d < rank; ++d) {
        DimensionFacts facts;
        facts.whole = readsWholeLines(relation, producerGrid.domain.intersect_params(model.context()), d);
        collectSyntacticGroupings(producer.producer, d, context, producerGrid.grid, facts, scaledRelation,
                                  derivation.dropped, name);
        std::vector<DimensionGrouping> choices{DimensionGrouping{}};
        std::string axis = axisOf(producerGrid.grid, d);
        if (facts.whole) {
          choices.push_back({Grouping::Whole, 1, ""});
          rationale.push_back(axis + ": every consumer tile reads all " + producer.producer.grid + "." +
                              kAxisNames[d] + " tiles of the line it touches (checked with isl)");
        } else {
          for (std::int64_t stride : facts.strides) choices.push_back({Grouping::Strided, stride, facts.stepSources[-stride]});
          for (std::int64_t length : facts.blocks) choices.push_back({Grouping::Block, length, facts.stepSources[length]});
          rationale.insert(rationale.end(), facts.rationale.begin(), facts.rationale.end());
        }
        options.push_back(std::move(choices));
      }
      std::vector<PolicyCandidate> forProducer;
      for (auto& dimensions : cartesianProduct(options)) {
        PolicyCandidate candidate;
        candidate.dependency = name;
        candidate.consumerGrid = dependency.dependency.consumerGrid;
        candidate.producerGrid = producer.producer.grid;
        candidate.producerIndex = p;
        candidate.policy = policyName(dimensions, scaledRelation);
        candidate.dimensions = std::move(dimensions);
        for (int d = 0; d < rank; ++d)
          if (candidate.dimensions[d].kind != Grouping::Separate)
            for (const std::string& line : rationale)
              if (line.rfind(axisOf(producerGrid.grid, d) + ":", 0) == 0) candidate.rationale.push_back(line);
        if (allSeparate(candidate.dimensions))
          candidate.rationale.push_back("one semaphore per producer tile: valid for every dependency");
        forProducer.push_back(std::move(candidate));
      }
      // RowSync coarsens any dependency: one semaphore per producer row. Offer it where the relation did not.
      bool hasRowSync = std::any_of(forProducer.begin(), forProducer.end(),
                                    [](const PolicyCandidate& c) { return c.policy == "RowSync"; });
      if (!hasRowSync && rank >= 1) {
        PolicyCandidate row = forProducer.front();
        row.dimensions.assign(rank, DimensionGrouping{});
        row.dimensions[0] = {Grouping::Whole, 1, ""};
        row.policy = "RowSync";
        row.derivedFromRelation = false;
        row.rationale = {"one semaphore per producer row, offered for every dependency (the paper's RowSync); a "
                         "consumer may wait for row tiles it does not read"};
        forProducer.push_back(std::move(row));
      }
      derivation.candidates.insert(derivation.candidates.end(), forProducer.begin(), forProducer.end());
    }
  }
  return derivation;
}

}  // namespace cusync::codegen
