// Bad input as a user gives it to the command line: a clear error or a
// verdict, never a crash of the engine.

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "core/json_io.h"
#include "eval/sandbox.h"
#include "targets/cpu/calibrate.h"
#include "targets/cpu/hardware_store.h"
#include "testing/run_command.h"
#include "testing/scoped_env.h"
#include "testing/temp_dir.h"

namespace accelopt {
namespace {

using testing::Accelopt;
using testing::CommandRun;

const std::string kSuite = " --suite " + std::string(ACCELOPT_SOURCE_DIR) + "/suite";

// Said at once: a machine with no hardware profile yet is not calibrated first.
// A saved cpu profile for this machine with made-up rates (12.5 GB/s, 100 and
// 50 GFLOP/s), so that a command finds one and calibrates nothing.
bool SaveMadeUpProfile(const std::string& home) {
  cpu::HardwareProfile profile;
  profile.machine = cpu::DetectMachine();
  profile.bandwidth_gbs = 12.5;
  profile.peak_mm_gflops = 100;
  profile.peak_vec_gflops = 50;
  profile.measured_at = "2026-01-01T00:00:00Z";
  return cpu::SaveHardwareProfile(home + "/hardware", profile).ok();
}

TEST(CliBadInput, ADirectoryAsTheKernelIsAnErrorNamingIt) {
  testing::TempDir dir, home;
  CommandRun run = testing::RunShell("ACCELOPT_HOME=" + home.path() + " " + ACCELOPT_BINARY + " eval silu " +
                                     dir.path() + " --shape test" + kSuite);
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_NE(run.out.find(dir.path() + ": is a directory"), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find("Calibrating"), std::string::npos) << run.out;
}

// A correct kernel with a Latin-1 comment on a line the compiler warns about,
// which writes bytes that are not UTF-8 to stderr: its profile is JSON all
// the same, with the bytes replaced.
TEST(CliBadInput, InvalidUtf8FromAKernelStillGivesJson) {
  testing::TempDir dir;
  const std::string kernel = dir.path() + "/latin1.cpp";
  std::ofstream(kernel) << "#include <cmath>\n#include <cstdio>\n"
                           "extern \"C\" void kernel(const float* x, float* out) {\n"
                           "  int unused_cafe;  // caf\xe9 cr\xe8me\n"
                           "  static bool once = false;\n"
                           "  if (!once) once = true, std::fwrite(\"\\xff\\xfe bytes \\xe9\\n\", 1, 11, stderr);\n"
                           "  for (long i = 0; i < M * N; ++i) out[i] = x[i] / (1.0f + std::exp(-x[i]));\n"
                           "}\n";
  CommandRun run = Accelopt("eval silu " + kernel + " --shape test --json -v" + kSuite);
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const std::string json = run.out.substr(run.out.find('{'));
  Json profile;
  ASSERT_NO_THROW(profile = Json::parse(json.substr(0, json.rfind('}') + 1))) << run.out;
  EXPECT_EQ(profile["status"], "ok");
  EXPECT_NE(profile["run_log"].get<std::string>().find("\xef\xbf\xbd"), std::string::npos) << profile["run_log"];
}

// A cache folder whose name is not UTF-8 (a Latin-1 é): paths in the profile
// are JSON all the same.
TEST(CliBadInput, ACacheFolderNamedInLatin1StillGivesJson) {
  testing::TempDir dir;
  const std::string cache = dir.path() + "/cach\xe9";
  testing::ScopedEnv env("ACCELOPT_CACHE", cache);
  CommandRun run = Accelopt("eval silu " + std::string(ACCELOPT_SOURCE_DIR) +
                            "/suite/silu/baseline.cpp --shape test --json" + kSuite);
  ASSERT_EQ(run.exit_code, 0) << run.out;
  Json profile;
  ASSERT_NO_THROW(profile = Json::parse(run.out.substr(run.out.find('{')))) << run.out;
  EXPECT_EQ(profile["status"], "ok");
}

// A build environment that fails every link (a full disk: the linker cannot
// write its output) is the engine's error, not the kernel's compile_error.
TEST(CliBadInput, AFullDiskAtLinkTimeIsAnEngineErrorNotAVerdict) {
  testing::TempDir dir;
  const std::string silu = std::string(ACCELOPT_SOURCE_DIR) + "/suite/silu/baseline.cpp";
  // The reference is built (and cached) while the disk still has room.
  ASSERT_EQ(Accelopt("eval silu " + silu + " --shape test" + kSuite).exit_code, 0);
  std::filesystem::create_directories(dir.path() + "/bin");
  const std::string fake = dir.path() + "/bin/g++";
  std::ofstream(fake) << "#!/bin/sh\necho '/usr/bin/ld: final link failed: No space left on device' >&2\nexit 1\n";
  std::filesystem::permissions(fake, std::filesystem::perms::owner_all);
  const std::string kernel = dir.path() + "/kernel.cpp";
  std::ifstream in(silu);
  std::ofstream(kernel) << in.rdbuf() << "// not built before\n";
  testing::ScopedEnv path("PATH", dir.path() + "/bin:" + getenv("PATH"));
  CommandRun run = Accelopt("eval silu " + kernel + " --shape test --json" + kSuite);
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_NE(run.out.find("the build environment is failing, not the kernel"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("No space left on device"), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find("compile_error"), std::string::npos) << run.out;
}

// An evaluation interrupted while the kernel runs leaves no scratch folder;
// one left by an evaluation killed outright is swept by the next.
TEST(CliBadInput, InterruptedEvaluationsLeaveNoScratchBehind) {
  testing::TempDir dir;
  const std::string cache = dir.path() + "/cache";
  const std::string kernel = dir.path() + "/spin.cpp";
  std::ofstream(kernel) << "extern \"C\" void kernel(const float* x, float* out) {\n"
                           "  for (long spin = 0; spin < 50000000000L; ++spin) asm volatile(\"\");\n"
                           "  for (long i = 0; i < M * N; ++i) out[i] = x[i];\n}\n";
  testing::ScopedEnv env("ACCELOPT_CACHE", cache);
  testing::BackgroundAccelopt eval("eval silu " + kernel + " --shape test --timeout 30" + kSuite, dir.path() + "/log");
  // Wait until the evaluation has its scratch folder (then it builds, waits for the device or runs the
  // kernel: an interruption at any of these leaves nothing behind).
  for (int i = 0; i < 1200 && (!std::filesystem::exists(cache + "/work") || std::filesystem::is_empty(cache + "/work"));
       ++i)
    usleep(50000);
  EXPECT_FALSE(std::filesystem::is_empty(cache + "/work"));
  usleep(1500000);
  kill(eval.pid(), SIGINT);
  CommandRun done = eval.Wait();
  EXPECT_EQ(done.exit_code, 130) << done.out;
  EXPECT_TRUE(std::filesystem::is_empty(cache + "/work")) << done.out;

  // kill -9 leaves its folder; the next evaluation sweeps it.
  testing::BackgroundAccelopt killed("eval silu " + kernel + " --shape test --timeout 30" + kSuite,
                                     dir.path() + "/log2");
  for (int i = 0; i < 1200 && std::filesystem::is_empty(cache + "/work"); ++i) usleep(50000);
  kill(killed.pid(), SIGKILL);
  killed.Wait();
  EXPECT_FALSE(std::filesystem::is_empty(cache + "/work"));
  CommandRun next =
      Accelopt("eval silu " + std::string(ACCELOPT_SOURCE_DIR) + "/suite/silu/baseline.cpp --shape test" + kSuite);
  EXPECT_EQ(next.exit_code, 0) << next.out;
  EXPECT_TRUE(std::filesystem::is_empty(cache + "/work"));
}

// Reading commands never create a store: a mistyped --db is an error naming
// the file, not an empty history.
TEST(CliBadInput, ReadingCommandsNeverCreateAStore) {
  testing::TempDir dir;
  const std::string typo = dir.path() + "/acelopt.db";
  for (const char* command : {"runs", "runs --json", "show 1", "memory list", "memory export", "resume 1"}) {
    CommandRun run = Accelopt(std::string(command) + " --db " + typo);
    EXPECT_EQ(run.exit_code, 1) << command << ": " << run.out;
    EXPECT_NE(run.out.find(typo + ": no such store"), std::string::npos) << command << ": " << run.out;
  }
  EXPECT_FALSE(std::filesystem::exists(typo));
}

// The memory commands: an empty memory says so, an unknown one is an error,
// and importing a file twice adds its lessons once.
TEST(CliBadInput, MemoryImportIsIdempotentAndUnknownMemoriesAreErrors) {
  testing::TempDir dir;
  const std::string db = " --db " + dir.path() + "/accelopt.db";
  const std::string file = dir.path() + "/lessons.json";
  std::ofstream(file) << R"([{"task": "silu", "speedup": 1.5, "title": "Fuse", "text": "**Fuse** the passes"},
                            {"task": "silu", "speedup": 0.5, "title": "Split", "text": "**Split** hurt"}])";
  CommandRun first = Accelopt("memory import " + file + " --memory mine" + db);
  ASSERT_EQ(first.exit_code, 0) << first.out;
  CommandRun again = Accelopt("memory import " + file + " --memory mine" + db);
  EXPECT_EQ(again.exit_code, 0) << again.out;
  EXPECT_NE(again.out.find("imported 0 lessons into memory 'mine' (2 already there)"), std::string::npos) << again.out;
  CommandRun list = Accelopt("memory list" + db);
  EXPECT_NE(list.out.find("mine (2 lessons)"), std::string::npos) << list.out;
  CommandRun unknown = Accelopt("memory export --memory nosuch" + db);
  EXPECT_EQ(unknown.exit_code, 1) << unknown.out;
  EXPECT_NE(unknown.out.find("no memory 'nosuch'"), std::string::npos) << unknown.out;
  EXPECT_NE(unknown.out.find("memories: mine"), std::string::npos) << unknown.out;

  // An existing store without lessons says so instead of printing nothing.
  testing::TempDir fresh;
  const std::string fresh_db = " --db " + fresh.path() + "/accelopt.db";
  std::ofstream(fresh.path() + "/empty.json") << "[]";
  ASSERT_EQ(Accelopt("memory import " + fresh.path() + "/empty.json" + fresh_db).exit_code, 0);
  CommandRun none = Accelopt("memory list" + fresh_db);
  EXPECT_EQ(none.exit_code, 0) << none.out;
  EXPECT_NE(none.out.find("no lessons in"), std::string::npos) << none.out;
}

// A lesson file may come from anyone: one with a lesson no measurement
// could give adds nothing, and the error names each bad entry and its field.
TEST(CliBadInput, MemoryImportChecksEveryLessonAndAddsNoneOfABadFile) {
  testing::TempDir dir;
  const std::string db = " --db " + dir.path() + "/accelopt.db";
  const std::string file = dir.path() + "/lessons.json";
  std::ofstream(file) << R"([{"task": "silu", "speedup": 1.5, "title": "Fuse", "text": "**Fuse** the passes"},
                            {"task": "silu", "speedup": 1e300, "title": "Magic", "text": "**Magic**"},
                            {"task": "silu", "speedup": -5, "title": "Negative", "text": "**Negative**"},
                            {"task": "silu", "speedup": 2, "speedup_low": 2.5, "speedup_high": 3,
                             "title": "Outside", "text": "**Outside**"}])";
  CommandRun bad = Accelopt("memory import " + file + " --memory mine" + db);
  EXPECT_EQ(bad.exit_code, 1) << bad.out;
  EXPECT_NE(bad.out.find("3 of 4 lessons cannot be imported, so none was"), std::string::npos) << bad.out;
  EXPECT_NE(bad.out.find("entry 2: lesson \"Magic\": speedup 1e+300 is not a speedup"), std::string::npos)
      << bad.out;
  EXPECT_NE(bad.out.find("entry 3: lesson \"Negative\": speedup -5"), std::string::npos) << bad.out;
  EXPECT_NE(bad.out.find("entry 4: lesson \"Outside\": speedup 2 is outside its interval [2.5, 3]"),
            std::string::npos)
      << bad.out;
  CommandRun list = Accelopt("memory list" + db);
  EXPECT_EQ(list.out.find("mine"), std::string::npos) << "a lesson of the bad file was added: " << list.out;
}

// A home folder where the hardware profile cannot be written is found out
// before the calibration, naming the folder and the reason.
TEST(CliBadInput, AnUnwritableHomeIsFoundBeforeCalibrating) {
  testing::TempDir dir;
  std::ofstream(dir.path() + "/file") << "not a folder";
  testing::ScopedEnv env("ACCELOPT_HOME", dir.path() + "/file/home");
  CommandRun run = Accelopt("calibrate --force");
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_NE(run.out.find(dir.path() + "/file/home/hardware"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("Not a directory"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("$ACCELOPT_HOME"), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find("Calibrating:"), std::string::npos) << run.out;
}

// Output meant for machines: CSV and JSON carry the geometric means, are not
// asked for together, a task named twice is measured once, and shapes are integers.
TEST(CliBadInput, MachineReadableOutputIsCompleteAndConsistent) {
  CommandRun both = Accelopt("bench silu --shape test --csv --json" + kSuite);
  EXPECT_EQ(both.exit_code, 2) << both.out;
  EXPECT_NE(both.out.find("excludes"), std::string::npos) << both.out;

  CommandRun csv = Accelopt("bench silu silu --shape test --csv" + kSuite);
  ASSERT_EQ(csv.exit_code, 0) << csv.out;
  EXPECT_NE(csv.out.find("task 'silu' is named more than once: taken once"), std::string::npos) << csv.out;
  size_t rows = 0;
  for (size_t at = csv.out.find("\nsilu,baseline,"); at != std::string::npos;
       at = csv.out.find("\nsilu,baseline,", at + 1))
    ++rows;
  EXPECT_EQ(rows, 1u) << csv.out;
  EXPECT_NE(csv.out.find("\ngeomean,baseline,"), std::string::npos) << csv.out;

  CommandRun tasks = Accelopt("tasks --json --shape test" + kSuite);
  ASSERT_EQ(tasks.exit_code, 0) << tasks.out;
  Json list = Json::parse(tasks.out.substr(tasks.out.find('[')));
  for (const auto& t : list)
    for (const auto& [name, value] : t["shape"].items()) EXPECT_TRUE(value.is_number_integer()) << t["task"] << name;
}

// Errors about the project's own files name them: a reference that does not
// compile is reported at its own path (it was "kernel.cpp:2:"), and a corrupt
// hardware profile says how to replace it.
TEST(CliBadInput, ErrorsNameTheFileAtFault) {
  testing::TempDir dir;
  const std::string task = dir.path() + "/scale";
  std::filesystem::copy(std::string(ACCELOPT_SOURCE_DIR) + "/tests/fixtures/scale", task);
  std::ofstream(task + "/reference.cpp") << "extern \"C\" void reference(const float* x, double* out) {\n"
                                            "  out[0] = x[0] +;\n}\n";
  CommandRun run = Accelopt("eval scale " + task + "/baseline.cpp --shape test --suite " + dir.path());
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_NE(run.out.find(task + "/reference.cpp:2:"), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find("kernel.cpp"), std::string::npos) << run.out;

  const std::string home = dir.path() + "/home";
  std::filesystem::create_directories(home + "/hardware");
  std::ofstream(cpu::HardwareProfilePath(home + "/hardware", cpu::DetectMachine().fingerprint)) << "{\"bandwidth";
  testing::ScopedEnv env("ACCELOPT_HOME", home);
  CommandRun tasks = Accelopt("tasks" + kSuite);
  EXPECT_EQ(tasks.exit_code, 1) << tasks.out;
  EXPECT_NE(tasks.out.find("invalid JSON"), std::string::npos) << tasks.out;
  EXPECT_NE(tasks.out.find("accelopt calibrate --force"), std::string::npos) << tasks.out;
}

// One broken task folder once made every command fail for every task of its
// suite: `tasks` lists it with its error beside the tasks that load, a
// command naming another task works, and one naming it gets its error.
TEST(CliBadInput, ABrokenTaskFolderLeavesTheOthersUsable) {
  testing::TempDir dir;
  std::filesystem::copy(std::string(ACCELOPT_SOURCE_DIR) + "/tests/fixtures/scale", dir.path() + "/scale");
  std::filesystem::create_directories(dir.path() + "/broken");
  std::ofstream(dir.path() + "/broken/task.yaml") << "name: broken\nshapes: {test: [1, 2\n";
  const std::string suite = " --suite " + dir.path();
  CommandRun tasks = Accelopt("tasks --json --shape test" + suite);
  ASSERT_EQ(tasks.exit_code, 0) << tasks.out;
  Json list = Json::parse(tasks.out.substr(tasks.out.find('[')));
  ASSERT_EQ(list.size(), 2u) << tasks.out;
  EXPECT_EQ(list[0]["task"], "scale");
  EXPECT_EQ(list[1]["task"], "broken");
  EXPECT_NE(list[1]["error"].get<std::string>().find("broken/task.yaml: invalid YAML at line"), std::string::npos)
      << list[1];
  CommandRun text = Accelopt("tasks --shape test" + suite);
  ASSERT_EQ(text.exit_code, 0) << text.out;
  EXPECT_NE(text.out.find("  broken: " + dir.path() + "/broken/task.yaml"), std::string::npos) << text.out;

  const std::string fixture = std::string(ACCELOPT_SOURCE_DIR) + "/tests/fixtures/scale/baseline.cpp";
  CommandRun good = Accelopt("eval scale " + fixture + " --shape test" + suite);
  EXPECT_EQ(good.exit_code, 0) << good.out;
  CommandRun bad = Accelopt("eval broken " + fixture + " --shape test" + suite);
  EXPECT_EQ(bad.exit_code, 1) << bad.out;
  EXPECT_NE(bad.out.find("task 'broken' does not load: " + dir.path() + "/broken/task.yaml"), std::string::npos)
      << bad.out;
}

// `calibrate --json` of the saved profile lacked `saved` and `problems`,
// which a profile measured now carries: both say the same fields.
TEST(CliBadInput, CalibrateJsonOfASavedProfileSaysSavedAndProblems) {
  testing::TempDir home;
  ASSERT_TRUE(SaveMadeUpProfile(home.path()));
  testing::ScopedEnv env("ACCELOPT_HOME", home.path());
  CommandRun run = Accelopt("calibrate --json");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  Json j = Json::parse(run.out.substr(run.out.find('{')));
  EXPECT_EQ(j["saved"], true);
  EXPECT_TRUE(j["problems"].is_array() && j["problems"].empty()) << j;
  EXPECT_EQ(j["measured_now"], false);
  EXPECT_EQ(j["bandwidth_gbs"], 12.5);
}

// `llm detect --json` is JSON whether or not a server answers (none does on a test machine's usual ports).
TEST(CliBadInput, LlmDetectJsonIsAList) {
  CommandRun run = Accelopt("llm detect --json");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  Json servers = Json::parse(run.out);
  ASSERT_TRUE(servers.is_array());
  for (const auto& s : servers) {
    EXPECT_TRUE(s["base_url"].get<std::string>().starts_with("http://127.0.0.1:")) << s;
    EXPECT_TRUE(s["models"].is_array()) << s;
  }
}

// A time limit too short for the project's own reference says so and names
// the setting; it did not blame the reference.
TEST(CliBadInput, ATimeoutTooShortNamesTheSetting) {
  CommandRun run = Accelopt("eval silu " + std::string(ACCELOPT_SOURCE_DIR) +
                            "/suite/silu/baseline.cpp --shape test --timeout 0.001" + kSuite);
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_NE(run.out.find("did not finish within the time limit of 0.001 s"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("raise it (--timeout SECONDS)"), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find(" failed: "), std::string::npos) << run.out;
}

// Usage errors: each says what was wrong in a line, and all exit with the one
// code the help names (2); --version exists.
TEST(CliBadInput, UsageErrorsAreClearAndExitWithTwo) {
  CommandRun nonsense = Accelopt("nonsense");
  EXPECT_EQ(nonsense.exit_code, 2) << nonsense.out;
  EXPECT_NE(nonsense.out.find("unknown command 'nonsense' (commands: tasks, eval"), std::string::npos) << nonsense.out;

  CommandRun negative = Accelopt("eval silu x.cpp --cpus -1");
  EXPECT_EQ(negative.exit_code, 2) << negative.out;
  EXPECT_NE(negative.out.find("a core is a number from 0 up, got '-1'"), std::string::npos) << negative.out;
  EXPECT_LT(negative.out.size(), 200u) << negative.out;  // no 309-digit range

  CommandRun twice = Accelopt("eval silu x.cpp --cpus 0,0");
  EXPECT_EQ(twice.exit_code, 2) << twice.out;
  EXPECT_NE(twice.out.find("core 0 is named twice"), std::string::npos) << twice.out;

  CommandRun missing = Accelopt("eval");
  EXPECT_EQ(missing.exit_code, 2) << missing.out;

  CommandRun version = Accelopt("--version");
  EXPECT_EQ(version.exit_code, 0) << version.out;
  EXPECT_EQ(version.out.rfind("accelopt ", 0), 0u) << version.out;
}

// Issue 24: each target says whether its results hold against a kernel that
// attacks the machine. The cpu target is trusted only where this machine
// isolates its kernels; the external target (evaluators/python: no boundary)
// and code tasks never are.
TEST(CliBadInput, TargetsSayWhetherTheirResultsAreTrusted) {
  CommandRun list = Accelopt("targets --json");
  ASSERT_EQ(list.exit_code, 0) << list.out;
  const Json targets = Json::parse(list.out);
  std::map<std::string, Json> by_name;
  for (const Json& t : targets) by_name[t["name"].get<std::string>()] = t;
  ASSERT_TRUE(by_name.count("cpu") && by_name.count("external") && by_name.count("code")) << list.out;
  EXPECT_EQ(by_name["cpu"]["trusted"], eval::ProbeIsolation().full()) << list.out;
  EXPECT_NE(by_name["cpu"]["isolation"].get<std::string>().find(
                eval::ProbeIsolation().full() ? "its own PID, IPC, mount and network namespaces" : "refused"),
            std::string::npos)
      << list.out;
  EXPECT_EQ(by_name["external"]["trusted"], false);
  EXPECT_NE(by_name["external"]["isolation"].get<std::string>().find("evaluators/python"), std::string::npos);
  EXPECT_EQ(by_name["code"]["trusted"], false);
  CommandRun text = Accelopt("targets");
  EXPECT_NE(text.out.find("NOT TRUSTED"), std::string::npos) << text.out;
}

// Issue 24: an engine run as an ordinary user isolates its kernels in a user
// namespace of their own where the machine lets an ordinary user make one
// (`unshare` tells, independently of the engine): `targets` says trusted, and
// a correct kernel is ok. Where the machine refuses, the engine says so in
// `targets` and calls no result ok: a correct kernel is suspect, with the
// refusal in its message.
TEST(CliBadInput, AnOrdinaryUsersEngineIsIsolatedOrCallsNoResultOk) {
  if (geteuid() != 0 || access("/usr/bin/setpriv", X_OK) != 0)
    GTEST_SKIP() << "needs root and setpriv, to run the engine as an ordinary user";
  testing::TempDir home;
  ASSERT_TRUE(SaveMadeUpProfile(home.path()));
  std::filesystem::create_directories(home.path() + "/lock");
  for (const std::string& dir : {home.path(), home.path() + "/lock"})
    std::filesystem::permissions(dir, std::filesystem::perms::all);
  const std::string nobody = "/usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups ";
  const std::string as_nobody = nobody + "env ACCELOPT_HOME=" + home.path() + " ACCELOPT_CACHE=" + home.path() +
                                "/cache ACCELOPT_LOCK_DIR=" + home.path() + "/lock " + ACCELOPT_BINARY + " ";
  // A build inside a folder only its owner may enter (a clone in `mktemp -d`)
  // cannot be run by the ordinary user at all: nothing to learn there.
  if (testing::RunShell(nobody + "test -x " + std::string(ACCELOPT_BINARY)).exit_code != 0)
    GTEST_SKIP() << "an ordinary user cannot reach " << ACCELOPT_BINARY << " (a folder above it is private)";
  const bool machine_allows =
      testing::RunShell(nobody + "unshare --user --map-root-user --pid --fork --ipc --net --mount --mount-proc true")
          .exit_code == 0;
  CommandRun targets = testing::RunShell(as_nobody + "targets --json");
  ASSERT_EQ(targets.exit_code, 0) << targets.out;
  const Json cpu = Json::parse(targets.out)[0];
  EXPECT_EQ(cpu["name"], "cpu");
  EXPECT_EQ(cpu["trusted"], machine_allows) << targets.out;
  EXPECT_NE(cpu["isolation"].get<std::string>().find(machine_allows ? "user namespace" : "refused"),
            std::string::npos)
      << targets.out;

  CommandRun eval = testing::RunShell(as_nobody + "eval silu --shape test --json" + kSuite);
  const Json j = Json::parse(eval.out.substr(eval.out.find('{')));
  if (machine_allows) {
    EXPECT_EQ(eval.exit_code, 0) << eval.out;
    EXPECT_EQ(j["status"], "ok") << eval.out;
    return;
  }
  EXPECT_EQ(eval.exit_code, 3) << eval.out;
  EXPECT_EQ(j["status"], "suspect") << eval.out;
  EXPECT_NE(j["message"].get<std::string>().find("could not be isolated from the machine"), std::string::npos)
      << eval.out;
}

// The targets are listed with whether they run here, and why not; a target
// that is not registered, or cannot run here, is an error naming the reason.
TEST(CliBadInput, TargetsSayWhetherTheyRunHereAndAnUnknownOneIsNamed) {
  CommandRun list = Accelopt("targets --json");
  ASSERT_EQ(list.exit_code, 0) << list.out;
  Json targets = Json::parse(list.out);
  ASSERT_TRUE(targets.is_array()) << list.out;
  ASSERT_FALSE(targets.empty());
  EXPECT_EQ(targets[0]["name"], "cpu");
  EXPECT_EQ(targets[0]["available"], true) << list.out;

  CommandRun unknown = Accelopt("eval silu x.cpp --target nosuch" + kSuite);
  EXPECT_EQ(unknown.exit_code, 2) << unknown.out;
  EXPECT_NE(unknown.out.find("unknown target 'nosuch' (known: cpu"), std::string::npos) << unknown.out;

  // Without a compiler on $PATH, the cpu target says so, and refuses to build.
  testing::TempDir kernel;
  ASSERT_TRUE(WriteFile(kernel.path() + "/k.cpp", "").ok());
  CommandRun bare = testing::RunShell("PATH=/nonexistent " + std::string(ACCELOPT_BINARY) + " targets");
  EXPECT_NE(bare.out.find("cpu        unavailable"), std::string::npos) << bare.out;
  EXPECT_NE(bare.out.find("the compiler 'g++' is not on $PATH"), std::string::npos) << bare.out;
  CommandRun refused = testing::RunShell("PATH=/nonexistent " + std::string(ACCELOPT_BINARY) + " eval silu " +
                                         kernel.path() + "/k.cpp --shape test" + kSuite);
  EXPECT_EQ(refused.exit_code, 1) << refused.out;
  EXPECT_NE(refused.out.find("the cpu target is not available here: the compiler 'g++' is not on $PATH"),
            std::string::npos)
      << refused.out;
}

// A shape that needs more memory than the machine has is refused before
// anything is drawn, naming what it needs and what there is.
TEST(CliBadInput, AShapeTooLargeForTheMachineIsRefusedUpFront) {
  testing::TempDir dir;
  const std::string fixture = std::string(ACCELOPT_SOURCE_DIR) + "/tests/fixtures/scale";
  std::filesystem::create_directories(dir.path() + "/scale");
  for (const char* file : {"reference.cpp", "baseline.cpp"})
    std::filesystem::copy_file(fixture + "/" + file, dir.path() + "/scale/" + file);
  std::string yaml = *ReadFile(fixture + "/task.yaml");
  yaml.replace(yaml.find("bench: {M: 40, N: 50}"), 21, "bench: {M: 5000000, N: 500000}");
  std::ofstream(dir.path() + "/scale/task.yaml") << yaml;
  CommandRun run = Accelopt("eval scale " + fixture + "/baseline.cpp --suite " + dir.path());
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_NE(run.out.find("task 'scale' at shape 'bench' needs at least 80000.0 GB of memory"), std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("GB available"), std::string::npos) << run.out;
}

}  // namespace
}  // namespace accelopt
