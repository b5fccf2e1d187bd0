// A bound on the isl operations one decision may take (a proof, a width check), so that an intricate spec ends in a
// clear "could not decide" instead of a compiler that runs for minutes. Host code.
//
// Why: isl decides Presburger formulas exactly, but its time grows quickly with the floor divisions a spec's ranges
// introduce. A fuzzer-made variant of the bundled stride-2 convolution spec (three nested floor divisions per bound,
// a symbolic batch) kept cusyncgen in one policy proof's map subtraction for more than four minutes (session 33).
// isl counts operations in its core loops and, past the limit, fails the operation with isl_error_quota, which its
// C++ interface throws as isl::exception_quota; the callers report the decision as not made.
#pragma once

#include <isl/cpp.h>
#include <isl/ctx.h>

namespace cusync::analysis {

// isl operations a single proof may take. Every bundled spec compiles to the same headers with a tenth of it
// (between 200,000 and 300,000 operations are needed, session 33); the fuzzer's spec above now compiles in about 36 s
// on this project's 2-core CI machine, its undecided proofs reported as such.
inline constexpr unsigned long kIslProofOperations = 2'000'000;

// Limits the isl operations on `ctx` from construction to destruction to `operations` (isl then throws
// isl::exception_quota); afterwards the context is unlimited again, its count and error state cleared. Not nested.
class IslOperationBudget {
 public:
  IslOperationBudget(isl::ctx ctx, unsigned long operations) : ctx_(ctx.get()) {
    isl_ctx_reset_operations(ctx_);
    isl_ctx_set_max_operations(ctx_, operations);
  }
  ~IslOperationBudget() {
    isl_ctx_set_max_operations(ctx_, 0);
    isl_ctx_reset_operations(ctx_);
    isl_ctx_reset_error(ctx_);
  }
  IslOperationBudget(const IslOperationBudget&) = delete;
  IslOperationBudget& operator=(const IslOperationBudget&) = delete;

 private:
  isl_ctx* ctx_;
};

}  // namespace cusync::analysis
