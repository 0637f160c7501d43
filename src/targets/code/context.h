#pragma once
/// What the prompts of a code task tell the agents beside the files they may
/// change: the tests and the benchmark (read-only), the language's toolchain,
/// and where the benchmark's time goes (cProfile, for Python).

#include <cstddef>
#include <filesystem>
#include <string>

#include "suite/task.h"

namespace accelopt::code {

/// At most this much of the tests' and the benchmark's files in a prompt, and of one of them.
inline constexpr size_t kContextBytes = 24000, kContextFileBytes = 10000;

/// The files the task's tests and benchmark run, as far as its definition
/// names them: those it lists in `context`, then those its test and bench
/// commands name by path (a folder: the files directly in it), the
/// candidate's own files left out; each as `FILE: path` and a fenced block,
/// within `max_bytes` (a file cut short, or left out, says so). A line saying
/// none was found when none was.
std::string ContextText(const std::filesystem::path& base, const suite::CodeSpec& spec,
                        size_t max_bytes = kContextBytes, size_t max_file_bytes = kContextFileBytes);

/// The version of `language`'s toolchain on $PATH, in one line ("python3
/// --version: Python 3.11.7"), asked once per language and kept; a line
/// saying why there is none otherwise.
std::string ToolchainText(const std::string& language);

/// A sitecustomize.py that profiles each Python process started with its
/// folder on $PYTHONPATH (cProfile, its main thread) and writes its top
/// `entries` by cumulative time to $ACCELOPT_PROFILE_DIR/profile.<pid>.txt at exit.
std::string ProfilerSiteCustomize(int entries = 25);

/// What the processes profiled by ProfilerSiteCustomize wrote to `dir`: the one
/// that ran longest, its paths under `root` (the candidate's copy) made
/// relative, within `max_bytes`, and how many there were; "" when none wrote.
std::string ReadPythonProfiles(const std::filesystem::path& dir, const std::filesystem::path& root,
                               size_t max_bytes = 4000);

}  // namespace accelopt::code
