/* The journal's disk calls stamped on CLOCK_MONOTONIC (Python's time.monotonic), for the stamped
 * session of benchmarks/bench_daemon.py only: loaded with LD_PRELOAD into that daemon, it records
 * the entry and return of every fsync, fdatasync and pwrite (SQLite's write-ahead file's writes
 * and its commit's sync), which the benchmark reads through ctypes at the session's end. It
 * changes nothing the calls do. Built by the benchmark with the system's C compiler. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define STAMPS (1 << 18)

/* kind: 1 fsync, 2 fdatasync, 3 pwrite; each call's entry and return in seconds */
int sync_stamp_kind[STAMPS];
int sync_stamp_fd[STAMPS];
double sync_stamp_enter[STAMPS];
double sync_stamp_leave[STAMPS];
volatile long sync_stamp_count = 0; /* every call, noted or not: past STAMPS the calls are counted, not kept */
const long sync_stamp_capacity = STAMPS;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void note(int kind, int fd, double enter, double leave) {
    long i = __atomic_fetch_add(&sync_stamp_count, 1, __ATOMIC_RELAXED);
    if (i < STAMPS) {
        sync_stamp_kind[i] = kind;
        sync_stamp_fd[i] = fd;
        sync_stamp_enter[i] = enter;
        sync_stamp_leave[i] = leave;
    }
}

/* Each wrapper calls the real function and notes its entry and return; errno is kept as the real
 * call left it (SQLite reads it after a failed write or sync). */
#define STAMPED(kind, fd, type, name, params, args)                                   \
    type name params {                                                                 \
        static type(*real) params = NULL;                                              \
        if (!real) real = (type(*) params)dlsym(RTLD_NEXT, #name);                     \
        double enter = now();                                                          \
        type r = real args;                                                            \
        int saved = errno;                                                             \
        note(kind, fd, enter, now());                                                  \
        errno = saved;                                                                 \
        return r;                                                                      \
    }

STAMPED(1, fd, int, fsync, (int fd), (fd))
STAMPED(2, fd, int, fdatasync, (int fd), (fd))
STAMPED(3, fd, ssize_t, pwrite64, (int fd, const void *buf, size_t count, off_t offset), (fd, buf, count, offset))
STAMPED(3, fd, ssize_t, pwrite, (int fd, const void *buf, size_t count, off_t offset), (fd, buf, count, offset))
