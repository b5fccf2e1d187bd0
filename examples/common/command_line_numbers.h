// Checked parsing of the numbers and word lists on the command lines of the example and benchmark programs. Host
// header, C++17.
//
// std::stoi throws on "abc" (uncaught, the program aborts: exit 134) and reads "12abc" as 12; std::atoi reads "abc"
// as 0. Here a number is a whole decimal integer within the range its option allows, or a usage error that names
// the option and the text and exits 2 (the exit status every cusync program gives a bad command line).
#pragma once

#include <charconv>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include <unistd.h>

namespace cusync::examples {

// Prints "<program>: <message>" and a pointer to --help on stderr, then exits 2.
[[noreturn]] inline void exitWithUsageError(const std::string& program, const std::string& message) {
  std::fprintf(stderr, "%s: %s\nTry '%s --help'.\n", program.c_str(), message.c_str(), program.c_str());
  std::exit(2);
}

// Exits 2 unless `path` (an output file an option names) can be written, so that a run cannot spend its GPU time
// and then lose its results: an existing file must be writable, a new one's directory writable. Creates nothing, so
// a run refused later on the command line leaves no empty file behind.
inline void requireWritableOutput(const std::string& program, const std::string& option, const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  const std::string directory = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  bool writable = false;
  if (access(path.c_str(), F_OK) == 0) {  // opened for appending, which leaves its contents as they are
    if (std::FILE* file = std::fopen(path.c_str(), "a")) {
      writable = true;
      std::fclose(file);
    }
  } else {
    writable = access(directory.c_str(), W_OK | X_OK) == 0;
  }
  if (!writable) exitWithUsageError(program, option + ": cannot write '" + path + "'");
}

// The integer `text` spells, when it is a whole decimal number (an optional sign, digits, nothing else) in
// [minimum, maximum]; nullopt otherwise, overflow of long long included.
inline std::optional<long long> parseIntegerInRange(const std::string& text, long long minimum, long long maximum) {
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  if (begin != end && *begin == '+') ++begin;  // from_chars takes '-' but not '+'
  long long value = 0;
  const auto [stop, error] = std::from_chars(begin, end, value);
  if (begin == end || error != std::errc() || stop != end) return std::nullopt;
  if (value < minimum || value > maximum) return std::nullopt;
  return value;
}

// The value of `option` (e.g. "--pairs") as an integer in [minimum, maximum], or a usage error.
inline long long integerArgument(const std::string& program, const std::string& option, const std::string& text,
                                 long long minimum, long long maximum) {
  const std::optional<long long> value = parseIntegerInRange(text, minimum, maximum);
  if (!value) {
    exitWithUsageError(program, option + ": '" + text + "' is not an integer from " + std::to_string(minimum) +
                                    " to " + std::to_string(maximum));
  }
  return *value;
}

// A positive int, the common case: sizes, counts, repetitions.
inline int positiveIntArgument(const std::string& program, const std::string& option, const std::string& text) {
  return int(integerArgument(program, option, text, 1, INT_MAX));
}

// --warmup-ms: milliseconds of sustained warm-up before a timing (graph_timer.cuh), from 0 to 10 minutes (a device
// call's limit).
inline int warmupMillisecondsArgument(const std::string& program, const std::string& option,
                                      const std::string& text) {
  return int(integerArgument(program, option, text, 0, 600000));
}

// A comma-separated list of positive ints, e.g. --m 1,8,64. An empty list or an empty item ("1,,8") is an error:
// it is a typo more often than a wish to skip a value.
inline std::vector<int> positiveIntListArgument(const std::string& program, const std::string& option,
                                                const std::string& text) {
  std::vector<int> values;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item.empty()) exitWithUsageError(program, option + ": '" + text + "' has an empty item");
    values.push_back(positiveIntArgument(program, option, item));
    if (comma == std::string::npos) return values;
    start = comma + 1;
  }
}

// The words of a comma-separated list; an empty item is a usage error naming the option (exit 2).
inline std::vector<std::string> wordListArgument(const std::string& program, const std::string& option,
                                                 const std::string& text) {
  std::vector<std::string> words;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    std::string word = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (word.empty()) exitWithUsageError(program, option + ": '" + text + "' has an empty item");
    words.push_back(word);
    if (comma == std::string::npos) return words;
    start = comma + 1;
  }
}

// One of two words read as a flag: false for `falseWord`, true for `trueWord` (the options that choose one of two:
// attention_example's --model gpt3|llama, --decode-trigger start|after-wait, --split-order together|k-ranges). Any
// other word is a usage error naming the option, the word and both choices (exit 2).
inline bool twoWordArgument(const std::string& program, const std::string& option, const std::string& text,
                            const std::string& falseWord, const std::string& trueWord) {
  if (text != falseWord && text != trueWord)
    exitWithUsageError(program, option + ": '" + text + "' is neither " + falseWord + " nor " + trueWord);
  return text == trueWord;
}

// A comma-separated list of two words, each read as a flag: true for `trueWord`, false for `falseWord`, in the
// list's order (the options that choose one or both of two ways: --split-reduce read,sum, --tile-orders
// hardware,ticket, --persistent-units static,ticket). Any other word is a usage error naming the option, the word
// and `what` it should be (exit 2).
inline std::vector<bool> twoWordListArgument(const std::string& program, const std::string& option,
                                             const std::string& text, const std::string& what,
                                             const std::string& trueWord, const std::string& falseWord) {
  std::vector<bool> flags;
  for (const std::string& word : wordListArgument(program, option, text)) {
    if (word != trueWord && word != falseWord)
      exitWithUsageError(program, option + ": unknown " + what + " '" + word + "' (" + trueWord + ", " + falseWord +
                                      ")");
    flags.push_back(word == trueWord);
  }
  return flags;
}

}  // namespace cusync::examples
