#include "eval/system_calls.h"

#include <seccomp.h>

#include <cstdlib>

namespace accelopt::eval {

std::span<const AllowedCall> AllowedCalls() {
  using W = AllowedCall::When;
  static const AllowedCall calls[] = {
      // Memory.
      {"brk", W::kAlways},
      {"mmap", W::kNoExecAfterLoad},
      {"mprotect", W::kNoExecAfterLoad},
      {"munmap", W::kAlways},
      {"mremap", W::kAlways},
      {"madvise", W::kAlways},
      {"mincore", W::kAlways},
      {"membarrier", W::kAlways},
      {"get_mempolicy", W::kAlways},
      {"set_mempolicy", W::kAlways},  // its own memory's NUMA placement (OpenBLAS binds its buffers)
      {"mbind", W::kAlways},
      // Threads, their synchronisation and scheduling on the cores it was given.
      {"clone", W::kThreadsOnly},
      {"set_tid_address", W::kAlways},
      {"set_robust_list", W::kAlways},
      {"get_robust_list", W::kAlways},
      {"rseq", W::kAlways},
      {"futex", W::kAlways},
      {"futex_waitv", W::kAlways},
      {"sched_yield", W::kAlways},
      {"sched_getaffinity", W::kAlways},
      {"sched_setaffinity", W::kAlways},  // within its PID namespace and its cpuset
      {"sched_getparam", W::kAlways},
      {"sched_getscheduler", W::kAlways},
      {"sched_getattr", W::kAlways},
      {"sched_get_priority_max", W::kAlways},
      {"sched_get_priority_min", W::kAlways},
      {"getcpu", W::kAlways},
      {"exit", W::kAlways},
      {"exit_group", W::kAlways},
      {"restart_syscall", W::kAlways},
      // Signals: its own mask, its own process, and reading handlers.
      {"rt_sigprocmask", W::kAlways},
      {"rt_sigreturn", W::kAlways},
      {"sigaltstack", W::kAlways},
      {"rt_sigaction", W::kReadingOnly, 1},
      {"tgkill", W::kItselfOnly},
      // Clocks and sleeping.
      {"clock_gettime", W::kAlways},
      {"clock_getres", W::kAlways},
      {"gettimeofday", W::kAlways},
      {"time", W::kAlways},
      {"nanosleep", W::kAlways},
      {"clock_nanosleep", W::kAlways},
      // Files: read while the library loads; written only through the
      // descriptors it was given (its stdout and stderr).
      {"open", W::kReadOnlyOpen, 1},
      {"openat", W::kReadOnlyOpen, 2},
      {"close", W::kAlways},
      {"read", W::kAlways},
      {"pread64", W::kAlways},
      {"readv", W::kAlways},
      {"preadv", W::kAlways},
      {"write", W::kAlways},
      {"writev", W::kAlways},
      {"lseek", W::kAlways},
      {"fstat", W::kAlways},
      {"stat", W::kAlways},
      {"lstat", W::kAlways},
      {"newfstatat", W::kAlways},
      {"statx", W::kAlways},
      {"access", W::kAlways},
      {"faccessat", W::kAlways},
      {"faccessat2", W::kAlways},
      {"readlink", W::kAlways},
      {"readlinkat", W::kAlways},
      {"getdents64", W::kAlways},
      {"getcwd", W::kAlways},
      {"fcntl", W::kAlways},
      {"ioctl", W::kTerminalQuery},
      // Questions about itself and the machine.
      {"getpid", W::kAlways},
      {"gettid", W::kAlways},
      {"getppid", W::kAlways},
      {"getuid", W::kAlways},
      {"geteuid", W::kAlways},
      {"getgid", W::kAlways},
      {"getegid", W::kAlways},
      {"getrlimit", W::kAlways},
      {"prlimit64", W::kReadingOnly, 2},
      {"getrusage", W::kAlways},
      {"times", W::kAlways},
      {"uname", W::kAlways},
      {"sysinfo", W::kAlways},
      {"getrandom", W::kAlways},
      {"arch_prctl", W::kAlways},
      // The harness's own second filter, once the library is loaded.
      {"seccomp", W::kNarrowingOnly},
  };
  return calls;
}

namespace {

struct Meaning {
  const char* name;
  const char* meaning;
};

// What a refused call would have done, for the calls a kernel that cheats or
// attacks the machine reaches for first.
const Meaning kMeanings[] = {
      // Other processes and programs.
      {"fork", "create a process"},
      {"vfork", "create a process"},
      {"clone", "create a process"},
      {"execve", "run a program"},
      {"execveat", "run a program"},
      {"kill", "signal another process"},
      {"tkill", "signal a thread by id"},
      {"tgkill", "signal another process"},
      {"rt_sigqueueinfo", "signal another process"},
      {"rt_tgsigqueueinfo", "signal another process"},
      // Signal handlers and timers: nothing of the kernel may run on its own schedule.
      {"rt_sigaction", "install a signal handler"},
      {"timer_create", "create a timer"},
      {"timer_settime", "arm a timer"},
      {"setitimer", "arm a timer"},
      {"alarm", "arm a timer"},
      {"pidfd_open", "reach another process"},
      {"pidfd_send_signal", "signal another process"},
      {"pidfd_getfd", "take another process's file"},
      {"ptrace", "trace another process"},
      {"process_vm_readv", "read another process's memory"},
      {"process_vm_writev", "write another process's memory"},
      // Network.
      {"socket", "open a socket"},
      {"socketpair", "open a socket"},
      {"connect", "connect a socket"},
      // Files: opened for reading while the library loads, not at all afterwards; never changed.
      {"open", "open a file"},
      {"openat", "open a file"},
      {"openat2", "open a file"},
      {"creat", "create a file"},
      {"name_to_handle_at", "open a file by handle"},
      {"open_by_handle_at", "open a file by handle"},
      {"io_uring_setup", "asynchronous I/O, which these rules cannot see"},
      {"io_uring_enter", "asynchronous I/O, which these rules cannot see"},
      {"io_uring_register", "asynchronous I/O, which these rules cannot see"},
      {"unlink", "delete a file"},
      {"unlinkat", "delete a file"},
      {"rmdir", "delete a folder"},
      {"rename", "rename a file"},
      {"renameat", "rename a file"},
      {"renameat2", "rename a file"},
      {"mkdir", "create a folder"},
      {"mkdirat", "create a folder"},
      {"mknod", "create a file"},
      {"mknodat", "create a file"},
      {"link", "link a file"},
      {"linkat", "link a file"},
      {"symlink", "link a file"},
      {"symlinkat", "link a file"},
      {"chmod", "change a file's permissions"},
      {"fchmodat", "change a file's permissions"},
      {"chown", "change a file's owner"},
      {"lchown", "change a file's owner"},
      {"fchownat", "change a file's owner"},
      {"truncate", "change a file"},
      {"ftruncate", "resize a file or shared memory"},
      {"fallocate", "resize a file or shared memory"},
      // The machine and the sandbox itself.
      {"setrlimit", "change its limits"},
      {"prlimit64", "change its limits"},
      {"setpriority", "change scheduling priority"},
      {"sched_setscheduler", "change scheduling policy"},
      {"sched_setattr", "change scheduling policy"},
      {"unshare", "leave its namespaces"},
      {"setns", "enter other namespaces"},
      {"mount", "mount a file system"},
      {"umount2", "unmount a file system"},
      {"pivot_root", "change the root folder"},
      {"chroot", "change the root folder"},
      {"reboot", "reboot the machine"},
      {"init_module", "load a kernel module"},
      {"finit_module", "load a kernel module"},
      {"delete_module", "unload a kernel module"},
      {"kexec_load", "replace the running kernel"},
      {"kexec_file_load", "replace the running kernel"},
      {"swapon", "change swap"},
      {"swapoff", "change swap"},
      {"sethostname", "rename the machine"},
      {"setdomainname", "rename the machine"},
      {"settimeofday", "set the clock"},
      {"clock_settime", "set the clock"},
      {"clock_adjtime", "adjust the clock"},
      {"adjtimex", "adjust the clock"},
      {"bpf", "load a kernel program"},
      {"userfaultfd", "handle its own page faults"},
      {"keyctl", "use the kernel keyring"},
      {"add_key", "use the kernel keyring"},
      {"request_key", "use the kernel keyring"},
      // Code: no executable memory once the library is loaded.
      {"mmap", "map executable memory"},
      {"mprotect", "make memory executable"},
      {"pkey_mprotect", "make memory executable"},
      // Shared memory and objects that could outlive the evaluation or reach past it.
      {"shmget", "create System V shared memory"},
      {"shmat", "attach System V shared memory"},
      {"msgget", "create a System V message queue"},
      {"semget", "create System V semaphores"},
      {"memfd_create", "create shared memory"},
      {"mq_open", "open a message queue"},
      {"perf_event_open", "read the machine's performance counters"},
      {"fchmod", "change a file's permissions"},
      {"fchown", "change a file's owner"},
      {"kcmp", "compare another process's resources"},
      {"setsid", "leave its process group"},
      {"setpgid", "leave its process group"},
      {"ioctl", "control a device (only the terminal query passes)"},
      {"seccomp", "change its system-call filter"},
      {"prctl", "change how the kernel treats its process"},
};

}  // namespace

std::string DescribeRefusedCall(long number) {
  char* resolved = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, static_cast<int>(number));
  if (!resolved) return "system call " + std::to_string(number);
  std::string name = resolved;
  std::free(resolved);
  for (const auto& m : kMeanings)
    if (name == m.name) return name + ": " + m.meaning;
  return name + ": not among the calls a kernel may make";
}

}  // namespace accelopt::eval
