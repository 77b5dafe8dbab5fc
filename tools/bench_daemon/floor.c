/* The kernel's part of a job on this machine: what the operations Roost
 * must do for every job cost in CPU, measured apart from Roost.
 *
 *   cc -O2 -o /tmp/floor tools/bench_daemon/floor.c
 *   musl-gcc -static -O2 -o /tmp/nop -x c - <<<'int main(void){return 0;}'
 *   /tmp/floor spawn 2000 /tmp/nop        # start a static program, wait
 *   /tmp/floor spawn 2000 /bin/true       # start a dynamic one, wait
 *   /tmp/floor sandbox 2000 /tmp          # a directory, two small files, removed
 *   /tmp/floor cgroup 2000 /sys/fs/cgroup/<a writable cgroup>   # a cgroup made, removed
 *
 * Prints the CPU per operation of this process and of its children
 * (getrusage), in microseconds. docs/performance.md has the results.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static double cpu_ms(int who)
{
    struct rusage r;
    getrusage(who, &r);
    return (r.ru_utime.tv_sec + r.ru_stime.tv_sec) * 1e3 +
           (r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e3;
}

static int put(const char *path, const char *text)
{
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd < 0)
        return -1;
    ssize_t n = write(fd, text, strlen(text));
    close(fd);
    return n < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s spawn|sandbox|cgroup N PATH\n", argv[0]);
        return 2;
    }
    const char *mode = argv[1], *path = argv[3];
    int n = atoi(argv[2]);
    char dir[4096], file[4200];
    double self0 = cpu_ms(RUSAGE_SELF), kids0 = cpu_ms(RUSAGE_CHILDREN);
    for (int i = 0; i < n; i++) {
        if (strcmp(mode, "spawn") == 0) {
            pid_t pid;
            char *av[] = {(char *)path, NULL};
            int st;
            if (posix_spawn(&pid, path, NULL, NULL, av, environ) != 0 || waitpid(pid, &st, 0) < 0) {
                perror(path);
                return 1;
            }
        } else if (strcmp(mode, "sandbox") == 0) {
            snprintf(dir, sizeof dir, "%s/floor-sandbox.%d.%d", path, getpid(), i);
            if (mkdir(dir, 0755) != 0) {
                perror(dir);
                return 1;
            }
            snprintf(file, sizeof file, "%s/.job.ad", dir);
            put(file, "Cmd = \"/bin/true\"\nOwner = \"nobody\"\n");
            unlink(file);
            snprintf(file, sizeof file, "%s/.machine.ad", dir);
            put(file, "Name = \"slot1@here\"\nCpus = 1\n");
            unlink(file);
            rmdir(dir);
        } else if (strcmp(mode, "cgroup") == 0) {
            snprintf(dir, sizeof dir, "%s/floor.%d.%d", path, getpid(), i);
            if (mkdir(dir, 0755) != 0) {
                perror(dir);
                return 1;
            }
            rmdir(dir);
        } else {
            fprintf(stderr, "unknown mode %s\n", mode);
            return 2;
        }
    }
    printf("%s: this process %.1f us, its children %.1f us per operation\n", mode,
           (cpu_ms(RUSAGE_SELF) - self0) * 1e3 / n, (cpu_ms(RUSAGE_CHILDREN) - kids0) * 1e3 / n);
    return 0;
}
