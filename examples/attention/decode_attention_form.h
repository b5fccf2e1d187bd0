// How the token-generation attention stage computes each part's softmax (attention_example's --decode-attention):
// in two passes over its keys (the scores, the block's maximum and sum, then the values) or in one (keys and values
// loaded together, an online softmax per half-warp: decodeAttentionKernel's kOnePass), or chosen per shape.
//
// Why the choice is per shape (measured on the H200, docs/BENCHMARKS.md, issue 14, session 34): the one-pass form is
// 0.4-2.5 us faster wherever each part's keys take one step of its loop (64 keys: 4 warps of 16), and 2-7 us slower
// where they take two or three (GPT-3 at B = 4, S' = 1024 and 2048; LLaMA at B = 4, S' = 2048), where its single
// round trip per part no longer holds and its 96 registers leave 5 blocks per SM to the two-pass form's 8. Host code.
#pragma once

#include <cstdint>
#include <string>

namespace cusync::examples::attention {

enum class DecodeAttentionForm { TwoPass, OnePass, Automatic };

// Keys one step of the one-pass loop covers: 4 warps of 16 keys (decodePartInOnePass; attention_chain.h asserts it).
inline constexpr std::uint32_t kDecodeOnePassKeysPerStep = 64;

// Automatic: one-pass where each part of a head's `keys` keys, split `onePassParts` ways (the parts the one-pass form
// gets at its own occupancy), is one step.
inline bool decodeUsesOnePass(DecodeAttentionForm form, std::uint32_t keys, std::uint32_t onePassParts) {
  if (form != DecodeAttentionForm::Automatic) return form == DecodeAttentionForm::OnePass;
  return (keys + onePassParts - 1) / onePassParts <= kDecodeOnePassKeysPerStep;
}

// "two-pass", "one-pass" or "auto"; anything else: false, `out` untouched.
inline bool parseDecodeAttentionForm(const std::string& text, DecodeAttentionForm& out) {
  if (text == "two-pass") out = DecodeAttentionForm::TwoPass;
  else if (text == "one-pass") out = DecodeAttentionForm::OnePass;
  else if (text == "auto") out = DecodeAttentionForm::Automatic;
  else return false;
  return true;
}

}  // namespace cusync::examples::attention
