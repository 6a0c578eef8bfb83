/* The journal's disk calls stamped on CLOCK_MONOTONIC (Python's time.monotonic), for the stamped
 * session of benchmarks/bench_daemon.py only: loaded with LD_PRELOAD into that daemon, it records
 * the entry and return of every fsync, fdatasync and pwrite (SQLite's write-ahead file's writes
 * and its commit's sync), which the benchmark reads through ctypes at the session's end. It
 * changes nothing the calls do. Built by the benchmark with the system's C compiler. */
#define _GNU_SOURCE
#include <dlfcn.h>
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
volatile long sync_stamp_count = 0;

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

int fsync(int fd) {
    static int (*real)(int) = NULL;
    if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    double enter = now();
    int r = real(fd);
    note(1, fd, enter, now());
    return r;
}

int fdatasync(int fd) {
    static int (*real)(int) = NULL;
    if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
    double enter = now();
    int r = real(fd);
    note(2, fd, enter, now());
    return r;
}

ssize_t pwrite64(int fd, const void *buf, size_t count, off_t offset) {
    static ssize_t (*real)(int, const void *, size_t, off_t) = NULL;
    if (!real) real = (ssize_t (*)(int, const void *, size_t, off_t))dlsym(RTLD_NEXT, "pwrite64");
    double enter = now();
    ssize_t r = real(fd, buf, count, offset);
    note(3, fd, enter, now());
    return r;
}

ssize_t pwrite(int fd, const void *buf, size_t count, off_t offset) {
    static ssize_t (*real)(int, const void *, size_t, off_t) = NULL;
    if (!real) real = (ssize_t (*)(int, const void *, size_t, off_t))dlsym(RTLD_NEXT, "pwrite");
    double enter = now();
    ssize_t r = real(fd, buf, count, offset);
    note(3, fd, enter, now());
    return r;
}
