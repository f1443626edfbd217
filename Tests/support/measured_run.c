/*
 * measured_run REPORT [-d KIB] [-t SECONDS] -- PROGRAM [ARGUMENT...]
 *
 * Runs PROGRAM as the child of this small process and writes, once it has ended, one line to
 * the file REPORT: "RAW-WAIT-STATUS PEAK-KIB USER-MICROSECONDS SYSTEM-MICROSECONDS START-KIB":
 * PROGRAM's figures from wait4, and this process's own ru_maxrss when it started (what PROGRAM's
 * figure would have started from, had the caller started it directly). Then ends as PROGRAM
 * did: its exit status, or killed by the same signal.
 *
 * Why a process in between: a child's ru_maxrss starts from the memory map it had before its
 * exec. glibc's posix_spawn (and Foundation's Process, which uses it) runs the child on the
 * parent's map until the exec (clone with CLONE_VM | CLONE_VFORK), and fork copies the parent's
 * resident-page count: either way a program started by the test process reports at least the
 * test process's own peak. This process is some 1 MB when it forks, so PROGRAM's figure is its own.
 *
 * The tests start this with the standard streams PROGRAM is to have; PROGRAM inherits them and
 * nothing else (the report is opened after PROGRAM has ended). -d and -t set PROGRAM's
 * RLIMIT_DATA (KiB, as `ulimit -d`) and RLIMIT_CPU (seconds, as `ulimit -t`). SIGTERM, SIGINT,
 * SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 sent to this process are passed on to PROGRAM; if this
 * process is killed (SIGKILL, a test's deadline), PROGRAM gets SIGKILL too (PR_SET_PDEATHSIG).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

static const int forwarded[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };
static volatile pid_t child = 0;

static void forward(int signal_number) {
    if (child > 0) kill(child, signal_number);
}

static int usage(void) {
    fputs("usage: measured_run REPORT [-d KIB] [-t SECONDS] -- PROGRAM [ARGUMENT...]\n", stderr);
    return 64;
}

static int parse_limit(const char *text, rlim_t *value) {
    char *end = NULL;
    errno = 0;
    unsigned long long parsed = strtoull(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0') return 0;
    *value = (rlim_t)parsed;
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 4) return usage();
    struct rusage start;
    getrusage(RUSAGE_SELF, &start);
    const char *report = argv[1];
    rlim_t data_kib = 0, cpu_seconds = 0;
    int have_data = 0, have_cpu = 0, index = 2;
    for (; index < argc && strcmp(argv[index], "--") != 0; index += 2) {
        if (index + 1 >= argc) return usage();
        if (strcmp(argv[index], "-d") == 0 && parse_limit(argv[index + 1], &data_kib)) have_data = 1;
        else if (strcmp(argv[index], "-t") == 0 && parse_limit(argv[index + 1], &cpu_seconds)) have_cpu = 1;
        else return usage();
    }
    if (index + 1 >= argc) return usage();
    char **program = argv + index + 1;

    /* Held back until the child's pid is known, so none is lost between fork and the handler's use. */
    sigset_t held, previous;
    sigemptyset(&held);
    for (size_t i = 0; i < sizeof forwarded / sizeof *forwarded; i++) sigaddset(&held, forwarded[i]);
    sigprocmask(SIG_BLOCK, &held, &previous);
    struct sigaction passing_on;
    memset(&passing_on, 0, sizeof passing_on);
    passing_on.sa_handler = forward;
    passing_on.sa_flags = SA_RESTART;
    sigemptyset(&passing_on.sa_mask);
    for (size_t i = 0; i < sizeof forwarded / sizeof *forwarded; i++) sigaction(forwarded[i], &passing_on, NULL);

    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        perror("measured_run: fork");
        return 71;
    }
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(137);   /* the parent was killed before the line above */
        struct sigaction default_action;
        memset(&default_action, 0, sizeof default_action);
        default_action.sa_handler = SIG_DFL;
        for (size_t i = 0; i < sizeof forwarded / sizeof *forwarded; i++) sigaction(forwarded[i], &default_action, NULL);
        sigprocmask(SIG_SETMASK, &previous, NULL);
        if (have_data) {
            struct rlimit limit = { data_kib * 1024, data_kib * 1024 };
            if (setrlimit(RLIMIT_DATA, &limit) != 0) { perror("measured_run: RLIMIT_DATA"); _exit(71); }
        }
        if (have_cpu) {
            struct rlimit limit = { cpu_seconds, cpu_seconds };
            if (setrlimit(RLIMIT_CPU, &limit) != 0) { perror("measured_run: RLIMIT_CPU"); _exit(71); }
        }
        execv(program[0], program);
        fprintf(stderr, "measured_run: cannot run %s: %s\n", program[0], strerror(errno));
        _exit(127);
    }
    child = pid;
    sigprocmask(SIG_SETMASK, &previous, NULL);

    int status = 0;
    struct rusage used;
    memset(&used, 0, sizeof used);
    while (wait4(pid, &status, 0, &used) < 0) {
        if (errno != EINTR) {
            perror("measured_run: wait4");
            return 71;
        }
    }
    child = 0;

    FILE *out = fopen(report, "w");
    if (out == NULL) {
        perror("measured_run: report");
        return 71;
    }
    fprintf(out, "%d %ld %lld %lld %ld\n", status, used.ru_maxrss,
            (long long)used.ru_utime.tv_sec * 1000000 + used.ru_utime.tv_usec,
            (long long)used.ru_stime.tv_sec * 1000000 + used.ru_stime.tv_usec, start.ru_maxrss);
    if (fclose(out) != 0) {
        perror("measured_run: report");
        return 71;
    }

    if (WIFSIGNALED(status)) {
        /* End the same way, without a core file of this process. */
        int signal_number = WTERMSIG(status);
        struct rlimit no_core = { 0, 0 };
        setrlimit(RLIMIT_CORE, &no_core);
        signal(signal_number, SIG_DFL);
        sigset_t only;
        sigemptyset(&only);
        sigaddset(&only, signal_number);
        sigprocmask(SIG_UNBLOCK, &only, NULL);
        raise(signal_number);
        return 128 + signal_number;
    }
    return WEXITSTATUS(status);
}
