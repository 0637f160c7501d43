// The local evaluator: one run queue for one device, in this process.

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

#include "eval/device_lock.h"
#include "service/evaluator.h"

namespace accelopt::service {
namespace {

double SecondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

class LocalEvaluator : public Evaluator {
 public:
  explicit LocalEvaluator(LocalEvaluatorOptions options) : options_(std::move(options)) {
    thread_ = std::thread([this] { Loop(); });
  }

  ~LocalEvaluator() override {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
    for (Pending& p : queue_) p.promise.set_value(Error{"the evaluator stopped before job " + p.job.Key() + " ran"});
  }

  std::vector<OutcomeFuture> Submit(std::vector<EvalJob> jobs) override {
    std::vector<OutcomeFuture> futures;
    {
      std::lock_guard lock(mu_);
      for (EvalJob& job : jobs) {
        queue_.push_back({std::move(job), {}});
        futures.push_back(queue_.back().promise.get_future());
      }
    }
    cv_.notify_all();
    return futures;
  }

  std::string Waiting() const override {
    std::lock_guard lock(mu_);
    return waiting_;
  }

 private:
  struct Pending {
    EvalJob job;
    std::promise<Result<EvalOutcome>> promise;
  };

  // Jobs that share a build: the same target, settings, task and shape.
  static std::string GroupKey(const EvalJob& job) {
    return job.target + "|" + DumpJson(job.settings) + "|" + job.task.digest + "|" + job.task.shape;
  }

  void Loop() {
    for (;;) {
      std::vector<Pending> group;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
        if (stop_) return;
        group.push_back(std::move(queue_.front()));
        queue_.pop_front();
        if (group.front().job.kind == JobKind::kEvaluate) {
          const std::string key = GroupKey(group.front().job);
          while (!queue_.empty() && queue_.front().job.kind == JobKind::kEvaluate && GroupKey(queue_.front().job) == key) {
            group.push_back(std::move(queue_.front()));
            queue_.pop_front();
          }
        }
      }
      Process(group);
      std::lock_guard lock(mu_);
      waiting_.clear();
    }
  }

  void SetWaiting(std::string what) {
    std::lock_guard lock(mu_);
    waiting_ = std::move(what);
  }

  Result<const suite::Task*> TaskFor(const TaskSpec& spec) {
    auto& slot = tasks_[spec.digest];
    if (!slot) {
      auto task = LoadTaskSpec(spec, options_.settings.cache_dir.empty() ? "." : options_.settings.cache_dir);
      if (!task) {
        tasks_.erase(spec.digest);
        return task.error();
      }
      slot = std::make_unique<suite::Task>(std::move(*task));
    }
    return slot.get();
  }

  Result<targets::Target*> TargetFor(const EvalJob& job) {
    if (options_.target) return options_.target;
    const std::string key = job.target + "|" + DumpJson(job.settings);
    if (auto it = targets_.find(key); it != targets_.end()) return it->second.get();
    targets::TargetSettings settings = options_.settings;
    if (Status s = ApplySettings(job.settings, settings); !s) return s.error();
    settings.device_lock = false;  // held here, once, for every target
    const bool named = !settings.hardware.is_null();
    if (!named && options_.recorded_hardware) settings.hardware = options_.recorded_hardware(job.target);
    auto target = options_.make_target(job.target, settings);
    if (!target) return target.error();
    if (!named && settings.hardware.is_null() && options_.record_hardware && !(*target)->Hardware().is_null())
      options_.record_hardware(job.target, (*target)->Hardware());
    return (targets_[key] = std::move(*target)).get();
  }

  Result<std::unique_ptr<eval::DeviceLock>> HoldDevice(const std::string& device, const std::string& what) {
    if (!options_.device_lock) return std::unique_ptr<eval::DeviceLock>();
    SetWaiting("the " + device + " device");
    eval::DeviceLock::OnWait on_wait = [this, device](const std::string& holder, double) {
      SetWaiting("the " + device + " device, held by " + holder);
      if (options_.on_device_wait) options_.on_device_wait(device, holder);
    };
    auto lock = eval::DeviceLock::Acquire(device, options_.purpose + " " + what, on_wait);
    SetWaiting("");
    return lock;
  }

  EvalOutcome OutcomeOf(std::vector<Profile> profiles, const targets::Target& target, const std::string& device,
                        std::chrono::steady_clock::time_point t0) const {
    EvalOutcome out;
    out.profiles = std::move(profiles);
    out.worker = options_.worker;
    out.device = device;
    out.machine = target.Machine();
    out.seconds = SecondsSince(t0);
    return out;
  }

  void Process(std::vector<Pending>& group) {
    const auto t0 = std::chrono::steady_clock::now();
    const EvalJob& first = group.front().job;
    auto fail = [&](const Error& e) {
      for (Pending& p : group) p.promise.set_value(e);
    };
    auto task = TaskFor(first.task);
    if (!task) return fail(task.error());
    auto target = TargetFor(first);
    if (!target) return fail(target.error());
    const std::string device = options_.device.empty() ? (*target)->Device() : options_.device;
    auto lock = HoldDevice(device, first.task.name + " (" + first.task.shape + ")");
    if (!lock) return fail(lock.error());
    if (first.kind == JobKind::kCompare) return Compare(group.front(), **task, **target, device, t0);

    std::vector<targets::EvalRequest> requests;
    for (const Pending& p : group) {
      const JobSource& s = p.job.sources.front();
      requests.push_back({*task, p.job.task.shape, {s.source, s.label, s.libraries}});
    }
    auto built = (*target)->Build(requests);
    std::vector<targets::Built*> runnable;
    std::vector<size_t> positions;
    for (size_t i = 0; i < built.size(); ++i) {
      if (!built[i]) {
        group[i].promise.set_value(built[i].error());
        continue;
      }
      runnable.push_back(built[i]->get());
      positions.push_back(i);
    }
    std::vector<bool> told(group.size(), false);
    auto results = (*target)->Run(runnable, [&](size_t k, const Result<Profile>& profile) {
      const size_t i = positions[k];
      if (profile)
        group[i].promise.set_value(OutcomeOf({*profile}, **target, device, t0));
      else
        group[i].promise.set_value(profile.error());
      told[i] = true;
    });
    for (size_t k = 0; k < results.size(); ++k) {
      const size_t i = positions[k];
      if (told[i]) continue;
      if (results[k])
        group[i].promise.set_value(OutcomeOf({*results[k]}, **target, device, t0));
      else
        group[i].promise.set_value(results[k].error());
    }
  }

  void Compare(Pending& p, const suite::Task& task, targets::Target& target, const std::string& device,
               std::chrono::steady_clock::time_point t0) {
    const JobSource& a = p.job.sources[0];
    const JobSource& b = p.job.sources[1];
    auto paired = target.Compare({&task, p.job.task.shape, {a.source, a.label, a.libraries}},
                                 {&task, p.job.task.shape, {b.source, b.label, b.libraries}});
    if (!paired) return p.promise.set_value(paired.error());
    EvalOutcome out = OutcomeOf({paired->a, paired->b}, target, device, t0);
    out.speedup = paired->speedup;
    p.promise.set_value(std::move(out));
  }

  LocalEvaluatorOptions options_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Pending> queue_;
  bool stop_ = false;
  std::string waiting_;
  // Used by the run thread only.
  std::map<std::string, std::unique_ptr<suite::Task>> tasks_;
  std::map<std::string, std::unique_ptr<targets::Target>> targets_;
  std::thread thread_;  // last: started when everything it uses exists
};

}  // namespace

std::unique_ptr<Evaluator> MakeLocalEvaluator(LocalEvaluatorOptions options) {
  return std::make_unique<LocalEvaluator>(std::move(options));
}

}  // namespace accelopt::service
