// wordfreq's benchmark: one call of TopWords on a synthetic 4 MB text whose
// words follow a Zipf law over a fixed 50,000-word vocabulary. The text is
// drawn from the seed in $ACCELOPT_SEED (42 without it), so that no two runs
// see the same text and nothing learnt in one call can serve another. Prints
// one JSON line.

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "wordfreq/wordfreq.h"

int main() {
  std::mt19937_64 rng(42);
  std::vector<std::string> vocabulary;
  std::uniform_int_distribution<int> length(2, 12), letter(0, 25);
  for (int i = 0; i < 50000; ++i) {
    std::string w;
    for (int n = length(rng); n > 0; --n) w += static_cast<char>('a' + letter(rng));
    vocabulary.push_back(w);
  }
  std::vector<double> weights;
  for (int i = 0; i < 50000; ++i) weights.push_back(1.0 / std::pow(i + 1, 1.1));
  std::discrete_distribution<int> zipf(weights.begin(), weights.end());
  const char* seed = std::getenv("ACCELOPT_SEED");
  rng.seed(seed ? std::strtoull(seed, nullptr, 10) : 42);
  std::uniform_int_distribution<int> punctuation(0, 15);
  const char* separators[] = {", ", ". ", "\n", "; ", " - "};
  std::string text;
  const std::size_t bytes = 4u << 20;
  text.reserve(bytes + 64);
  bool capital = true;
  while (text.size() < bytes) {
    std::string w = vocabulary[zipf(rng)];
    if (capital) w[0] = static_cast<char>(w[0] - 'a' + 'A');
    text += w;
    const int p = punctuation(rng);
    text += p < 5 ? separators[p] : " ";
    capital = p == 1;
  }

  const auto start = std::chrono::steady_clock::now();
  const auto top = wordfreq::TopWords(text, 20);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  long checksum = 0;
  for (const auto& w : top) checksum += w.count * static_cast<long>(w.word.size());
  std::printf("{\"benchmark\": \"top_words\", \"bytes\": %zu, \"ns_per_byte\": %.4f, \"checksum\": %ld}\n", text.size(),
              seconds * 1e9 / static_cast<double>(text.size()), checksum);
  return 0;
}
