// The generated header: one per spec, plain C++ over <cusync/tile.h> only, for nvcc and for host compilers.
//
// Contents, in namespace cusync::generated::<spec>:
//   - `parameters::NAME`: constexpr values of the spec's concrete parameters (symbolic ones are not constants:
//     every extent that depends on them is read from the GridShape argument, so one header serves every value).
//   - one struct per proven policy, `Dep_<dependency>_<producer>_<policy>`, implementing the policy concept of
//     tile.h (semaphoreCount, sem, value) plus rankInSemaphore, with a comment stating what was proven;
//   - one struct per proven, distinct tile order, `Order_<grid>_<name>`, implementing the tile-order concept;
//   - one struct per dependency, `Optimizations_<dependency>`, with the W/T decisions (optimization_analysis.h);
//   - X-macros `CUSYNC_<SPEC>_POLICIES(X)` and `CUSYNC_<SPEC>_TILE_ORDERS(X)` listing them, so host checks and
//     benchmarks can try every policy without naming each;
//   - a closing comment listing candidates that were not emitted, with the reason.
// Output is deterministic: same spec and options, same bytes. Host-only header.
#pragma once

#include <cusync/codegen/generation.h>

#include <string>

namespace cusync::codegen {

// The namespace and macro stem of a spec: its name with every character outside [A-Za-z0-9_] replaced by '_', and
// '_' appended to a C++ keyword (class.dep -> cusync::generated::class_).
std::string specIdentifier(const std::string& specName);

// `sourceFile`: the spec file as named on the command line (empty for specs built in C++), for the comment.
std::string emitHeader(const Generation& generation, const std::string& sourceFile);

// The header's file name: "<spec>.h" (a keyword stays as it is: class.dep -> class.h).
std::string headerFileName(const Generation& generation);

}  // namespace cusync::codegen
