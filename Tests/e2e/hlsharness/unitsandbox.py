#!/usr/bin/python3
"""Run a command under the seccomp filters deploy/systemd/hls-origin.service asks systemd for, built the way
systemd 252 (Debian 12) builds them, without systemd (CI containers have no systemd as PID 1):

  SystemCallFilter=@system-service + SystemCallErrorNumber=EPERM
      an allow-list of the group as `systemd-analyze syscall-filter` expands it; anything else fails with EPERM
  MemoryDenyWriteExecute=yes
      mmap with PROT_WRITE|PROT_EXEC, mprotect/pkey_mprotect adding PROT_EXEC, shmat with SHM_EXEC: EPERM
      (systemd's seccomp_memory_deny_write_execute)
  RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX
      socket() of any other family: EAFNOSPPORT
  NoNewPrivileges=yes (libseccomp sets it before loading the filters)

  /usr/bin/python3 unitsandbox.py [--only mdwe|syscalls|families]... -- COMMAND ARGS...

Needs Debian's python3-seccomp (libseccomp's binding), so run it with the system's /usr/bin/python3.
"""
import errno
import os
import subprocess
import sys

import seccomp

PROT_WRITE, PROT_EXEC = 0x2, 0x4
SHM_EXEC = 0o100000
AF_UNIX, AF_INET, AF_INET6 = 1, 2, 10


def group_syscalls(group, seen=None):
    """The system calls of a systemd group (`@system-service`), nested groups expanded."""
    seen = set() if seen is None else seen
    seen.add(group)
    out = subprocess.run(["systemd-analyze", "syscall-filter", group], check=True, capture_output=True,
                         text=True).stdout
    names = set()
    for line in out.splitlines()[1:]:
        item = line.strip()
        if not item or item.startswith("#"):
            continue
        if item.startswith("@"):
            if item not in seen:
                names |= group_syscalls(item, seen)
        else:
            names.add(item)
    return names


def allow_list(group):
    f = seccomp.SyscallFilter(defaction=seccomp.ERRNO(errno.EPERM))
    known = 0
    for name in sorted(group_syscalls(group)):
        try:
            f.add_rule(seccomp.ALLOW, name)
            known += 1
        except (RuntimeError, ValueError, OSError):
            pass  # not a system call of this architecture (arm_fadvise64_64...)
    if known < 100:
        sys.exit(f"unitsandbox: only {known} system calls in {group}: systemd-analyze output not understood")
    return f


def memory_deny_write_execute():
    f = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    wx = PROT_WRITE | PROT_EXEC
    f.add_rule(seccomp.ERRNO(errno.EPERM), "mmap", seccomp.Arg(2, seccomp.MASKED_EQ, wx, wx))
    for name in ("mprotect", "pkey_mprotect"):
        f.add_rule(seccomp.ERRNO(errno.EPERM), name, seccomp.Arg(2, seccomp.MASKED_EQ, PROT_EXEC, PROT_EXEC))
    f.add_rule(seccomp.ERRNO(errno.EPERM), "shmat", seccomp.Arg(2, seccomp.MASKED_EQ, SHM_EXEC, SHM_EXEC))
    return f


def address_families(allowed=(AF_UNIX, AF_INET, AF_INET6)):
    f = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    deny = seccomp.ERRNO(errno.EAFNOSUPPORT)
    top = max(allowed)
    for family in range(0, top):
        if family not in allowed:
            f.add_rule(deny, "socket", seccomp.Arg(0, seccomp.EQ, family))
    f.add_rule(deny, "socket", seccomp.Arg(0, seccomp.GT, top))
    return f


# The allow-list goes last: it refuses seccomp() itself, so no filter can be loaded after it.
FILTERS = {"mdwe": memory_deny_write_execute, "families": address_families,
           "syscalls": lambda: allow_list("@system-service")}


def main(argv):
    if "--" not in argv:
        sys.exit(__doc__)
    split = argv.index("--")
    options, command = argv[:split], argv[split + 1:]
    chosen = {options[i + 1] for i, o in enumerate(options) if o == "--only"} or set(FILTERS)
    only = [name for name in FILTERS if name in chosen]
    # Built before any is loaded: building one runs systemd-analyze, which the allow-list might refuse.
    filters = [FILTERS[name]() for name in only]
    for f in filters:
        f.load()
    os.execvp(command[0], command)


if __name__ == "__main__":
    main(sys.argv[1:])
