/* landlock_exec: runs a program that may only write inside the folders it is given (issue 45).
 *
 *   landlock_exec [--rw DIR]... [--ro PATH]... [--rx PATH]... -- PROGRAM [ARGS...]
 *
 * The emulated Cortex-M7 reaches the host's file system through QEMU's semihosting (open, read,
 * write, remove, rename, system() is not enabled by QEMU for Arm). A program that someone else's
 * export folder produced must not see the host beyond its own run folder, so QEMU runs under a
 * Landlock ruleset (Linux >= 5.13, no privileges needed) made here before exec:
 *   --rw DIR   everything inside DIR (the run folder);
 *   --ro PATH  read a file, or list and read a folder's files (the ELF, the plugin, /etc/ld.so.cache);
 *   --rx PATH  as --ro, and execute (QEMU's own binary and its libraries: /usr, /lib, /lib64);
 * nothing else: no other file can be opened, created, removed, renamed or truncated, TCP bind and
 * connect are denied where the kernel's Landlock knows them (ABI >= 4), and abstract UNIX sockets and
 * signals outside the sandbox where it can scope them (ABI >= 6). /dev/null is writable.
 *
 * Exit 125 with one line on stderr when Landlock is not available (a kernel without it, or with it
 * disabled at boot) or a rule cannot be made; the caller decides (docs/DEVICE_RUNNER.md).
 * Plain C, Linux UAPI headers only; built with the host's gcc by run_export.sh (cached). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif

/* Our own layout of the kernel's structs (identical to <linux/landlock.h>'s newest ones), so that
 * older headers (Debian 12's describe ABI 2) still build a launcher that uses a newer kernel's rules. */
struct ts_ruleset_attr {
    uint64_t handled_access_fs;
    uint64_t handled_access_net;
    uint64_t scoped;
};
struct ts_path_beneath_attr {
    uint64_t allowed_access;
    int32_t parent_fd;
} __attribute__((packed));

#define TS_RULE_PATH_BENEATH 1
#define TS_ACCESS_NET_BIND_TCP (1ULL << 0)
#define TS_ACCESS_NET_CONNECT_TCP (1ULL << 1)
#define TS_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define TS_SCOPE_SIGNAL (1ULL << 1)

static const uint64_t kFsAbi1 = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE |
                                LANDLOCK_ACCESS_FS_READ_DIR | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
                                LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
                                LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
                                LANDLOCK_ACCESS_FS_MAKE_SYM;
static const uint64_t kFileRights = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE |
                                    LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_IOCTL_DEV;

static int fail(const char* what, const char* path)
{
    fprintf(stderr, "landlock_exec: %s%s%s: %s\n", what, path ? " " : "", path ? path : "", strerror(errno));
    return 125;
}

/* Adds PATH with `access` (narrowed to what a file may carry when PATH is not a folder). */
static int add_rule(int ruleset, const char* path, uint64_t access, uint64_t handled)
{
    const int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0) return fail("cannot open", path);
    struct stat st;
    if (fstat(fd, &st) != 0) return fail("cannot stat", path);
    if (!S_ISDIR(st.st_mode)) access &= kFileRights;
    struct ts_path_beneath_attr rule = {access & handled, fd};
    if (syscall(SYS_landlock_add_rule, ruleset, TS_RULE_PATH_BENEATH, &rule, 0) != 0) return fail("cannot add the rule for", path);
    close(fd);
    return 0;
}

int main(int argc, char** argv)
{
    const long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    if (abi < 1) {
        fprintf(stderr, "landlock_exec: the kernel has no Landlock (%s): the emulated program cannot be confined to its run folder\n",
                strerror(errno));
        return 125;
    }
    struct ts_ruleset_attr attr = {kFsAbi1, 0, 0};
    if (abi >= 2) attr.handled_access_fs |= LANDLOCK_ACCESS_FS_REFER;
    if (abi >= 3) attr.handled_access_fs |= LANDLOCK_ACCESS_FS_TRUNCATE;
    if (abi >= 4) attr.handled_access_net = TS_ACCESS_NET_BIND_TCP | TS_ACCESS_NET_CONNECT_TCP;
    if (abi >= 5) attr.handled_access_fs |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
    if (abi >= 6) attr.scoped = TS_SCOPE_ABSTRACT_UNIX_SOCKET | TS_SCOPE_SIGNAL;
    const size_t attrSize = abi >= 6 ? sizeof attr : abi >= 4 ? 2 * sizeof(uint64_t) : sizeof(uint64_t);
    const int ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, attrSize, 0);
    if (ruleset < 0) return fail("cannot create a ruleset", NULL);

    const uint64_t all = attr.handled_access_fs;
    const uint64_t ro = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
    const uint64_t rx = ro | LANDLOCK_ACCESS_FS_EXECUTE;
    int i = 1;
    for (; i < argc; ++i) {
        if (strcmp(argv[i], "--") == 0) {
            ++i;
            break;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "landlock_exec: %s needs a path\n", argv[i]);
            return 125;
        }
        uint64_t access;
        if (strcmp(argv[i], "--rw") == 0) access = all;
        else if (strcmp(argv[i], "--ro") == 0) access = ro;
        else if (strcmp(argv[i], "--rx") == 0) access = rx;
        else {
            fprintf(stderr, "landlock_exec: unknown option %s\n", argv[i]);
            return 125;
        }
        const int rc = add_rule(ruleset, argv[i + 1], access, all);
        if (rc) return rc;
        ++i;
    }
    if (i >= argc) {
        fprintf(stderr, "usage: landlock_exec [--rw DIR]... [--ro PATH]... [--rx PATH]... -- PROGRAM [ARGS...]\n");
        return 125;
    }
    /* Output to /dev/null is harmless; QEMU opens it for unused character devices. */
    const int rc = add_rule(ruleset, "/dev/null", LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE, all);
    if (rc) return rc;
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return fail("cannot set no_new_privs", NULL);
    if (syscall(SYS_landlock_restrict_self, ruleset, 0) != 0) return fail("cannot restrict itself", NULL);
    close(ruleset);
    execvp(argv[i], argv + i);
    return fail("cannot run", argv[i]);
}
