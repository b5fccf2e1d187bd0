#include <cusync/codegen/affine_form.h>
#include <cusync/codegen/policy_candidate.h>
#include <cusync/dsl/print.h>

#include <isl/map.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

namespace cusync::codegen {
namespace {

const char* kAxisNames[] = {"x", "y", "z"};

// One way to treat a producer dimension, with what in the relation suggested it.
struct GroupingChoice {
  DimensionGrouping grouping;
  std::string rationale;
};

// What one (dependency, producer) looks like along one producer dimension.
struct DimensionAnalysis {
  std::vector<GroupingChoice> choices;  // Separate first
  bool scaled = false;                  // a consumer coordinate is multiplied by a constant (x*s)
};

// Everything the derivation reads for one (dependency, producer).
struct ProducerContext {
  const analysis::IslModel& model;
  const ExpressionContext& expressions;
  const std::string& dependency;
  const spec::ProducerTiles& producer;
  const spec::Grid& grid;
  isl::set domain;    // the producer grid, for admissible parameters
  isl::map relation;  // consumer -> producer tiles it reads, inside the producer grid
  std::vector<DroppedCandidate>& dropped;
};

std::string axisOf(const spec::Grid& grid, int dimension) {
  return dimension < static_cast<int>(grid.dimensions.size()) ? grid.dimensions[dimension] : kAxisNames[dimension];
}

// Pairs of producer tiles of the grid that differ only along `dimension` (the "line" through a tile).
isl::map sameLineExcept(const isl::set& domain, int dimension) {
  isl_map* pairs = isl_map_from_domain_and_range(domain.copy(), domain.copy());
  int rank = static_cast<int>(isl_set_dim(domain.get(), isl_dim_set));
  for (int i = 0; i < rank; ++i)
    if (i != dimension) pairs = isl_map_equate(pairs, isl_dim_in, i, isl_dim_out, i);
  return isl::manage(pairs);
}

// Whether every consumer reads, with any producer tile, every tile on the same line along `dimension` — decided
// with isl, so it holds for all admissible parameter values however the spec wrote the range.
bool readsWholeLines(const ProducerContext& c, int dimension) {
  isl::map line = sameLineExcept(c.domain, dimension);
  if (line.subtract(c.domain.identity()).is_empty()) return false;  // lines of one tile: nothing to group
  if (c.relation.is_empty()) return false;
  return c.relation.apply_range(line).is_subset(c.relation);
}

void addChoice(DimensionAnalysis& analysis, DimensionGrouping grouping, std::string rationale) {
  for (const GroupingChoice& choice : analysis.choices)
    if (choice.grouping.kind == grouping.kind && choice.grouping.step == grouping.step) return;
  analysis.choices.push_back({std::move(grouping), std::move(rationale)});
}

// A ForAll over a range of constant length N > 1 along the dimension: a Block(N) grouping.
void rangedGrouping(const ProducerContext& c, int dimension, const spec::TileSet::RangedDimension& ranged,
                    DimensionAnalysis& analysis) {
  auto lower = evaluate(ranged.range.lower, c.expressions), upper = evaluate(ranged.range.upper, c.expressions);
  if (!lower || !upper) {
    // Bounds that move with the consumer tile (Range(4*x, 4*x + 4)): a constant length if they move together.
    auto lowerForm = affineForm(ranged.range.lower, c.expressions);
    auto upperForm = affineForm(ranged.range.upper, c.expressions);
    if (!lowerForm || !upperForm || lowerForm->coefficients != upperForm->coefficients) return;
    lower = lowerForm->offset;
    upper = upperForm->offset;
  }
  if (*upper - *lower <= 1) return;
  std::string length = dsl::toString(ranged.range.upper) + " - " + dsl::toString(ranged.range.lower);
  if (involvesSymbolicParameter(ranged.range.lower, c.expressions) ||
      involvesSymbolicParameter(ranged.range.upper, c.expressions)) {
    c.dropped.push_back({c.dependency, c.producer.grid, "Block grouping along " + axisOf(c.grid, dimension),
                         "the range length " + length +
                             " depends on a symbolic parameter, so it cannot be a constant block length"});
    return;
  }
  std::int64_t n = *upper - *lower;
  addChoice(analysis, {Grouping::Block, n, length},
            axisOf(c.grid, dimension) + ": a consumer tile reads " + std::to_string(n) + " consecutive tiles (ForAll " +
                ranged.dimension + " over a range of length " + length + ")");
}

// Tiles listed with the same variable part and different constant offsets (x and x + H/(8*TileN)): a Strided
// grouping by the offsets' greatest common divisor, or a Block grouping when that divisor is 1.
void offsetGrouping(const ProducerContext& c, int dimension, const std::map<std::int64_t, std::string>& offsets,
                    bool symbolic, DimensionAnalysis& analysis) {
  if (offsets.size() < 2) return;
  std::string axis = axisOf(c.grid, dimension);
  if (symbolic) {
    c.dropped.push_back({c.dependency, c.producer.grid, "Strided grouping along " + axis,
                         "the offsets between the tiles one consumer reads depend on a symbolic parameter, so the "
                         "stride cannot be emitted as a constant"});
    return;
  }
  std::int64_t first = offsets.begin()->first, last = offsets.rbegin()->first, stride = 0;
  std::string listed, strideSource;
  for (const auto& [value, source] : offsets) {
    stride = std::gcd(stride, value - first);
    listed += (listed.empty() ? "" : ", ") + source;
  }
  for (const auto& [value, source] : offsets)
    if (value - first == stride) strideSource = source;
  std::string reads = axis + ": a consumer tile reads " + std::to_string(offsets.size()) + " tiles at offsets {" +
                      listed + "}";
  if (stride == 1)
    addChoice(analysis, {Grouping::Block, last - first + 1, std::to_string(last - first + 1)}, reads);
  else
    addChoice(analysis, {Grouping::Strided, stride, strideSource},
              reads + ", stride " + std::to_string(stride) + " (" + strideSource + ")");
}

DimensionAnalysis analyzeDimension(const ProducerContext& c, int dimension) {
  DimensionAnalysis analysis;
  analysis.choices.push_back({DimensionGrouping{}, ""});
  if (readsWholeLines(c, dimension)) {
    addChoice(analysis, {Grouping::Whole, 1, ""},
              axisOf(c.grid, dimension) + ": every consumer tile reads all " + c.producer.grid + "." +
                  kAxisNames[dimension] + " tiles of the line it touches (checked with isl)");
  }
  bool whole = analysis.choices.size() > 1;  // a whole line subsumes blocks and strides along it
  std::map<std::map<std::string, std::int64_t>, std::map<std::int64_t, std::string>> offsetsByVariablePart;
  std::map<std::map<std::string, std::int64_t>, bool> symbolicOffsets;
  for (const spec::TileSet& tiles : c.producer.tiles) {
    if (dimension >= static_cast<int>(tiles.tile.coordinates.size())) continue;
    auto form = affineForm(tiles.tile.coordinates[dimension], c.expressions);
    if (!form) continue;  // not affine with integer coefficients: only Separate
    std::vector<const spec::TileSet::RangedDimension*> rangedHere;
    for (const auto& ranged : tiles.ranges)
      if (form->coefficients.count(ranged.dimension)) rangedHere.push_back(&ranged);
    for (const auto& [variable, coefficient] : form->coefficients)
      if (coefficient != 1 && std::none_of(rangedHere.begin(), rangedHere.end(),
                                           [&](const auto* r) { return r->dimension == variable; }))
        analysis.scaled = true;
    if (rangedHere.empty()) {
      offsetsByVariablePart[form->coefficients].emplace(form->offset, form->offsetSource);
      symbolicOffsets[form->coefficients] = symbolicOffsets[form->coefficients] || form->offsetIsSymbolic;
    } else if (rangedHere.size() == 1 && form->coefficients.at(rangedHere.front()->dimension) == 1 && !whole) {
      rangedGrouping(c, dimension, *rangedHere.front(), analysis);
    }
  }
  if (!whole)
    for (const auto& [variablePart, offsets] : offsetsByVariablePart)
      offsetGrouping(c, dimension, offsets, symbolicOffsets[variablePart], analysis);
  return analysis;
}

bool allSeparate(const std::vector<DimensionGrouping>& dimensions) {
  return std::all_of(dimensions.begin(), dimensions.end(),
                     [](const DimensionGrouping& g) { return g.kind == Grouping::Separate; });
}

// Every combination of the per-dimension choices, x varying slowest so TileSync comes first.
std::vector<std::vector<const GroupingChoice*>> combinations(const std::vector<DimensionAnalysis>& dimensions) {
  std::vector<std::vector<const GroupingChoice*>> result{{}};
  for (const DimensionAnalysis& dimension : dimensions) {
    std::vector<std::vector<const GroupingChoice*>> next;
    for (const auto& prefix : result)
      for (const GroupingChoice& choice : dimension.choices) {
        next.push_back(prefix);
        next.back().push_back(&choice);
      }
    result = std::move(next);
  }
  return result;
}

std::vector<PolicyCandidate> candidatesFor(const analysis::IslModel& model, const ExpressionContext& expressions,
                                           const analysis::DependencyModel& dependency, std::size_t producerIndex,
                                           std::vector<DroppedCandidate>& dropped) {
  const analysis::ProducerModel& producer = dependency.producers[producerIndex];
  const analysis::GridModel& grid = model.grid(producer.producer.grid);
  isl::set domain = grid.domain.intersect_params(model.context());
  ProducerContext context{model, expressions, dependency.dependency.name, producer.producer, grid.grid, domain,
                          producer.relation.intersect_range(domain).intersect_params(model.context()), dropped};
  int rank = static_cast<int>(grid.grid.dimensions.size());
  std::vector<DimensionAnalysis> dimensions;
  bool scaled = false;
  for (int d = 0; d < rank; ++d) {
    dimensions.push_back(analyzeDimension(context, d));
    scaled = scaled || dimensions.back().scaled;
  }

  PolicyCandidate base;
  base.dependency = dependency.dependency.name;
  base.consumerGrid = dependency.dependency.consumerGrid;
  base.producerGrid = producer.producer.grid;
  base.producerIndex = producerIndex;
  std::vector<PolicyCandidate> candidates;
  for (const auto& combination : combinations(dimensions)) {
    PolicyCandidate candidate = base;
    for (const GroupingChoice* choice : combination) {
      candidate.dimensions.push_back(choice->grouping);
      if (!choice->rationale.empty()) candidate.rationale.push_back(choice->rationale);
    }
    candidate.policy = policyName(candidate.dimensions, scaled);
    if (allSeparate(candidate.dimensions))
      candidate.rationale.push_back("one semaphore per producer tile: valid for every dependency");
    candidates.push_back(std::move(candidate));
  }
  // RowSync coarsens any dependency: one semaphore per producer row. Offer it where the relation did not.
  bool hasRowSync = std::any_of(candidates.begin(), candidates.end(),
                                [](const PolicyCandidate& c) { return c.policy == "RowSync"; });
  if (!hasRowSync && rank >= 1) {
    PolicyCandidate row = base;
    row.dimensions.assign(rank, DimensionGrouping{});
    row.dimensions[0] = {Grouping::Whole, 1, ""};
    row.policy = "RowSync";
    row.derivedFromRelation = false;
    row.rationale = {"one semaphore per producer row, offered for every dependency (the paper's RowSync); a "
                     "consumer may wait for row tiles it does not read"};
    candidates.push_back(std::move(row));
  }
  return candidates;
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
  ExpressionContext expressions{model.spec(), model.parameterValues(), model.symbolicParameters()};
  for (const analysis::DependencyModel& dependency : model.dependencies())
    for (std::size_t p = 0; p < dependency.producers.size(); ++p) {
      try {
        for (PolicyCandidate& candidate : candidatesFor(model, expressions, dependency, p, derivation.dropped))
          derivation.candidates.push_back(std::move(candidate));
      } catch (const isl::exception& error) {
        // isl gave up (e.g. an internal limit): report it and go on with the other producers.
        derivation.dropped.push_back({dependency.dependency.name, dependency.producers[p].producer.grid,
                                      "every policy", std::string("isl could not analyze the relation: ") +
                                                          error.what()});
      }
    }
  return derivation;
}

}  // namespace cusync::codegen
