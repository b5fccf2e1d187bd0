// Limits shared by both front ends, so a .dep file the parser accepts always compiles against the embedded DSL.
#pragma once

namespace cusync::dsl {

inline constexpr int kMaxGridDimensions = 3;       // x, y, z
inline constexpr int kMaxProducersPerDependency = 4;
inline constexpr int kMaxTileSetsPerProducer = 8;
inline constexpr int kMaxConstraintsPerWhere = 4;

}  // namespace cusync::dsl
