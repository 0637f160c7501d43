#pragma once
/// core: a plan, one optimization step a planner proposed. A candidate keeps
/// the text of the plan that produced it (Candidate::plan).

#include <string>

namespace accelopt {

struct Plan {
  std::string title;    ///< from `PLAN: <title>`, else the first line
  std::string details;  ///< the rest
  std::string Text() const { return details.empty() ? title : title + "\n" + details; }
};

}  // namespace accelopt
