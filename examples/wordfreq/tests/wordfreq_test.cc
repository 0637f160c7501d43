// wordfreq's tests: small cases by hand, and random texts against a plain
// count of their own. Exit status 0 when every check passes.

#include <cstdio>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "wordfreq/wordfreq.h"

using wordfreq::TopWords;
using wordfreq::WordCount;

static int failures = 0;

static void Check(bool ok, const char* what, int line) {
  if (!ok) {
    std::printf("FAIL line %d: %s\n", line, what);
    ++failures;
  }
}
#define CHECK(x) Check((x), #x, __LINE__)

// An independent count: byte by byte, letters folded by arithmetic.
static std::vector<WordCount> Expected(const std::string& text, std::size_t k) {
  std::unordered_map<std::string, long> counts;
  std::string word;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    const char c = i < text.size() ? text[i] : ' ';
    if (c >= 'A' && c <= 'Z')
      word += static_cast<char>(c - 'A' + 'a');
    else if (c >= 'a' && c <= 'z')
      word += c;
    else if (!word.empty()) {
      ++counts[word];
      word.clear();
    }
  }
  std::vector<WordCount> all;
  for (const auto& [w, n] : counts) all.push_back({w, n});
  for (std::size_t i = 0; i < all.size(); ++i)  // selection of the k best, plainly
    for (std::size_t j = i + 1; j < all.size(); ++j)
      if (all[j].count > all[i].count || (all[j].count == all[i].count && all[j].word < all[i].word))
        std::swap(all[i], all[j]);
  if (all.size() > k) all.resize(k);
  return all;
}

static std::string RandomText(std::mt19937& rng, std::size_t words) {
  static const char* separators[] = {" ", "  ", ", ", ". ", "\n", "--", "'", "\t", "3", " (", ") ", "\xc3\xa9"};
  std::uniform_int_distribution<int> length(1, 9), letter(0, 25), pick(0, 11), upper(0, 9), vocab(0, 60);
  std::vector<std::string> vocabulary;
  for (int v = 0; v <= 60; ++v) {
    std::string w;
    for (int n = length(rng); n > 0; --n) w += static_cast<char>('a' + letter(rng));
    vocabulary.push_back(w);
  }
  std::string text;
  for (std::size_t i = 0; i < words; ++i) {
    std::string w = vocabulary[vocab(rng) % (1 + vocab(rng))];
    for (char& c : w)
      if (upper(rng) == 0) c = static_cast<char>(c - 'a' + 'A');
    text += w;
    text += separators[pick(rng)];
  }
  return text;
}

int main() {
  CHECK(TopWords("", 5).empty());
  CHECK(TopWords(" ,.; 42 ", 5).empty());
  CHECK(TopWords("word", 0).empty());
  CHECK((TopWords("The cat and the hat. THE END", 2) == std::vector<WordCount>{{"the", 3}, {"and", 1}}));
  CHECK((TopWords("b a c b a", 10) == std::vector<WordCount>{{"a", 2}, {"b", 2}, {"c", 1}}));
  CHECK((TopWords("don't", 5) == std::vector<WordCount>{{"don", 1}, {"t", 1}}));
  CHECK((TopWords("x\xc3\xa9y", 5) == std::vector<WordCount>{{"x", 1}, {"y", 1}}));
  CHECK((TopWords("ab1ab", 1) == std::vector<WordCount>{{"ab", 2}}));
  CHECK((wordfreq::Tokenize("Hello, World!") == std::vector<std::string>{"hello", "world"}));
  std::mt19937 rng(20261124);
  for (int round = 0; round < 200; ++round) {
    const std::string text = RandomText(rng, 1 + round * 7);
    for (std::size_t k : {1, 3, 10, 100}) CHECK(TopWords(text, k) == Expected(text, k));
  }
  // A long word, and a text that ends inside a word.
  CHECK((TopWords(std::string(100000, 'q') + " q", 2) ==
         std::vector<WordCount>{{"q", 1}, {std::string(100000, 'q'), 1}}));
  if (failures) {
    std::printf("%d check(s) failed\n", failures);
    return 1;
  }
  std::printf("all checks passed\n");
  return 0;
}
