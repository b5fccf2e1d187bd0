// The MLP examples' tuning table (examples/mlp/tuning_table.json; schema "cusync-mlp-example-tuning/1", documented in
// docs/PYTORCH_OP.md and written by `cusync-tune --example`): per device name, SM count, model and M, the tile
// configuration, variant, split-K, tile order (and LLaMA's gate/up order and SwiGLU tile width) that won the
// example's exhaustive search, so that a default run runs that instead of searching. Host header, no CUDA.
//
// The reader is a small strict JSON parser (RFC 8259 values; errors carry line and column) and a schema check of
// exactly this format (errors name the entry and the field). Errors are values: nothing here prints or exits.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace cusync::examples {

inline constexpr const char* kExampleTuningSchema = "cusync-mlp-example-tuning/1";
// The table a default run reads when neither --tuning-table nor this variable names one. Not CUSYNC_TUNING_TABLE:
// that one is the PyTorch op's (another schema), and a user who sets it for the op must not break the examples.
inline constexpr const char* kExampleTuningTableEnvironment = "CUSYNC_EXAMPLE_TUNING_TABLE";

// --- JSON --------------------------------------------------------------------------------------------------------

struct JsonValue {
  enum class Kind { Null, Boolean, Number, String, Array, Object } kind = Kind::Null;
  bool boolean = false;
  double number = 0;
  bool integral = false;  // written without fraction or exponent
  std::string string;
  std::vector<JsonValue> array;
  std::vector<std::pair<std::string, JsonValue>> object;  // in file order
  const JsonValue* find(const std::string& key) const {
    for (const auto& [name, value] : object)
      if (name == key) return &value;
    return nullptr;
  }
};

struct JsonParseResult {
  std::optional<JsonValue> value;
  std::string error;  // "line L, column C: what" when !value
};

class JsonParser {
 public:
  explicit JsonParser(const std::string& text) : text_(text) {}

  JsonParseResult parse() {
    JsonParseResult result;
    try {
      JsonValue value = parseValue(0);
      skipSpace();
      if (position_ != text_.size()) fail("unexpected text after the JSON value");
      result.value = std::move(value);
    } catch (const Failure& failure) {
      result.error = failure.message;
    }
    return result;
  }

 private:
  struct Failure {
    std::string message;
  };
  static constexpr int kMaxDepth = 64;

  [[noreturn]] void fail(const std::string& what) const {
    int line = 1, column = 1;
    for (std::size_t i = 0; i < position_ && i < text_.size(); ++i) {
      if (text_[i] == '\n') ++line, column = 1;
      else ++column;
    }
    throw Failure{"line " + std::to_string(line) + ", column " + std::to_string(column) + ": " + what};
  }
  bool atEnd() const { return position_ >= text_.size(); }
  char peek() const { return atEnd() ? '\0' : text_[position_]; }
  void skipSpace() {
    while (!atEnd() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) ++position_;
  }
  void expect(char c) {
    if (peek() != c) fail(std::string("expected '") + c + "'" + found());
    ++position_;
  }
  std::string found() const {
    if (atEnd()) return ", found the end of the file";
    return std::string(", found '") + peek() + "'";
  }

  JsonValue parseValue(int depth) {
    if (depth > kMaxDepth) fail("nested too deeply");
    skipSpace();
    JsonValue value;
    const char c = peek();
    if (c == '{') {
      value.kind = JsonValue::Kind::Object;
      ++position_;
      skipSpace();
      if (peek() == '}') return ++position_, value;
      for (;;) {
        skipSpace();
        if (peek() != '"') fail("expected a string key" + found());
        const std::size_t keyStart = position_;
        std::string key = parseString();
        if (value.find(key)) {
          position_ = keyStart;  // the error points at the key
          fail("duplicate key \"" + key + "\"");
        }
        skipSpace();
        expect(':');
        JsonValue member = parseValue(depth + 1);
        value.object.emplace_back(std::move(key), std::move(member));
        skipSpace();
        if (peek() == ',') { ++position_; continue; }
        if (peek() == '}') { ++position_; return value; }
        fail("expected ',' or '}'" + found());
      }
    }
    if (c == '[') {
      value.kind = JsonValue::Kind::Array;
      ++position_;
      skipSpace();
      if (peek() == ']') return ++position_, value;
      for (;;) {
        value.array.push_back(parseValue(depth + 1));
        skipSpace();
        if (peek() == ',') { ++position_; continue; }
        if (peek() == ']') { ++position_; return value; }
        fail("expected ',' or ']'" + found());
      }
    }
    if (c == '"') {
      value.kind = JsonValue::Kind::String;
      value.string = parseString();
      return value;
    }
    if (c == '-' || (c >= '0' && c <= '9')) return parseNumber();
    for (const auto& [word, kind, truth] : {std::tuple{"true", JsonValue::Kind::Boolean, true},
                                            std::tuple{"false", JsonValue::Kind::Boolean, false},
                                            std::tuple{"null", JsonValue::Kind::Null, false}}) {
      if (text_.compare(position_, std::char_traits<char>::length(word), word) == 0) {
        position_ += std::char_traits<char>::length(word);
        value.kind = kind;
        value.boolean = truth;
        return value;
      }
    }
    fail("expected a JSON value" + found());
  }

  JsonValue parseNumber() {
    const std::size_t start = position_;
    auto digits = [&] {
      const std::size_t first = position_;
      while (!atEnd() && peek() >= '0' && peek() <= '9') ++position_;
      if (position_ == first) fail("expected a digit" + found());
    };
    bool integral = true;
    if (peek() == '-') ++position_;
    if (peek() == '0') ++position_;
    else digits();
    if (peek() == '.') { ++position_; digits(); integral = false; }
    if (peek() == 'e' || peek() == 'E') {
      ++position_;
      if (peek() == '+' || peek() == '-') ++position_;
      digits();
      integral = false;
    }
    JsonValue value;
    value.kind = JsonValue::Kind::Number;
    value.integral = integral;
    value.number = std::strtod(text_.substr(start, position_ - start).c_str(), nullptr);
    return value;
  }

  std::string parseString() {
    expect('"');
    std::string out;
    for (;;) {
      if (atEnd()) fail("unterminated string");
      const char c = text_[position_];
      if (c == '"') { ++position_; return out; }
      if (static_cast<unsigned char>(c) < 0x20) fail("control character in a string");
      if (c != '\\') { out += c; ++position_; continue; }
      ++position_;
      const char escape = peek();
      ++position_;
      switch (escape) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': out += parseUnicodeEscape(); break;
        default: --position_; fail("unknown escape in a string");
      }
    }
  }

  // \uXXXX (after the 'u'), as UTF-8; a surrogate pair is two escapes.
  std::string parseUnicodeEscape() {
    auto hex4 = [&] {
      unsigned code = 0;
      for (int i = 0; i < 4; ++i, ++position_) {
        const char h = peek();
        const int digit = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10
                                                          : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
        if (digit < 0) fail("expected four hex digits after \\u");
        code = code * 16 + unsigned(digit);
      }
      return code;
    };
    unsigned code = hex4();
    if (code >= 0xD800 && code < 0xDC00) {
      if (text_.compare(position_, 2, "\\u") != 0) fail("unpaired surrogate in a \\u escape");
      position_ += 2;
      const unsigned low = hex4();
      if (low < 0xDC00 || low >= 0xE000) fail("unpaired surrogate in a \\u escape");
      code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
    } else if (code >= 0xDC00 && code < 0xE000) {
      fail("unpaired surrogate in a \\u escape");
    }
    std::string out;
    if (code < 0x80) {
      out += char(code);
    } else if (code < 0x800) {
      out += char(0xC0 | (code >> 6));
      out += char(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      out += char(0xE0 | (code >> 12));
      out += char(0x80 | ((code >> 6) & 0x3F));
      out += char(0x80 | (code & 0x3F));
    } else {
      out += char(0xF0 | (code >> 18));
      out += char(0x80 | ((code >> 12) & 0x3F));
      out += char(0x80 | ((code >> 6) & 0x3F));
      out += char(0x80 | (code & 0x3F));
    }
    return out;
  }

  const std::string& text_;
  std::size_t position_ = 0;
};

// --- the table ---------------------------------------------------------------------------------------------------

// The kernels of one measured run: as an example's config label says them (mlp_main.cu, llama_main.cu).
struct TunedKernels {
  std::string config;                          // tile configuration name, e.g. 128x256x64_s4_coop_b1 (variant_h)
  std::uint32_t producerParts = 1, consumerParts = 1;  // split-K parts of GEMM 1 and GEMM 2
  std::string order = "row";                   // tile order text (tile_orders.h), e.g. g4, col, g8:row
  bool pairedGateUp = false;                   // LLaMA: GEMM 1's gate and up tiles paired (gate_up_order.h)
  std::uint32_t swiGluColumns = 64;            // LLaMA: width of the SwiGLU stage's tiles
  std::optional<double> microseconds;          // as measured by the search (not read by the examples)
};

struct TuningEntry {
  std::string device;
  int sms = 0;
  std::string model;  // gpt3_mlp or llama_mlp
  int hidden = 0, intermediate = 0;
  int m = 0;
  std::string variant;                    // e.g. TileSync+PDL, RowSync+WaitKernel+R (mlp_variants.h names)
  TunedKernels kernels;                   // the tuned variant's
  std::optional<TunedKernels> streamSync;  // StreamSync's best configuration in the same search, if it had one
  std::string source;                     // the CSV it comes from
};

struct TuningTable {
  std::string path;
  std::vector<TuningEntry> entries;
};

struct TuningTableResult {
  std::optional<TuningTable> table;
  std::string error;  // "<path>: line L, column C: ..." or "<path>: entry N: ..." when !table
};

namespace tuning_table_detail {

using Kind = JsonValue::Kind;

struct SchemaError {
  std::string message;
};

inline const JsonValue* member(const JsonValue& object, const std::string& key, Kind kind, bool required,
                               const std::string& where, const char* what) {
  const JsonValue* value = object.find(key);
  if (!value) {
    if (required) throw SchemaError{where + ": \"" + key + "\" is missing (" + what + ")"};
    return nullptr;
  }
  if (value->kind != kind) throw SchemaError{where + ": \"" + key + "\" must be " + what};
  return value;
}

inline std::string stringMember(const JsonValue& object, const std::string& key, const std::string& where,
                                const std::string& fallback = {}, bool required = true) {
  const JsonValue* value = member(object, key, Kind::String, required, where, "a string");
  return value ? value->string : fallback;
}

inline int positiveMember(const JsonValue& object, const std::string& key, const std::string& where,
                          bool required = true, int fallback = 1) {
  const JsonValue* value = member(object, key, Kind::Number, required, where, "a positive integer");
  if (!value) return fallback;
  if (!value->integral || value->number < 1 || value->number > 2147483647.0)
    throw SchemaError{where + ": \"" + key + "\" must be a positive integer"};
  return int(value->number);
}

inline bool isOrderWord(const std::string& word) {
  static const std::regex pattern("row|col|g[1-9][0-9]{0,8}");
  return std::regex_match(word, pattern);
}

inline TunedKernels kernels(const JsonValue& object, const std::string& where, bool llama) {
  if (object.kind != Kind::Object) throw SchemaError{where + ": must be an object"};
  TunedKernels k;
  k.config = stringMember(object, "config", where);
  static const std::regex configPattern("[0-9]+x[0-9]+x[0-9]+_s[0-9]+_(coop|ws)_b[0-9]+(_p)?(_Rw)?");
  if (!std::regex_match(k.config, configPattern))
    throw SchemaError{where + ": \"config\" '" + k.config + "' is not a tile configuration name (e.g. " +
                      "128x256x64_s4_coop_b1)"};
  if (const JsonValue* split = member(object, "split", Kind::Array, false, where, "[first parts, second parts]")) {
    const bool valid = split->array.size() == 2 && [&] {
      for (const JsonValue& part : split->array)
        if (part.kind != Kind::Number || !part.integral || part.number < 1 || part.number > 65535) return false;
      return true;
    }();
    if (!valid) throw SchemaError{where + ": \"split\" must be [first parts, second parts], each >= 1"};
    k.producerParts = std::uint32_t(split->array[0].number);
    k.consumerParts = std::uint32_t(split->array[1].number);
  }
  k.order = stringMember(object, "order", where, "row", false);
  const auto colon = k.order.find(':');
  if (!isOrderWord(k.order.substr(0, colon)) ||
      (colon != std::string::npos && !isOrderWord(k.order.substr(colon + 1))))
    throw SchemaError{where + ": \"order\": unknown tile order '" + k.order + "' (row, col, gN or P:C)"};
  const bool hasLlamaKnobs = object.find("gate_up_order") || object.find("swiglu_columns");
  if (hasLlamaKnobs && !llama)
    throw SchemaError{where + ": \"gate_up_order\" and \"swiglu_columns\" are LLaMA's (model llama_mlp) only"};
  if (llama) {
    const std::string gateUp = stringMember(object, "gate_up_order", where, "plain", false);
    if (gateUp != "plain" && gateUp != "paired")
      throw SchemaError{where + ": \"gate_up_order\" must be plain or paired"};
    k.pairedGateUp = gateUp == "paired";
    k.swiGluColumns = std::uint32_t(positiveMember(object, "swiglu_columns", where, false, 64));
    if (k.swiGluColumns % 8 != 0) throw SchemaError{where + ": \"swiglu_columns\" must be a multiple of 8"};
  }
  if (const JsonValue* us = member(object, "us", Kind::Number, false, where, "a number")) k.microseconds = us->number;
  return k;
}

inline TuningEntry entry(const JsonValue& object, const std::string& where) {
  if (object.kind != Kind::Object) throw SchemaError{where + ": must be an object"};
  TuningEntry e;
  e.device = stringMember(object, "device", where);
  e.sms = positiveMember(object, "sms", where);
  e.model = stringMember(object, "model", where);
  if (e.model != "gpt3_mlp" && e.model != "llama_mlp")
    throw SchemaError{where + ": \"model\" must be gpt3_mlp or llama_mlp"};
  e.hidden = positiveMember(object, "hidden", where);
  e.intermediate = positiveMember(object, "intermediate", where);
  e.m = positiveMember(object, "m", where);
  e.variant = stringMember(object, "variant", where);
  static const std::regex variantPattern("(TileSync|RowSync)\\+(WaitKernel|PDL)(\\+R)?");
  if (!std::regex_match(e.variant, variantPattern))
    throw SchemaError{where + ": \"variant\" '" + e.variant +
                      "' is not a tile-synchronized variant ((TileSync|RowSync)+(WaitKernel|PDL)[+R])"};
  const bool llama = e.model == "llama_mlp";
  e.kernels = kernels(object, where, llama);
  if (const JsonValue* stream = object.find("stream_sync"))
    e.streamSync = kernels(*stream, where + ": stream_sync", llama);
  e.source = stringMember(object, "source", where, "", false);
  return e;
}

}  // namespace tuning_table_detail

// Parses a table's text; `origin` (the path) starts every error message.
inline TuningTableResult parseTuningTable(const std::string& text, const std::string& origin) {
  namespace detail = tuning_table_detail;
  TuningTableResult result;
  JsonParseResult json = JsonParser(text).parse();
  if (!json.value) {
    result.error = origin + ": " + json.error;
    return result;
  }
  try {
    const JsonValue& document = *json.value;
    const JsonValue* schema = document.kind == JsonValue::Kind::Object ? document.find("schema") : nullptr;
    if (!schema || schema->kind != JsonValue::Kind::String || schema->string != kExampleTuningSchema)
      throw detail::SchemaError{origin + ": not an MLP example tuning table (expected an object with \"schema\": \"" +
                                kExampleTuningSchema + "\")"};
    const JsonValue* entries = detail::member(document, "entries", JsonValue::Kind::Array, true, origin, "a list");
    TuningTable table;
    table.path = origin;
    for (std::size_t i = 0; i < entries->array.size(); ++i)
      table.entries.push_back(detail::entry(entries->array[i], origin + ": entry " + std::to_string(i)));
    result.table = std::move(table);
  } catch (const detail::SchemaError& error) {
    result.error = error.message;
  }
  return result;
}

inline TuningTableResult loadTuningTable(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    TuningTableResult result;
    result.error = path + ": cannot read the tuning table";
    return result;
  }
  std::stringstream text;
  text << file.rdbuf();
  return parseTuningTable(text.str(), path);
}

// The entry of this device (name and SM count) and model whose M is nearest to `m` on a log scale (a tile count and
// a wave count scale with M: 1000 is nearer 1024 than 700 is to 512); an exact tie goes to the larger M, as in
// python/cusync/tuning.py. nullptr when the table has no entry for this device and model.
inline const TuningEntry* nearestTuningEntry(const TuningTable& table, const std::string& device, int sms,
                                             const std::string& model, int hidden, int intermediate, int m) {
  const TuningEntry* best = nullptr;
  double bestDistance = 0;
  for (const TuningEntry& e : table.entries) {
    if (e.device != device || e.sms != sms || e.model != model || e.hidden != hidden || e.intermediate != intermediate)
      continue;
    const double distance = std::fabs(std::log(double(m)) - std::log(double(e.m)));
    // Distances of an exact tie are computed from the same logs, but compare with a tolerance all the same.
    const bool tie = best && std::fabs(distance - bestDistance) <= 1e-12;
    if (!best || (!tie && distance < bestDistance) || (tie && e.m > best->m)) {
      best = &e;
      bestDistance = distance;
    }
  }
  return best;
}

// Where the table comes from: --tuning-table, else $CUSYNC_EXAMPLE_TUNING_TABLE, else the one shipped in the source
// tree (`shipped`, a compile definition of the examples).
struct TuningTablePath {
  std::string path;
  bool explicitlyNamed = false;  // by the option or the environment: a missing file is an error, not a fallback
  std::string origin;            // "--tuning-table", the variable's name, or "the shipped table"
};

inline TuningTablePath tuningTablePath(const std::string& option, const char* environment,
                                       const std::string& shipped) {
  if (!option.empty()) return {option, true, "--tuning-table"};
  if (environment && *environment) return {environment, true, kExampleTuningTableEnvironment};
  return {shipped, false, "the shipped table"};
}

}  // namespace cusync::examples
