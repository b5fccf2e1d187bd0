// The policy a stage posts under, recorded on the host so that every other place that names a policy for that
// stage (a consumer's InputView, the stage's own typed view) can be checked against it. A user names the policy
// once, in Stage::setOutputPolicy<P>(); a second, different name is an error reported before any kernel runs,
// because a mismatch is not a crash but a consumer waiting for counts producers never add (deadlock) or for fewer
// than they add (reading unfinished tiles).
//
// Host-only, plain C++ (no CUDA): the checks return the error's message as a value so that they are unit-tested
// without a GPU (tests/runtime/output_policy_test.cpp); Stage turns a message into a cusync::Error.
#pragma once

#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <typeinfo>

#if __has_include(<cxxabi.h>)
#include <cxxabi.h>
#define CUSYNC_HAS_CXXABI 1
#endif

namespace cusync {

// A policy type's name as the user wrote it (demangled where the compiler's ABI allows), for error messages.
inline std::string policyName(const std::type_info& policy) {
#if defined(CUSYNC_HAS_CXXABI)
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> demangled(abi::__cxa_demangle(policy.name(), nullptr, nullptr, &status),
                                                   std::free);
  if (status == 0 && demangled) return demangled.get();
#endif
  return policy.name();
}

// Which policy a stage posts under; empty until Stage::setOutputPolicy.
class OutputPolicyTag {
 public:
  OutputPolicyTag() = default;
  template <class Policy>
  static OutputPolicyTag of() {
    return OutputPolicyTag(typeid(Policy));
  }

  bool isSet() const { return policy_ != nullptr; }
  template <class Policy>
  bool is() const {
    return policy_ != nullptr && *policy_ == typeid(Policy);
  }
  std::string name() const { return policy_ ? policyName(*policy_) : std::string("no policy"); }

 private:
  explicit OutputPolicyTag(const std::type_info& policy) : policy_(&policy) {}
  const std::type_info* policy_ = nullptr;
};

// Why stage `stage`, which posts under `posted`, may not hand its kernel a view typed with `Policy` (the kernel
// would post under `Policy`); nothing when they agree.
template <class Policy>
std::optional<std::string> whyViewPolicyDiffers(const std::string& stage, const OutputPolicyTag& posted) {
  if (!posted.isSet())
    return "cusync: stage '" + stage + "' has no output policy, but its kernel is given a view posting under " +
           policyName(typeid(Policy)) + " (call setOutputPolicy<" + policyName(typeid(Policy)) +
           ">() on the stage, or pass the untyped view())";
  if (!posted.is<Policy>())
    return "cusync: stage '" + stage + "' posts under " + posted.name() + ", but its kernel is given a view posting " +
           "under " + policyName(typeid(Policy));
  return std::nullopt;
}

// Why `consumer` may not wait under `Policy` on `producer`, which posts under `posted`; nothing when they agree.
template <class Policy>
std::optional<std::string> whyInputPolicyDiffers(const std::string& consumer, const std::string& producer,
                                                 const OutputPolicyTag& posted) {
  if (!posted.isSet())
    return "cusync: stage '" + consumer + "' waits on stage '" + producer +
           "', which has no output policy (call setOutputPolicy on the producer)";
  if (!posted.is<Policy>())
    return "cusync: stage '" + consumer + "' waits on stage '" + producer + "' under policy " +
           policyName(typeid(Policy)) + ", but '" + producer + "' posts under " + posted.name();
  return std::nullopt;
}

}  // namespace cusync
