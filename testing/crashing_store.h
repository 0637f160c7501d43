#pragma once
/// A Store that forwards to another and kills its own process with SIGKILL
/// right after the Nth write has landed: `kill -9` at a chosen point, for
/// resume tests (run it in a forked child).

#include <signal.h>

#include <memory>

#include "store/store.h"

namespace accelopt::testing {

class CrashingStore : public store::Store {
 public:
  CrashingStore(store::Store& inner, int crash_after_writes) : inner_(inner), left_(crash_after_writes) {}

  Result<int64_t> CreateRun(const Json& config) override { return Write(inner_.CreateRun(config)); }
  Status SetRunStatus(int64_t run, const std::string& status, const Json& summary) override {
    return Write(inner_.SetRunStatus(run, status, summary));
  }
  Result<std::optional<store::RunInfo>> GetRun(int64_t run) override { return inner_.GetRun(run); }
  Result<std::vector<store::RunInfo>> ListRuns() override { return inner_.ListRuns(); }
  Result<std::optional<Json>> GetLlmCall(const std::string& key) override { return inner_.GetLlmCall(key); }
  Status PutLlmCall(const std::string& key, int64_t run, const std::string& role, const Json& record) override {
    return Write(inner_.PutLlmCall(key, run, role, record));
  }
  Status RejectLlmCall(const std::string& key, const std::string& reason) override {
    return Write(inner_.RejectLlmCall(key, reason));
  }
  Result<std::vector<Json>> ListLlmCalls(int64_t run) override { return inner_.ListLlmCalls(run); }
  Result<std::optional<Json>> GetEvaluation(const std::string& key) override { return inner_.GetEvaluation(key); }
  Status PutEvaluation(const std::string& key, int64_t run, const std::string& task, const Json& profile) override {
    return Write(inner_.PutEvaluation(key, run, task, profile));
  }
  Result<int64_t> AddCandidate(const store::StoredCandidate& row) override { return Write(inner_.AddCandidate(row)); }
  Status SetVsParent(int64_t id, const PairedSpeedup& speedup) override {
    return Write(inner_.SetVsParent(id, speedup));
  }
  Result<std::optional<store::StoredCandidate>> GetCandidate(int64_t id) override { return inner_.GetCandidate(id); }
  Result<std::vector<store::StoredCandidate>> ListCandidates(int64_t run, const std::string& task) override {
    return inner_.ListCandidates(run, task);
  }
  Status PutIteration(int64_t run, const std::string& task, int iteration, const Json& state) override {
    return Write(inner_.PutIteration(run, task, iteration, state));
  }
  Result<std::optional<std::pair<int, Json>>> LatestIteration(int64_t run, const std::string& task) override {
    return inner_.LatestIteration(run, task);
  }
  Result<int64_t> AddLesson(const store::StoredLesson& lesson) override { return Write(inner_.AddLesson(lesson)); }
  Result<std::vector<store::StoredLesson>> ListLessons(const std::string& memory, int limit) override {
    return inner_.ListLessons(memory, limit);
  }
  Result<std::optional<store::StoredLesson>> GetLesson(int64_t id) override { return inner_.GetLesson(id); }
  Result<std::vector<std::pair<std::string, int>>> ListMemories() override { return inner_.ListMemories(); }
  Status PutHardware(const std::string& target, const std::string& machine, const Json& profile) override {
    return Write(inner_.PutHardware(target, machine, profile));
  }
  Result<std::optional<Json>> GetHardware(const std::string& target, const std::string& machine) override {
    return inner_.GetHardware(target, machine);
  }
  // Progress is written on a clock, not at fixed points of the run: not counted, so crash points stay where they are.
  Status PutRunProgress(int64_t run, const Json& progress) override { return inner_.PutRunProgress(run, progress); }
  Result<std::optional<Json>> GetRunProgress(int64_t run) override { return inner_.GetRunProgress(run); }

 private:
  template <typename T>
  T Write(T result) {
    if (--left_ == 0) raise(SIGKILL);
    return result;
  }
  store::Store& inner_;
  int left_;
};

}  // namespace accelopt::testing
