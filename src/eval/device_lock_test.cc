#include "eval/device_lock.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "testing/temp_dir.h"

namespace accelopt::eval {
namespace {

// Each test locks a device of its own in a folder of its own: the machine's
// real device lock stays free for the tests that measure.
class DeviceLockTest : public ::testing::Test {
 protected:
  void SetUp() override { setenv("ACCELOPT_LOCK_DIR", dir_.path().c_str(), 1); }
  void TearDown() override { unsetenv("ACCELOPT_LOCK_DIR"); }
  testing::TempDir dir_;
};

TEST_F(DeviceLockTest, ASecondAcquirerWaitsAndIsToldWhoHoldsTheDevice) {
  auto first = DeviceLock::Acquire("test", "eval silu", nullptr);
  ASSERT_TRUE(first) << first.error().message;
  std::atomic<bool> acquired{false};
  std::string told;
  std::mutex told_mutex;
  std::thread second([&] {
    auto lock = DeviceLock::Acquire("test", "eval adamw", [&](const std::string& holder, double) {
      std::lock_guard<std::mutex> guard(told_mutex);
      told = holder;
    });
    ASSERT_TRUE(lock) << lock.error().message;
    acquired = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(acquired);
  first->reset();
  second.join();
  EXPECT_TRUE(acquired);
  std::lock_guard<std::mutex> guard(told_mutex);
  EXPECT_NE(told.find("eval silu"), std::string::npos) << told;
  EXPECT_NE(told.find("pid "), std::string::npos) << told;
}

// A holder that releases and asks again at once goes behind a waiter: two
// runs alternate instead of one starving the other.
TEST_F(DeviceLockTest, TheDeviceAlternatesBetweenARepeatedHolderAndAWaiter) {
  auto first = DeviceLock::Acquire("test", "a", nullptr);
  ASSERT_TRUE(first);
  std::vector<std::string> order;
  std::mutex order_mutex;
  std::atomic<bool> waiting{false};
  std::thread waiter([&] {
    auto lock = DeviceLock::Acquire("test", "b", [&](const std::string&, double) { waiting = true; });
    ASSERT_TRUE(lock);
    std::lock_guard<std::mutex> guard(order_mutex);
    order.push_back("b");
  });
  while (!waiting) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  first->reset();
  auto again = DeviceLock::Acquire("test", "a again", nullptr);
  ASSERT_TRUE(again);
  {
    std::lock_guard<std::mutex> guard(order_mutex);
    order.push_back("a");
  }
  waiter.join();
  ASSERT_EQ(order.size(), 2u);
  EXPECT_EQ(order[0], "b");
}

TEST_F(DeviceLockTest, AnUnusableLockFolderIsAnErrorNamingIt) {
  setenv("ACCELOPT_LOCK_DIR", (dir_.path() + "/missing/folder").c_str(), 1);
  auto lock = DeviceLock::Acquire("test", "eval", nullptr);
  ASSERT_FALSE(lock);
  EXPECT_NE(lock.error().message.find("missing/folder"), std::string::npos) << lock.error().message;
}

}  // namespace
}  // namespace accelopt::eval
