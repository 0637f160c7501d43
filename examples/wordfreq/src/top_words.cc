#include <algorithm>
#include <map>

#include "wordfreq/wordfreq.h"

namespace wordfreq {

std::vector<WordCount> TopWords(std::string_view text, std::size_t k) {
  std::map<std::string, long> counts;
  for (const std::string& word : Tokenize(text)) counts[word]++;
  std::vector<WordCount> all;
  for (const auto& [word, count] : counts) all.push_back({word, count});
  std::sort(all.begin(), all.end(), [](const WordCount& a, const WordCount& b) {
    return a.count != b.count ? a.count > b.count : a.word < b.word;
  });
  if (all.size() > k) all.resize(k);
  return all;
}

}  // namespace wordfreq
