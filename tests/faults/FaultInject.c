// Fault injection for the tests, loaded with LD_PRELOAD into the real tinyscope binary (never
// linked into it): counts the file-system calls the environment selects and, at the N-th, fails
// it with an errno or kills the process (SIGKILL) before it runs. Nothing in the product knows.
//
//   FAULT_OPS         comma list of calls to count: write, fsync, fdatasync, rename, renameat,
//                     renameat2, link, linkat, unlink, unlinkat, mkdir, mkdirat, rmdir (default: all)
//   FAULT_PATH        count only calls on a path containing this text (for write/fsync: the fd's
//                     path; for *at calls: the folder fd's path joined with the name)
//   FAULT_AT          the counted call (1-based) that faults; unset or 0: none
//   FAULT_ACTION      kill (SIGKILL before the call) or an errno name: EIO (default), ENOSPC, EINVAL,
//                     EPERM, EACCES, EROFS, EDQUOT
//   FAULT_NO_EXCHANGE 1: renameat2(…, RENAME_EXCHANGE) fails with EINVAL, as on a filesystem
//                     without it (not counted)
//   FAULT_DELAY_MS    sleep this long before every counted call (slow disks, wider races)
//   FAULT_COUNT_FILE  at exit, write the number of counted calls to this file
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

static long g_counted;

static const char* env(const char* name)
{
    const char* v = getenv(name);
    return v && *v ? v : NULL;
}

static int selected(const char* op)
{
    const char* ops = env("FAULT_OPS");
    if (!ops) return 1;
    const size_t n = strlen(op);
    for (const char* p = ops;;) {
        const char* comma = strchr(p, ',');
        const size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == n && strncmp(p, op, n) == 0) return 1;
        if (!comma) return 0;
        p = comma + 1;
    }
}

static int fdPath(int fd, char* out, size_t size)
{
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    const ssize_t n = readlink(link, out, size - 1);
    if (n <= 0) return 0;
    out[n] = 0;
    return 1;
}

// `path` relative to the folder `dirfd` as an absolute path (best effort).
static void resolveAt(int dirfd, const char* path, char* out, size_t size)
{
    char base[PATH_MAX] = "";
    if (!path) path = "";
    if (path[0] == '/') {
        snprintf(out, size, "%s", path);
        return;
    }
    if (dirfd == AT_FDCWD) {
        if (!getcwd(base, sizeof base)) base[0] = 0;
    } else if (!fdPath(dirfd, base, sizeof base)) {
        base[0] = 0;
    }
    snprintf(out, size, "%s/%s", base, path);
}

static int pathMatches(const char* path)
{
    const char* filter = env("FAULT_PATH");
    return !filter || (path && strstr(path, filter));
}

static int atMatches(int dirfd, const char* path)
{
    char full[2 * PATH_MAX];
    if (!env("FAULT_PATH")) return 1;
    resolveAt(dirfd, path, full, sizeof full);
    return pathMatches(full);
}

static int fdMatches(int fd)
{
    char p[PATH_MAX];
    if (!env("FAULT_PATH")) return 1;
    return fdPath(fd, p, sizeof p) && pathMatches(p);
}

static int errnoOf(const char* name)
{
    static const struct {
        const char* name;
        int value;
    } known[] = {{"EIO", EIO}, {"ENOSPC", ENOSPC}, {"EINVAL", EINVAL}, {"EPERM", EPERM},
                 {"EACCES", EACCES}, {"EROFS", EROFS}, {"EDQUOT", EDQUOT}};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; ++i)
        if (strcmp(known[i].name, name) == 0) return known[i].value;
    return EIO;
}

// A selected call: 0 to run it, else the errno it fails with.
static int fault(int matches)
{
    if (!matches) return 0;
    const char* delay = env("FAULT_DELAY_MS");
    if (delay) {
        const long ms = atol(delay);
        struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
    const long n = __atomic_add_fetch(&g_counted, 1, __ATOMIC_SEQ_CST);
    const char* at = env("FAULT_AT");
    if (!at || atol(at) != n) return 0;
    const char* action = env("FAULT_ACTION");
    if (action && strcmp(action, "kill") == 0) raise(SIGKILL);
    return errnoOf(action ? action : "EIO");
}

#define REAL(name)                                                   \
    ({                                                               \
        static __typeof__(&name) real_;                              \
        if (!real_) real_ = (__typeof__(&name))dlsym(RTLD_NEXT, #name); \
        real_;                                                       \
    })
#define FAIL_WITH(e) \
    do {             \
        errno = (e); \
        return -1;   \
    } while (0)

ssize_t write(int fd, const void* buf, size_t n)
{
    const int e = selected("write") ? fault(fdMatches(fd)) : 0;
    if (e) FAIL_WITH(e);
    return REAL(write)(fd, buf, n);
}

int fsync(int fd)
{
    const int e = selected("fsync") ? fault(fdMatches(fd)) : 0;
    if (e) FAIL_WITH(e);
    return REAL(fsync)(fd);
}

int fdatasync(int fd)
{
    const int e = selected("fdatasync") ? fault(fdMatches(fd)) : 0;
    if (e) FAIL_WITH(e);
    return REAL(fdatasync)(fd);
}

int rename(const char* from, const char* to)
{
    const int e = selected("rename") ? fault(atMatches(AT_FDCWD, from) || atMatches(AT_FDCWD, to)) : 0;
    if (e) FAIL_WITH(e);
    return REAL(rename)(from, to);
}

int renameat(int fromFd, const char* from, int toFd, const char* to)
{
    const int e = selected("renameat") ? fault(atMatches(fromFd, from) || atMatches(toFd, to)) : 0;
    if (e) FAIL_WITH(e);
    return REAL(renameat)(fromFd, from, toFd, to);
}

int renameat2(int fromFd, const char* from, int toFd, const char* to, unsigned flags)
{
    if ((flags & RENAME_EXCHANGE) && env("FAULT_NO_EXCHANGE")) FAIL_WITH(EINVAL);
    const int e = selected("renameat2") ? fault(atMatches(fromFd, from) || atMatches(toFd, to)) : 0;
    if (e) FAIL_WITH(e);
    return REAL(renameat2)(fromFd, from, toFd, to, flags);
}

int link(const char* from, const char* to)
{
    const int e = selected("link") ? fault(atMatches(AT_FDCWD, to)) : 0;
    if (e) FAIL_WITH(e);
    return REAL(link)(from, to);
}

int linkat(int fromFd, const char* from, int toFd, const char* to, int flags)
{
    const int e = selected("linkat") ? fault(atMatches(toFd, to)) : 0;
    if (e) FAIL_WITH(e);
    return REAL(linkat)(fromFd, from, toFd, to, flags);
}

int unlink(const char* path)
{
    const int e = selected("unlink") ? fault(atMatches(AT_FDCWD, path)) : 0;
    if (e) FAIL_WITH(e);
    return REAL(unlink)(path);
}

int unlinkat(int dirfd, const char* path, int flags)
{
    const int e = selected("unlinkat") ? fault(atMatches(dirfd, path)) : 0;
    if (e) FAIL_WITH(e);
    return REAL(unlinkat)(dirfd, path, flags);
}

int mkdir(const char* path, mode_t mode)
{
    const int e = selected("mkdir") ? fault(atMatches(AT_FDCWD, path)) : 0;
    if (e) FAIL_WITH(e);
    return REAL(mkdir)(path, mode);
}

int mkdirat(int dirfd, const char* path, mode_t mode)
{
    const int e = selected("mkdirat") ? fault(atMatches(dirfd, path)) : 0;
    if (e) FAIL_WITH(e);
    return REAL(mkdirat)(dirfd, path, mode);
}

int rmdir(const char* path)
{
    const int e = selected("rmdir") ? fault(atMatches(AT_FDCWD, path)) : 0;
    if (e) FAIL_WITH(e);
    return REAL(rmdir)(path);
}

__attribute__((destructor)) static void reportCount(void)
{
    const char* file = env("FAULT_COUNT_FILE");
    if (!file) return;
    FILE* f = fopen(file, "w");
    if (!f) return;
    fprintf(f, "%ld\n", __atomic_load_n(&g_counted, __ATOMIC_SEQ_CST));
    fclose(f);
}
