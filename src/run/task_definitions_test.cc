#include "run/task_definitions.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "testing/temp_dir.h"

namespace accelopt::run {
namespace {

namespace fs = std::filesystem;

class Definitions : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::copy(std::string(ACCELOPT_SOURCE_DIR) + "/tests/fixtures/scale", tmp_.path() + "/scale");
  }
  suite::Task Load() {
    auto task = suite::LoadTask(tmp_.path() + "/scale");
    EXPECT_TRUE(task.ok()) << task.error().message;
    return task ? *task : suite::Task{};
  }
  testing::TempDir tmp_;
};

// A task file changed under a run once went unnoticed on resume (the best was
// measured at the old shape): the change is found and named, task and file.
TEST_F(Definitions, AChangedFileIsNamedWithItsTask) {
  suite::Task task = Load();
  auto recorded = TaskDefinitions({&task}, "test");
  ASSERT_TRUE(recorded.ok()) << recorded.error().message;
  EXPECT_TRUE(CheckTaskDefinitions(*recorded, {&task}, "test").ok());
  EXPECT_TRUE((*recorded)["scale"]["files"].contains("task.yaml"));

  std::ofstream(tmp_.path() + "/scale/task.yaml", std::ios::app) << "# a changed shape\n";
  std::ofstream(tmp_.path() + "/scale/notes.md") << "new\n";
  fs::remove(tmp_.path() + "/scale/baseline.cpp");
  auto changed = CheckTaskDefinitions(*recorded, {&task}, "test");
  ASSERT_FALSE(changed.ok());
  const std::string& e = changed.error().message;
  EXPECT_NE(e.find("task 'scale' (" + task.dir + "): "), std::string::npos) << e;
  EXPECT_NE(e.find("task.yaml changed"), std::string::npos) << e;
  EXPECT_NE(e.find("notes.md was added"), std::string::npos) << e;
  EXPECT_NE(e.find("baseline.cpp is gone"), std::string::npos) << e;
}

// A suite that moved (the same files in another folder) matches; a task the run did not record does not.
TEST_F(Definitions, TheSameFilesElsewhereMatchAndAnUnrecordedTaskDoesNot) {
  suite::Task task = Load();
  auto recorded = TaskDefinitions({&task}, "test");
  ASSERT_TRUE(recorded.ok());
  fs::create_directories(tmp_.path() + "/moved");
  fs::copy(tmp_.path() + "/scale", tmp_.path() + "/moved/scale", fs::copy_options::recursive);
  auto moved = suite::LoadTask(tmp_.path() + "/moved/scale");
  ASSERT_TRUE(moved.ok());
  EXPECT_TRUE(CheckTaskDefinitions(*recorded, {&*moved}, "test").ok());
  auto unrecorded = CheckTaskDefinitions(Json::object(), {&task}, "test");
  ASSERT_FALSE(unrecorded.ok());
  EXPECT_NE(unrecorded.error().message.find("task 'scale'"), std::string::npos);
}

}  // namespace
}  // namespace accelopt::run
