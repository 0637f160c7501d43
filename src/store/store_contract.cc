// The store contract (store_contract.h): what every Store implementation
// does, tested once here and instantiated per backend (sqlite_store_test.cc,
// postgres_store_test.cc).

#include "store/store_contract.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>
#include <thread>

namespace accelopt::store::testing {

StoredCandidate ContractCandidate(int64_t run_id, const std::string& task, int iteration, int64_t parent_id) {
  Profile profile;
  profile.task = task;
  profile.latency = LatencyStats{.median_s = 1.5e-4, .min_s = 1.4e-4, .max_s = 1.7e-4, .calls = 10, .series = 1};
  profile.percent_of_peak = 42.5;
  return StoredCandidate{.run_id = run_id,
                         .task = task,
                         .candidate = {.iteration = iteration,
                                       .parent_id = parent_id,
                                       .plan = "tile by 32",
                                       .code = "__global__ void k() {}",
                                       .hash = "h" + std::to_string(iteration),
                                       .profile = profile}};
}

StoredLesson ContractLesson(const std::string& memory, const std::string& title) {
  Lesson l{.tags = {.task = "matmul",
                    .family = "matmul",
                    .bound = "mm",
                    .target = "host",
                    .language = "c++",
                    .strategies = {"tiling", "threading"},
                    .machine = "epyc-avx2"},
           .speedup = 2.5,
           .low = 2.25,
           .high = 2.75,
           .coverage = 0.95,
           .title = title,
           .text = "**" + title + "**\nbefore/after"};
  return StoredLesson{.lesson = l, .memory = memory, .run_id = 7, .slow_candidate = 3, .fast_candidate = 4};
}

namespace {

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// YYYY-MM-DDTHH:MM:SSZ
bool IsIsoUtc(const std::string& s) {
  const std::string shape = "dddd-dd-ddTdd:dd:ddZ";
  if (s.size() != shape.size()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (shape[i] == 'd' ? !std::isdigit(static_cast<unsigned char>(s[i])) : s[i] != shape[i]) return false;
  }
  return true;
}

TEST_P(StoreContract, RunRoundTrip) {
  auto store = Open();
  ASSERT_TRUE(store);
  Json config = {{"tasks", {"matmul", "softmax"}}, {"search", {{"iterations", 16}}}};
  auto id = store->CreateRun(config);
  ASSERT_TRUE(id.ok()) << id.error().message;

  auto run = store->GetRun(*id);
  ASSERT_TRUE(run.ok()) << run.error().message;
  ASSERT_TRUE(run->has_value());
  EXPECT_EQ((*run)->id, *id);
  EXPECT_EQ((*run)->status, "running");
  EXPECT_EQ((*run)->config, config);
  EXPECT_TRUE((*run)->summary.is_null());
  EXPECT_TRUE(IsIsoUtc((*run)->created_at)) << (*run)->created_at;

  Json summary = {{"cost_usd", 1.25}, {"tasks", {{"matmul", {{"speedup", 3.1}}}}}};
  ASSERT_TRUE(store->SetRunStatus(*id, "finished", summary).ok());
  run = store->GetRun(*id);
  ASSERT_TRUE(run.ok() && run->has_value());
  EXPECT_EQ((*run)->status, "finished");
  EXPECT_EQ((*run)->summary, summary);
  EXPECT_EQ((*run)->config, config);

  auto missing = store->GetRun(*id + 100);
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing->has_value());
  Status no_run = store->SetRunStatus(*id + 100, "failed", Json());
  ASSERT_FALSE(no_run.ok());
  EXPECT_TRUE(Contains(no_run.error().message, where_ + ": set run status: no run")) << no_run.error().message;
}

TEST_P(StoreContract, ListRunsNewestFirst) {
  auto store = Open();
  ASSERT_TRUE(store);
  std::vector<int64_t> ids;
  for (int i = 0; i < 3; ++i) ids.push_back(*store->CreateRun(Json{{"n", i}}));
  auto runs = store->ListRuns();
  ASSERT_TRUE(runs.ok()) << runs.error().message;
  ASSERT_EQ(runs->size(), 3u);
  EXPECT_EQ((*runs)[0].id, ids[2]);
  EXPECT_EQ((*runs)[1].id, ids[1]);
  EXPECT_EQ((*runs)[2].id, ids[0]);
  EXPECT_EQ((*runs)[0].config["n"], 2);
}

TEST_P(StoreContract, LlmCallsRoundTripInRecordedOrder) {
  auto store = Open();
  ASSERT_TRUE(store);
  int64_t run = *store->CreateRun(Json::object());
  int64_t other = *store->CreateRun(Json::object());
  // Keys deliberately out of alphabetical order, interleaved with another run.
  ASSERT_TRUE(store->PutLlmCall("zz", run, "planner", Json{{"n", 0}}).ok());
  ASSERT_TRUE(store->PutLlmCall("mm", other, "executor", Json{{"n", 100}}).ok());
  ASSERT_TRUE(store->PutLlmCall("aa", run, "executor", Json{{"n", 1}}).ok());
  ASSERT_TRUE(store->PutLlmCall("kk", run, "summarizer", Json{{"n", 2}}).ok());

  auto calls = store->ListLlmCalls(run);
  ASSERT_TRUE(calls.ok()) << calls.error().message;
  ASSERT_EQ(calls->size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ((*calls)[i]["n"], i);
  EXPECT_EQ(store->ListLlmCalls(other)->size(), 1u);

  auto got = store->GetLlmCall("aa");
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ(**got, (Json{{"n", 1}}));
  auto missing = store->GetLlmCall("nope");
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing->has_value());
}

TEST_P(StoreContract, PutLlmCallKeepsTheFirstRecord) {
  auto store = Open();
  ASSERT_TRUE(store);
  int64_t run = *store->CreateRun(Json::object());
  ASSERT_TRUE(store->PutLlmCall("k", run, "planner", Json{{"answer", "first"}}).ok());
  ASSERT_TRUE(store->PutLlmCall("k", run, "planner", Json{{"answer", "second"}}).ok());
  EXPECT_EQ((**store->GetLlmCall("k"))["answer"], "first");
  EXPECT_EQ(store->ListLlmCalls(run)->size(), 1u);
}

TEST_P(StoreContract, LlmCallOutsideARunIsKept) {
  auto store = Open();
  ASSERT_TRUE(store);
  ASSERT_TRUE(store->PutLlmCall("ping", 0, "ping", Json{{"ok", true}}).ok());
  EXPECT_TRUE(store->GetLlmCall("ping")->has_value());
}

TEST_P(StoreContract, EvaluationRoundTripKeepsTheFirst) {
  auto store = Open();
  ASSERT_TRUE(store);
  int64_t run = *store->CreateRun(Json::object());
  Json profile = {{"status", "ok"}, {"latency_s", {1e-3, 1.1e-3}}, {"log", "compiled"}};
  ASSERT_TRUE(store->PutEvaluation("task|shape|hash", run, "matmul", profile).ok());
  ASSERT_TRUE(store->PutEvaluation("task|shape|hash", run, "matmul", Json{{"status", "timeout"}}).ok());
  auto got = store->GetEvaluation("task|shape|hash");
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ(**got, profile);
  EXPECT_FALSE(store->GetEvaluation("other")->has_value());
}

TEST_P(StoreContract, HardwareProfilesAreKeptPerTargetAndMachineAndReplaced) {
  auto store = Open();
  ASSERT_TRUE(store);
  EXPECT_FALSE(store->GetHardware("toy", "machine-a")->has_value());
  ASSERT_TRUE(store->PutHardware("toy", "machine-a", Json{{"bandwidth_gbs", 10}}).ok());
  ASSERT_TRUE(store->PutHardware("toy", "machine-b", Json{{"bandwidth_gbs", 20}}).ok());
  ASSERT_TRUE(store->PutHardware("toy", "machine-a", Json{{"bandwidth_gbs", 11}}).ok());
  EXPECT_EQ((**store->GetHardware("toy", "machine-a"))["bandwidth_gbs"], 11);
  EXPECT_EQ((**store->GetHardware("toy", "machine-b"))["bandwidth_gbs"], 20);
  EXPECT_FALSE(store->GetHardware("other", "machine-a")->has_value());
}

TEST_P(StoreContract, CandidateRoundTripWithLineage) {
  auto store = Open();
  ASSERT_TRUE(store);
  int64_t run = *store->CreateRun(Json::object());
  auto base = store->AddCandidate(ContractCandidate(run, "matmul", 0));
  ASSERT_TRUE(base.ok()) << base.error().message;
  StoredCandidate child = ContractCandidate(run, "matmul", 1, *base);
  child.candidate.profile.status = Verdict::kWrongAnswer;
  child.candidate.profile.message = "output 'out': relative L2 error 0.5 exceeds 2e-05";
  child.candidate.profile.latency.reset();
  auto child_id = store->AddCandidate(child);
  ASSERT_TRUE(child_id.ok()) << child_id.error().message;
  EXPECT_NE(*child_id, *base);

  auto got = store->GetCandidate(*child_id);
  ASSERT_TRUE(got.ok()) << got.error().message;
  ASSERT_TRUE(got->has_value());
  const StoredCandidate& stored = **got;
  EXPECT_EQ(stored.run_id, run);
  EXPECT_EQ(stored.task, "matmul");
  EXPECT_EQ(stored.candidate.id, *child_id);
  child.candidate.id = *child_id;
  EXPECT_EQ(ToJson(stored.candidate), ToJson(child.candidate));
  EXPECT_FALSE(stored.candidate.ok());
  EXPECT_EQ((*store->GetCandidate(*base))->candidate.parent_id, 0);
  EXPECT_DOUBLE_EQ((*store->GetCandidate(*base))->candidate.latency(), 1.5e-4);
  EXPECT_FALSE(store->GetCandidate(*child_id + 100)->has_value());
}

TEST_P(StoreContract, ListCandidatesInInsertionOrderFilteredByTask) {
  auto store = Open();
  ASSERT_TRUE(store);
  int64_t run = *store->CreateRun(Json::object());
  int64_t other = *store->CreateRun(Json::object());
  std::vector<int64_t> all, softmax;
  for (int i = 0; i < 6; ++i) {
    std::string task = i % 2 ? "softmax" : "matmul";
    int64_t id = *store->AddCandidate(ContractCandidate(run, task, i));
    all.push_back(id);
    if (task == "softmax") softmax.push_back(id);
    store->AddCandidate(ContractCandidate(other, task, i));
  }
  auto listed = store->ListCandidates(run, "");
  ASSERT_TRUE(listed.ok()) << listed.error().message;
  std::vector<int64_t> ids;
  for (const auto& stored : *listed) ids.push_back(stored.candidate.id);
  EXPECT_EQ(ids, all);

  listed = store->ListCandidates(run, "softmax");
  ASSERT_TRUE(listed.ok());
  ids.clear();
  for (const auto& stored : *listed) ids.push_back(stored.candidate.id);
  EXPECT_EQ(ids, softmax);
  EXPECT_TRUE(store->ListCandidates(run, "conv")->empty());
}

TEST_P(StoreContract, PutIterationReplacesAndLatestPicksTheHighest) {
  auto store = Open();
  ASSERT_TRUE(store);
  int64_t run = *store->CreateRun(Json::object());
  auto none = store->LatestIteration(run, "matmul");
  ASSERT_TRUE(none.ok()) << none.error().message;
  EXPECT_FALSE(none->has_value());

  // Written out of order: the latest is the highest iteration, not the last write.
  ASSERT_TRUE(store->PutIteration(run, "matmul", 2, Json{{"v", "two"}}).ok());
  ASSERT_TRUE(store->PutIteration(run, "matmul", 10, Json{{"v", "ten"}}).ok());
  ASSERT_TRUE(store->PutIteration(run, "matmul", 3, Json{{"v", "three"}}).ok());
  ASSERT_TRUE(store->PutIteration(run, "softmax", 50, Json{{"v", "other task"}}).ok());
  auto latest = store->LatestIteration(run, "matmul");
  ASSERT_TRUE(latest.ok() && latest->has_value());
  EXPECT_EQ((*latest)->first, 10);
  EXPECT_EQ((*latest)->second["v"], "ten");

  ASSERT_TRUE(store->PutIteration(run, "matmul", 10, Json{{"v", "ten again"}}).ok());
  latest = store->LatestIteration(run, "matmul");
  ASSERT_TRUE(latest.ok() && latest->has_value());
  EXPECT_EQ((*latest)->first, 10);
  EXPECT_EQ((*latest)->second["v"], "ten again");
  // The other task's checkpoint is its own.
  EXPECT_EQ((*store->LatestIteration(run, "softmax"))->first, 50);
}

TEST_P(StoreContract, LessonsRoundTripNewestFirstWithLimit) {
  auto store = Open();
  ASSERT_TRUE(store);
  std::vector<int64_t> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(*store->AddLesson(ContractLesson("shared", "lesson " + std::to_string(i))));
  store->AddLesson(ContractLesson("alice", "hers"));
  StoredLesson imported = ContractLesson("run-3", "old");
  imported.created_at = "2024-01-02T03:04:05Z";
  int64_t imported_id = *store->AddLesson(imported);

  auto all = store->ListLessons("shared", 0);
  ASSERT_TRUE(all.ok()) << all.error().message;
  ASSERT_EQ(all->size(), 5u);
  for (int i = 0; i < 5; ++i) EXPECT_EQ((*all)[i].lesson.id, ids[4 - i]);
  auto two = store->ListLessons("shared", 2);
  ASSERT_TRUE(two.ok());
  ASSERT_EQ(two->size(), 2u);
  EXPECT_EQ((*two)[0].lesson.title, "lesson 4");
  EXPECT_EQ((*two)[1].lesson.title, "lesson 3");
  EXPECT_TRUE(store->ListLessons("nobody", 0)->empty());

  auto got = store->GetLesson(ids[1]);
  ASSERT_TRUE(got.ok() && got->has_value());
  StoredLesson want = ContractLesson("shared", "lesson 1");
  EXPECT_EQ((*got)->lesson.id, ids[1]);
  want.lesson.id = ids[1];
  EXPECT_EQ(ToJson((*got)->lesson), ToJson(want.lesson));
  EXPECT_EQ((*got)->memory, want.memory);
  EXPECT_EQ((*got)->run_id, want.run_id);
  EXPECT_EQ((*got)->slow_candidate, want.slow_candidate);
  EXPECT_EQ((*got)->fast_candidate, want.fast_candidate);
  EXPECT_TRUE(IsIsoUtc((*got)->created_at)) << (*got)->created_at;
  EXPECT_EQ((*store->GetLesson(imported_id))->created_at, "2024-01-02T03:04:05Z");
  EXPECT_FALSE(store->GetLesson(imported_id + 100)->has_value());

  auto memories = store->ListMemories();
  ASSERT_TRUE(memories.ok()) << memories.error().message;
  std::vector<std::pair<std::string, int>> want_memories = {{"alice", 1}, {"run-3", 1}, {"shared", 5}};
  EXPECT_EQ(*memories, want_memories);
}

TEST_P(StoreContract, ReopenFindsEverything) {
  int64_t run = 0, candidate = 0, lesson = 0;
  {
    auto store = Open();
    ASSERT_TRUE(store);
    run = *store->CreateRun(Json{{"tasks", {"matmul"}}});
    ASSERT_TRUE(store->SetRunStatus(run, "stopped", Json{{"why", "budget"}}).ok());
    ASSERT_TRUE(store->PutLlmCall("call", run, "planner", Json{{"text", "plan"}}).ok());
    ASSERT_TRUE(store->PutEvaluation("eval", run, "matmul", Json{{"status", "ok"}}).ok());
    candidate = *store->AddCandidate(ContractCandidate(run, "matmul", 0));
    ASSERT_TRUE(store->PutIteration(run, "matmul", 4, Json{{"beam", {candidate}}}).ok());
    lesson = *store->AddLesson(ContractLesson("shared", "keep me"));
  }
  auto store = Open();
  ASSERT_TRUE(store);
  auto got_run = store->GetRun(run);
  ASSERT_TRUE(got_run.ok() && got_run->has_value());
  EXPECT_EQ((*got_run)->status, "stopped");
  EXPECT_EQ((*got_run)->summary["why"], "budget");
  EXPECT_EQ((**store->GetLlmCall("call"))["text"], "plan");
  EXPECT_EQ(store->ListLlmCalls(run)->size(), 1u);
  EXPECT_EQ((**store->GetEvaluation("eval"))["status"], "ok");
  EXPECT_EQ((*store->GetCandidate(candidate))->candidate.hash, "h0");
  EXPECT_EQ(store->ListCandidates(run, "matmul")->size(), 1u);
  EXPECT_EQ((*store->LatestIteration(run, "matmul"))->first, 4);
  EXPECT_EQ((*store->GetLesson(lesson))->lesson.title, "keep me");
  // Ids keep counting after a reopen.
  EXPECT_GT(*store->CreateRun(Json::object()), run);
}

TEST_P(StoreContract, ConcurrentWritersAllLand) {
  auto store = Open();
  ASSERT_TRUE(store);
  int64_t run = *store->CreateRun(Json::object());
  constexpr int kThreads = 4, kPerThread = 50;
  std::vector<std::vector<int64_t>> ids(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        auto id = store->AddCandidate(ContractCandidate(run, "task" + std::to_string(t), i));
        if (id.ok()) ids[t].push_back(*id);
        store->PutLlmCall("t" + std::to_string(t) + "-" + std::to_string(i), run, "executor", Json{{"i", i}});
      }
    });
  }
  for (auto& thread : threads) thread.join();

  std::set<int64_t> distinct;
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(ids[t].size(), static_cast<size_t>(kPerThread));
    EXPECT_TRUE(std::is_sorted(ids[t].begin(), ids[t].end()));
    distinct.insert(ids[t].begin(), ids[t].end());
  }
  EXPECT_EQ(distinct.size(), static_cast<size_t>(kThreads * kPerThread));
  EXPECT_EQ(store->ListCandidates(run, "")->size(), static_cast<size_t>(kThreads * kPerThread));
  EXPECT_EQ(store->ListCandidates(run, "task2")->size(), static_cast<size_t>(kPerThread));
  EXPECT_EQ(store->ListLlmCalls(run)->size(), static_cast<size_t>(kThreads * kPerThread));
}

TEST_P(StoreContract, TwoConnectionsShareTheFile) {
  auto first = Open();
  auto second = Open();
  ASSERT_TRUE(first && second);
  int64_t run = *first->CreateRun(Json::object());
  std::thread a([&] {
    for (int i = 0; i < 50; ++i) EXPECT_TRUE(first->AddCandidate(ContractCandidate(run, "a", i)).ok());
  });
  std::thread b([&] {
    for (int i = 0; i < 50; ++i) EXPECT_TRUE(second->AddCandidate(ContractCandidate(run, "b", i)).ok());
  });
  a.join();
  b.join();
  EXPECT_EQ(first->ListCandidates(run, "")->size(), 100u);
  EXPECT_EQ(second->ListCandidates(run, "")->size(), 100u);
}

TEST_P(StoreContract, UnicodeAndLargeValuesSurvive) {
  auto store = Open();
  ASSERT_TRUE(store);
  Json config = {{"name", "naïve π ∑ 日本語 🚀"}, {"nul", std::string("a\0b", 3)}, {"ключ", {1, 2.5, nullptr, true}}};
  int64_t run = *store->CreateRun(config);
  EXPECT_EQ((*store->GetRun(run))->config, config);

  std::string code;
  code.reserve(1 << 20);
  while (code.size() < (1u << 20)) code += "float x = 1.0f; // ünïcödé ✓ line " + std::to_string(code.size()) + "\n";
  code += std::string("tail\0with nul", 13);
  StoredCandidate row = ContractCandidate(run, "matmul", 0);
  row.candidate.code = code;
  row.candidate.plan = "計画: unroll ×4";
  row.candidate.profile.run_log = code;
  int64_t id = *store->AddCandidate(row);
  auto got = store->GetCandidate(id);
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->candidate.code.size(), code.size());
  EXPECT_TRUE((*got)->candidate.code == code);
  EXPECT_EQ((*got)->candidate.plan, row.candidate.plan);
  EXPECT_TRUE((*got)->candidate.profile.run_log == code);

  Json record = {{"response", code}, {"emoji", "😀"}};
  ASSERT_TRUE(store->PutLlmCall("big", run, "executor", record).ok());
  EXPECT_TRUE(**store->GetLlmCall("big") == record);
}

TEST_P(StoreContract, InvalidUtf8InJsonIsStoredReplaced) {
  auto store = Open();
  ASSERT_TRUE(store);
  int64_t run = *store->CreateRun(Json::object());
  // A crash log with raw bytes is still a verdict to record.
  Json profile = {{"status", "crash"}, {"log", std::string("bad \xff\xfe bytes")}};
  ASSERT_TRUE(store->PutEvaluation("k", run, "matmul", profile).ok());
  auto got = store->GetEvaluation("k");
  ASSERT_TRUE(got.ok() && got->has_value()) << (got.ok() ? "" : got.error().message);
  EXPECT_EQ((**got)["status"], "crash");
  EXPECT_EQ((**got)["log"], "bad \xEF\xBF\xBD\xEF\xBF\xBD bytes");
}

TEST_P(StoreContract, AnyBytesInCodePlansAndLessonsSurviveExactly) {
  // A kernel and a model's text are untrusted: NUL, invalid UTF-8, a lone
  // continuation byte and every other byte value come back as they went in.
  auto store = Open();
  ASSERT_TRUE(store);
  int64_t run = *store->CreateRun(Json::object());
  std::string bytes;
  for (int b = 0; b < 256; ++b) bytes.push_back(static_cast<char>(b));
  bytes += std::string("\xc3\x28 \x80 \0 end", 12);
  StoredCandidate row = ContractCandidate(run, "matmul", 0);
  row.candidate.code = bytes;
  row.candidate.plan = "plan " + bytes;
  int64_t id = *store->AddCandidate(row);
  auto got = store->GetCandidate(id);
  ASSERT_TRUE(got.ok() && got->has_value()) << (got.ok() ? "none" : got.error().message);
  EXPECT_TRUE((*got)->candidate.code == bytes);
  EXPECT_TRUE((*got)->candidate.plan == row.candidate.plan);

  StoredLesson lesson = ContractLesson("shared", "title " + bytes);
  lesson.lesson.text = bytes;
  auto lesson_id = store->AddLesson(lesson);
  ASSERT_TRUE(lesson_id.ok()) << lesson_id.error().message;
  auto read = store->GetLesson(*lesson_id);
  ASSERT_TRUE(read.ok() && read->has_value());
  EXPECT_TRUE((*read)->lesson.title == lesson.lesson.title);
  EXPECT_TRUE((*read)->lesson.text == bytes);
}

// Its latency and percentage are NaN, which the columns for queries must take.
TEST_P(StoreContract, ACandidateWithoutAMeasurementIsKept) {
  auto store = Open();
  ASSERT_TRUE(store);
  int64_t run = *store->CreateRun(Json::object());
  StoredCandidate row = ContractCandidate(run, "matmul", 0);
  row.candidate.profile.status = Verdict::kCompileError;
  row.candidate.profile.latency.reset();
  row.candidate.profile.percent_of_peak = std::nan("");
  int64_t id = *store->AddCandidate(row);
  auto got = store->GetCandidate(id);
  ASSERT_TRUE(got.ok() && got->has_value()) << (got.ok() ? "none" : got.error().message);
  row.candidate.id = id;
  EXPECT_EQ(ToJson((*got)->candidate), ToJson(row.candidate));
  EXPECT_FALSE((*got)->candidate.ok());
}

TEST_P(StoreContract, AComparisonWithTheParentIsKeptAndAMissingCandidateNamed) {
  auto store = Open();
  ASSERT_TRUE(store);
  int64_t run = *store->CreateRun(Json::object());
  int64_t parent = *store->AddCandidate(ContractCandidate(run, "matmul", 0));
  int64_t child = *store->AddCandidate(ContractCandidate(run, "matmul", 1, parent));
  EXPECT_FALSE((*store->GetCandidate(child))->candidate.vs_parent.has_value());
  PairedSpeedup speedup;
  speedup.speedup = 1.8;
  speedup.ci_low = 1.7;
  speedup.ci_high = 1.9;
  speedup.pairs = 12;
  speedup.coverage = 0.96;
  ASSERT_TRUE(store->SetVsParent(child, speedup).ok());
  auto got = store->GetCandidate(child);
  ASSERT_TRUE(got.ok() && got->has_value());
  ASSERT_TRUE((*got)->candidate.vs_parent.has_value());
  EXPECT_EQ(ToJson(*(*got)->candidate.vs_parent), ToJson(speedup));
  Status missing = store->SetVsParent(child + 100, speedup);
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(Contains(missing.error().message, where_)) << missing.error().message;
  EXPECT_TRUE(Contains(missing.error().message, "no candidate")) << missing.error().message;
}

TEST_P(StoreContract, ARejectedLlmCallSaysWhy) {
  auto store = Open();
  ASSERT_TRUE(store);
  int64_t run = *store->CreateRun(Json::object());
  ASSERT_TRUE(store->PutLlmCall("k", run, "executor", Json{{"answer", "no code block"}}).ok());
  ASSERT_TRUE(store->RejectLlmCall("k", "no fenced code block").ok());
  auto got = store->GetLlmCall("k");
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((**got)["rejected"], "no fenced code block");
  EXPECT_EQ((**got)["answer"], "no code block");
}

TEST_P(StoreContract, AnUnknownRunIsAnErrorNamingTheStore) {
  auto store = Open();
  ASSERT_TRUE(store);
  auto id = store->AddCandidate(ContractCandidate(/*run_id=*/12345, "matmul", 0));
  ASSERT_FALSE(id.ok());
  EXPECT_TRUE(Contains(id.error().message, where_ + ": add candidate: ")) << id.error().message;
}

TEST_P(StoreContract, RunProgressIsOneDocumentPerRunThatEachWriteReplaces) {
  auto store = Open();
  ASSERT_TRUE(store);
  const int64_t a = *store->CreateRun(Json::object()), b = *store->CreateRun(Json::object());
  auto none = store->GetRunProgress(a);
  ASSERT_TRUE(none.ok()) << none.error().message;
  EXPECT_FALSE(none->has_value());
  const Json first = {{"task", "silu"}, {"iteration", 1}, {"waiting_for", "the model (planner)"}};
  const Json second = {{"task", "silu"}, {"iteration", 2}, {"waiting_for", std::string("</script>\xff")}};
  ASSERT_TRUE(store->PutRunProgress(a, first).ok());
  ASSERT_TRUE(store->PutRunProgress(b, {{"task", "rope"}}).ok());
  ASSERT_TRUE(store->PutRunProgress(a, second).ok());
  // Another connection (serve's) reads the latest; invalid UTF-8 comes back replaced.
  auto other = Open();
  ASSERT_TRUE(other);
  auto got = other->GetRunProgress(a);
  ASSERT_TRUE(got.ok() && got->has_value()) << (got.ok() ? "none" : got.error().message);
  EXPECT_EQ((**got)["iteration"], 2);
  EXPECT_EQ((**got)["waiting_for"], "</script>\xEF\xBF\xBD");
  EXPECT_EQ((**other->GetRunProgress(b))["task"], "rope");
  EXPECT_FALSE(store->PutRunProgress(424242, first).ok()) << "progress of a run that does not exist";
}

TEST_P(StoreContract, AStoreOpenedReadOnlyReadsEverythingAndWritesNothing) {
  auto store = Open();
  ASSERT_TRUE(store);
  const int64_t run = *store->CreateRun({{"tasks", {"silu"}}});
  ASSERT_TRUE(store->PutRunProgress(run, {{"iteration", 1}}).ok());
  auto reader = OpenStoreReadOnly(place_);
  ASSERT_TRUE(reader.ok()) << reader.error().message;
  Store& r = **reader;
  auto runs = r.ListRuns();
  ASSERT_TRUE(runs.ok() && runs->size() == 1) << (runs.ok() ? "" : runs.error().message);
  EXPECT_EQ((**r.GetRunProgress(run))["iteration"], 1);
  EXPECT_FALSE(r.CreateRun(Json::object()).ok());
  EXPECT_FALSE(r.SetRunStatus(run, "finished", Json()).ok());
  EXPECT_FALSE(r.PutRunProgress(run, {{"iteration", 9}}).ok());
  EXPECT_FALSE(r.AddCandidate(ContractCandidate(run, "silu", 0)).ok());
  EXPECT_EQ((**store->GetRunProgress(run))["iteration"], 1);
  EXPECT_EQ((**store->GetRun(run)).status, "running");
  // The writer goes on writing while the reader is open, and the reader sees it.
  ASSERT_TRUE(store->PutRunProgress(run, {{"iteration", 2}}).ok());
  EXPECT_EQ((**r.GetRunProgress(run))["iteration"], 2);
}

}  // namespace
}  // namespace accelopt::store::testing
