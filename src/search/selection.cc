#include "search/selection.h"

#include <algorithm>
#include <cctype>
#include <numeric>
#include <set>
#include <string>

#include "core/check.h"

namespace accelopt::search {

size_t KeepSample(const std::vector<Sample>& samples, double parent_latency_s) {
  ACCELOPT_CHECK(!samples.empty());
  size_t best = samples.size(), worst = 0;
  for (size_t i = 0; i < samples.size(); ++i) {
    if (samples[i].ok && (best == samples.size() || samples[i].latency_s < samples[best].latency_s)) best = i;
    bool worse =
        !samples[i].ok ? samples[worst].ok : (samples[worst].ok && samples[i].latency_s > samples[worst].latency_s);
    if (worse) worst = i;
  }
  if (best < samples.size() && samples[best].latency_s < parent_latency_s) return best;
  return worst;
}

std::vector<size_t> PickLessonPairs(const std::vector<Speedup>& speedups, size_t top_k, double max_threshold,
                                    double min_threshold) {
  std::vector<size_t> order(speedups.size());
  std::iota(order.begin(), order.end(), 0);
  std::vector<size_t> faster, slower;
  for (size_t i : order) {
    if (speedups[i].disturbed) continue;
    if (speedups[i].low > max_threshold)
      faster.push_back(i);
    else if (speedups[i].high < 1.0 / min_threshold)
      slower.push_back(i);
  }
  auto estimate = [&](size_t i) { return speedups[i].estimate; };
  std::stable_sort(faster.begin(), faster.end(), [&](size_t a, size_t b) { return estimate(a) > estimate(b); });
  std::stable_sort(slower.begin(), slower.end(), [&](size_t a, size_t b) { return estimate(a) < estimate(b); });
  std::vector<size_t> picked(faster.begin(), faster.begin() + std::min(faster.size(), top_k / 2));
  for (size_t i : slower)
    if (picked.size() < top_k) picked.push_back(i);
  return picked;
}

namespace {

// A plan title's content words.
std::set<std::string> Words(const std::string& title) {
  static const std::set<std::string> kCommon = {
      "the", "and", "for", "with", "into", "from", "each", "per", "use", "using", "its", "all", "one", "two",
      "then", "than", "that", "this", "over", "instead", "more", "less", "kernel", "loop", "loops", "via", "by"};
  std::set<std::string> words;
  std::string word;
  auto flush = [&] {
    if (word.size() >= 3 && !kCommon.count(word)) words.insert(word);
    word.clear();
  };
  for (char ch : title) {
    if (std::isalnum(static_cast<unsigned char>(ch)))
      word += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    else
      flush();
  }
  flush();
  return words;
}

}  // namespace

bool SameStrategy(const std::string& a, const std::string& b) {
  const std::set<std::string> x = Words(a), y = Words(b);
  if (x.empty() || y.empty()) return false;
  size_t common = 0;
  for (const auto& w : x) common += y.count(w);
  return common * 10 >= (x.size() + y.size() - common) * 6;
}

std::vector<size_t> PickBeam(const std::vector<Sample>& candidates, const std::vector<double>& speedups,
                             const std::vector<std::string>& hashes, size_t width,
                             const std::vector<std::string>& strategies) {
  std::vector<size_t> order;
  for (size_t i = 0; i < candidates.size(); ++i)
    if (candidates[i].ok) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (speedups[a] != speedups[b]) return speedups[a] > speedups[b];
    return candidates[a].latency_s < candidates[b].latency_s;
  });
  std::vector<size_t> beam;
  std::set<std::string> seen;
  for (size_t i : order) {
    if (beam.size() >= width) break;
    if (!strategies.empty() &&
        std::any_of(beam.begin(), beam.end(), [&](size_t k) { return SameStrategy(strategies[k], strategies[i]); }))
      continue;
    if (seen.insert(hashes[i]).second) beam.push_back(i);
  }
  return beam;
}

}  // namespace accelopt::search
