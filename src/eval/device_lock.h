#pragma once
/// One device, one measurement: a machine-wide lock per device, shared by every
/// accelopt process on the machine (eval, bench, optimize, calibrate, tests),
/// so that two runs take turns on the part that is timed instead of disturbing
/// each other. Builds and other untimed work stay outside it.
///
/// Two files in the lock folder implement it with flock(2): `<device>.lock`
/// (the device; its content names the holder) and `<device>.queue` (a
/// turnstile every acquirer passes through while it waits, so that a holder
/// that releases and at once asks again goes behind a process already waiting:
/// the device alternates). flock locks die with their process: a killed holder
/// never leaves the device locked.

#include <functional>
#include <memory>
#include <string>

#include "core/result.h"

namespace accelopt::eval {

/// $ACCELOPT_LOCK_DIR, else /run/lock when writable, else /tmp: one folder for
/// the whole machine, whatever user or home a process runs with.
std::string DeviceLockDir();

class DeviceLock {
 public:
  /// Told, while waiting, who holds the device: once when the wait begins, then every `notice_every_s`.
  using OnWait = std::function<void(const std::string& holder, double waited_s)>;

  /// Blocks until this process holds `device`, a name every process agrees on
  /// (the cpu target names its cores, the cuda target each GPU by its index).
  /// `purpose` names the holder to waiting processes ("eval silu"). An Error
  /// when the lock folder or its files cannot be used.
  static Result<std::unique_ptr<DeviceLock>> Acquire(const std::string& device, const std::string& purpose,
                                                     const OnWait& on_wait, double notice_every_s = 30);
  /// Releases the device.
  ~DeviceLock();
  DeviceLock(const DeviceLock&) = delete;
  DeviceLock& operator=(const DeviceLock&) = delete;

  /// Seconds this process waited for the device before it had it.
  double waited_seconds() const { return waited_s_; }

 private:
  DeviceLock(int fd, double waited_s) : fd_(fd), waited_s_(waited_s) {}
  int fd_;
  double waited_s_;
};

/// An OnWait that prints "waiting for the <device> device, held by ..." to stderr.
DeviceLock::OnWait PrintWaitToStderr(const std::string& device);

}  // namespace accelopt::eval
