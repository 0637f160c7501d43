#include "core/lesson.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

namespace accelopt {

bool LessonTags::Has(const std::string& key, const std::string& value) const {
  if (key == "task") return task == value;
  if (key == "family") return family == value;
  if (key == "bound") return bound == value;
  if (key == "target") return target == value;
  if (key == "language") return language == value;
  if (key == "strategy") return std::find(strategies.begin(), strategies.end(), value) != strategies.end();
  if (key == "machine") return machine == value;
  return false;
}

bool LessonTags::Set(const std::string& key, const std::string& value) {
  if (key == "task")
    task = value;
  else if (key == "family")
    family = value;
  else if (key == "bound")
    bound = value;
  else if (key == "target")
    target = value;
  else if (key == "language")
    language = value;
  else if (key == "strategy")
    strategies.push_back(value);
  else if (key == "machine")
    machine = value;
  else
    return false;
  return true;
}

const std::vector<std::string>& LessonTagNames() {
  static const std::vector<std::string> names = {"task", "family", "bound", "target", "language", "strategy", "machine"};
  return names;
}

double Lesson::VerifiedEffect() const {
  if (low > 1) return std::log(low);
  if (high > 0 && high < 1) return std::log(high);
  return 0;
}

Json ToJson(const Lesson& l) {
  return {{"id", l.id},
          {"task", l.tags.task},
          {"family", l.tags.family},
          {"bound", l.tags.bound},
          {"target", l.tags.target},
          {"language", l.tags.language},
          {"strategies", l.tags.strategies},
          {"machine", l.tags.machine},
          {"speedup", l.speedup},
          {"speedup_low", l.low},
          {"speedup_high", l.high},
          {"speedup_coverage", l.coverage},
          {"title", l.title},
          {"text", l.text}};
}

Result<Lesson> LessonFromJson(const Json& j) {
  try {
    Lesson l;
    l.id = j.at("id");
    l.tags.task = j.at("task");
    l.tags.family = j.value("family", "");
    l.tags.bound = j.value("bound", "");
    l.tags.target = j.value("target", "");
    l.tags.language = j.value("language", "");
    l.tags.strategies = j.value("strategies", std::vector<std::string>{});
    l.tags.machine = j.value("machine", "");
    l.speedup = j.at("speedup");
    // Lessons recorded before intervals were kept: the estimate is all there is.
    l.low = j.value("speedup_low", l.speedup);
    l.high = j.value("speedup_high", l.speedup);
    l.coverage = j.value("speedup_coverage", 0.0);
    l.title = j.at("title");
    l.text = j.at("text");
    return l;
  } catch (const Json::exception& e) {
    return Error{std::string("lesson: ") + e.what()};
  }
}

Status CheckImportedLesson(const Lesson& l) {
  auto bad = [&](const std::string& what) {
    return Error{"lesson" + (l.id != 0 ? " " + std::to_string(l.id) : "") +
                 (l.title.empty() ? "" : " \"" + l.title.substr(0, 60) + "\"") + ": " + what};
  };
  auto shown = [](double v) {
    char buf[32];
    snprintf(buf, sizeof buf, "%g", v);
    return std::string(buf);
  };
  constexpr double kLowest = 1e-4, kHighest = 1e4;
  for (auto [name, v] : {std::pair<const char*, double>{"speedup", l.speedup},
                         {"speedup_low", l.low},
                         {"speedup_high", l.high}}) {
    if (!std::isfinite(v) || v < kLowest || v > kHighest)
      return bad(std::string(name) + " " + shown(v) + " is not a speedup a measurement gives (within [1e-4, 1e4])");
  }
  if (!(l.low <= l.speedup && l.speedup <= l.high))
    return bad("speedup " + shown(l.speedup) + " is outside its interval [" + shown(l.low) + ", " + shown(l.high) +
               "]");
  if (!std::isfinite(l.coverage) || l.coverage < 0 || l.coverage > 1)
    return bad("speedup_coverage " + shown(l.coverage) + " is not a probability");
  if (l.title.empty()) return bad("no title");
  if (l.text.size() > 64 * 1024) return bad("text of " + std::to_string(l.text.size()) + " bytes (at most 65536)");
  if (l.tags.task.empty()) return bad("no task");
  return Ok{};
}

}  // namespace accelopt
