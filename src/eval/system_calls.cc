#include "eval/trapped_calls.h"

#include <sys/syscall.h>

namespace accelopt::eval {

std::span<const TrappedCall> TrappedCalls() {
  using W = TrappedCall::When;
  static const TrappedCall calls[] = {
      // Other processes and programs.
      {SYS_fork, "fork", "create a process", W::kAlways},
      {SYS_vfork, "vfork", "create a process", W::kAlways},
      {SYS_clone, "clone", "create a process", W::kWithArguments},  // threads pass
      {SYS_execve, "execve", "run a program", W::kAlways},
      {SYS_execveat, "execveat", "run a program", W::kAlways},
      {SYS_kill, "kill", "signal another process", W::kAlways},
      {SYS_tkill, "tkill", "signal a thread by id", W::kAlways},
      {SYS_tgkill, "tgkill", "signal another process", W::kWithArguments},  // its own pass
      {SYS_rt_sigqueueinfo, "rt_sigqueueinfo", "signal another process", W::kWithArguments},
      {SYS_rt_tgsigqueueinfo, "rt_tgsigqueueinfo", "signal another process", W::kWithArguments},
      // Signal handlers and timers: nothing of the kernel may run on its own schedule.
      {SYS_rt_sigaction, "rt_sigaction", "install a signal handler", W::kWithArguments},  // reading one passes
      {SYS_timer_create, "timer_create", "create a timer", W::kAlways},
      {SYS_timer_settime, "timer_settime", "arm a timer", W::kAlways},
      {SYS_setitimer, "setitimer", "arm a timer", W::kAlways},
      {SYS_alarm, "alarm", "arm a timer", W::kAlways},
      {SYS_pidfd_open, "pidfd_open", "reach another process", W::kAlways},
      {SYS_pidfd_send_signal, "pidfd_send_signal", "signal another process", W::kAlways},
      {SYS_pidfd_getfd, "pidfd_getfd", "take another process's file", W::kAlways},
      {SYS_ptrace, "ptrace", "trace another process", W::kAlways},
      {SYS_process_vm_readv, "process_vm_readv", "read another process's memory", W::kAlways},
      {SYS_process_vm_writev, "process_vm_writev", "write another process's memory", W::kAlways},
      // Network.
      {SYS_socket, "socket", "open a socket", W::kAlways},
      {SYS_socketpair, "socketpair", "open a socket", W::kAlways},
      {SYS_connect, "connect", "connect a socket", W::kAlways},
      // Files: opened for reading while the library loads, not at all afterwards; never changed.
      {SYS_open, "open", "open a file", W::kWithArguments},
      {SYS_openat, "openat", "open a file", W::kWithArguments},
      {SYS_openat2, "openat2", "open a file", W::kAlways},
      {SYS_creat, "creat", "create a file", W::kAlways},
      {SYS_name_to_handle_at, "name_to_handle_at", "open a file by handle", W::kAlways},
      {SYS_open_by_handle_at, "open_by_handle_at", "open a file by handle", W::kAlways},
      {SYS_io_uring_setup, "io_uring_setup", "asynchronous I/O, which these rules cannot see", W::kAlways},
      {SYS_io_uring_enter, "io_uring_enter", "asynchronous I/O, which these rules cannot see", W::kAlways},
      {SYS_io_uring_register, "io_uring_register", "asynchronous I/O, which these rules cannot see", W::kAlways},
      {SYS_unlink, "unlink", "delete a file", W::kAlways},
      {SYS_unlinkat, "unlinkat", "delete a file", W::kAlways},
      {SYS_rmdir, "rmdir", "delete a folder", W::kAlways},
      {SYS_rename, "rename", "rename a file", W::kAlways},
      {SYS_renameat, "renameat", "rename a file", W::kAlways},
      {SYS_renameat2, "renameat2", "rename a file", W::kAlways},
      {SYS_mkdir, "mkdir", "create a folder", W::kAlways},
      {SYS_mkdirat, "mkdirat", "create a folder", W::kAlways},
      {SYS_mknod, "mknod", "create a file", W::kAlways},
      {SYS_mknodat, "mknodat", "create a file", W::kAlways},
      {SYS_link, "link", "link a file", W::kAlways},
      {SYS_linkat, "linkat", "link a file", W::kAlways},
      {SYS_symlink, "symlink", "link a file", W::kAlways},
      {SYS_symlinkat, "symlinkat", "link a file", W::kAlways},
      {SYS_chmod, "chmod", "change a file's permissions", W::kAlways},
      {SYS_fchmodat, "fchmodat", "change a file's permissions", W::kAlways},
      {SYS_chown, "chown", "change a file's owner", W::kAlways},
      {SYS_lchown, "lchown", "change a file's owner", W::kAlways},
      {SYS_fchownat, "fchownat", "change a file's owner", W::kAlways},
      {SYS_truncate, "truncate", "change a file", W::kAlways},
      {SYS_ftruncate, "ftruncate", "resize a file or shared memory", W::kAlways},
      {SYS_fallocate, "fallocate", "resize a file or shared memory", W::kAlways},
      // The machine and the sandbox itself.
      {SYS_setrlimit, "setrlimit", "change its limits", W::kAlways},
      {SYS_prlimit64, "prlimit64", "change its limits", W::kWithArguments},  // reading them passes
      {SYS_setpriority, "setpriority", "change scheduling priority", W::kAlways},
      {SYS_sched_setscheduler, "sched_setscheduler", "change scheduling policy", W::kAlways},
      {SYS_sched_setattr, "sched_setattr", "change scheduling policy", W::kAlways},
      {SYS_unshare, "unshare", "leave its namespaces", W::kAlways},
      {SYS_setns, "setns", "enter other namespaces", W::kAlways},
      {SYS_mount, "mount", "mount a file system", W::kAlways},
      {SYS_umount2, "umount2", "unmount a file system", W::kAlways},
      {SYS_pivot_root, "pivot_root", "change the root folder", W::kAlways},
      {SYS_chroot, "chroot", "change the root folder", W::kAlways},
      {SYS_reboot, "reboot", "reboot the machine", W::kAlways},
      {SYS_init_module, "init_module", "load a kernel module", W::kAlways},
      {SYS_finit_module, "finit_module", "load a kernel module", W::kAlways},
      {SYS_delete_module, "delete_module", "unload a kernel module", W::kAlways},
      {SYS_kexec_load, "kexec_load", "replace the running kernel", W::kAlways},
      {SYS_kexec_file_load, "kexec_file_load", "replace the running kernel", W::kAlways},
      {SYS_swapon, "swapon", "change swap", W::kAlways},
      {SYS_swapoff, "swapoff", "change swap", W::kAlways},
      {SYS_sethostname, "sethostname", "rename the machine", W::kAlways},
      {SYS_setdomainname, "setdomainname", "rename the machine", W::kAlways},
      {SYS_settimeofday, "settimeofday", "set the clock", W::kAlways},
      {SYS_clock_settime, "clock_settime", "set the clock", W::kAlways},
      {SYS_clock_adjtime, "clock_adjtime", "adjust the clock", W::kAlways},
      {SYS_adjtimex, "adjtimex", "adjust the clock", W::kAlways},
      {SYS_bpf, "bpf", "load a kernel program", W::kAlways},
      {SYS_userfaultfd, "userfaultfd", "handle its own page faults", W::kAlways},
      {SYS_keyctl, "keyctl", "use the kernel keyring", W::kAlways},
      {SYS_add_key, "add_key", "use the kernel keyring", W::kAlways},
      {SYS_request_key, "request_key", "use the kernel keyring", W::kAlways},
      // Code: no executable memory once the library is loaded.
      {SYS_mmap, "mmap", "map executable memory", W::kAfterLoad},
      {SYS_mprotect, "mprotect", "make memory executable", W::kAfterLoad},
      {SYS_pkey_mprotect, "pkey_mprotect", "make memory executable", W::kAfterLoad},
  };
  return calls;
}

std::string DescribeTrappedCall(long number) {
  for (const auto& c : TrappedCalls())
    if (c.number == number) return std::string(c.name) + ": " + c.meaning;
  return "system call " + std::to_string(number);
}

}  // namespace accelopt::eval
