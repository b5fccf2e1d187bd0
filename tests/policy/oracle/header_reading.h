// What the oracle reads from a generated header's text: the structs its X-macro lists name, and whether each was
// proven for every admissible parameter value ("Proven with isl symbolically") or for the given values only.
#pragma once

#include <string>
#include <vector>

namespace cusync::oracle {

struct EmittedPolicy {
  std::string structName;  // unqualified
  std::string dependency, producerGrid, consumerGrid;
  bool symbolic = false;
};

// A producer policy (producer_policy.h): one policy for every dependency that reads the producer.
struct EmittedProducerPolicy {
  std::string structName;
  std::string producerGrid;
  std::vector<std::string> dependencies;
  bool symbolic = false;
};

struct EmittedOrder {
  std::string structName;
  std::string grid;
  bool symbolic = false;
};

struct EmittedHeader {
  std::string macroStem;  // CUSYNC_<SPEC>
  std::vector<EmittedPolicy> policies;
  std::vector<EmittedProducerPolicy> producerPolicies;
  std::vector<EmittedOrder> orders;
};

EmittedHeader readHeader(const std::string& text);

}  // namespace cusync::oracle
