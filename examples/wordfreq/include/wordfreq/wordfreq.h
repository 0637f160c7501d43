#pragma once
// wordfreq: the most frequent words of a text.
//
// A word is a maximal run of ASCII letters, compared without case (it is
// reported in lower case); every other byte separates words.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace wordfreq {

struct WordCount {
  std::string word;
  long count = 0;
  bool operator==(const WordCount&) const = default;
};

// The words of `text`, in order, in lower case.
std::vector<std::string> Tokenize(std::string_view text);

// The `k` most frequent words of `text`, most frequent first; words equally
// frequent in alphabetical order. Fewer than `k` when the text has fewer words.
std::vector<WordCount> TopWords(std::string_view text, std::size_t k);

}  // namespace wordfreq
