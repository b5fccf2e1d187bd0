// Random .dep specs for the oracle: DAGs of two to five grids (chains, fan-outs and diamonds; a third of them with
// a batch dimension z), whose dependencies take the shapes the paper uses and a few more: identity, transpose,
// whole rows and columns, strided reads whose producer width leaves a remainder, the Conv2D x*s read, blocks of
// consecutive tiles (with a remainder), a stencil, a halo clipped with max/min, row 0 only, whole batches. Extents are constants or depend on
// the symbolic parameters N (x) and B (y), kept small so the oracle can check every admissible value.
// The text goes through the real parser, as a user's spec would.
#pragma once

#include <cstdint>
#include <map>
#include <random>
#include <string>

namespace cusync::oracle {

struct RandomSpec {
  std::string text;
  std::map<std::string, int> features;  // "diamond", "transpose", "symbolic x", "stride remainder", ... -> count
};

RandomSpec randomDepSpec(std::mt19937_64& random);

}  // namespace cusync::oracle
