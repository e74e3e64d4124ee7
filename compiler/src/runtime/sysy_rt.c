/*
 * sysy_rt.c: the SysY runtime library for compiled programs.
 *
 * Target: ARMv7 Linux, glibc, linked statically; compiled with
 *   arm-linux-gnueabihf-gcc -O2 -marm -march=armv7ve -mfpu=vfpv4 -mfloat-abi=hard -c
 *
 * Every function is a thin wrapper over stdio, so that the observable behaviour is exactly
 * glibc's (the Rust model in runtime/io.rs is tested byte for byte against this file):
 * getint = scanf("%d"), getfloat = scanf("%a"), putfloat = printf("%a"), putf = printf.
 * A value the input cannot provide (end of input, malformed text) reads as 0; the official
 * runtime leaves it unspecified, and the interpreters trap instead.
 *
 * Timers: starttime()/stoptime() (macros passing __LINE__) record (start line, stop line,
 * elapsed time) pairs; a destructor prints them to stderr at exit, one
 * "Timer@SSSS-EEEE: xH-xM-xS-xus" line per pair, then "TOTAL: ..." (always printed).
 *
 * The program's main must return through libc (or call exit) so that the destructor runs and
 * stdout, which is made fully buffered here, is flushed.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sysy_rt.h"

/* ---- Start-up: a large stdout buffer --------------------------------------------------- */

/* Output is written in large blocks instead of glibc's default (4 KiB for a pipe, a line for
 * a terminal). The bytes written are the same; only the number of write() calls changes. */
static char stdout_buffer[1 << 16];

__attribute__((constructor)) static void sysy_rt_init(void) {
    setvbuf(stdout, stdout_buffer, _IOFBF, sizeof stdout_buffer);
}

/* ---- Input ----------------------------------------------------------------------------- */

int getint(void) {
    int v = 0;
    scanf("%d", &v);
    return v;
}

int getch(void) {
    /* ARM's plain char is unsigned; say so explicitly: bytes read as 0..255. */
    unsigned char c = 0;
    scanf("%c", (char *)&c);
    return c;
}

float getfloat(void) {
    float v = 0;
    scanf("%a", &v);
    return v;
}

int getarray(int a[]) {
    int n = getint();
    for (int i = 0; i < n; i++)
        a[i] = getint();
    return n;
}

int getfarray(float a[]) {
    int n = getint();
    for (int i = 0; i < n; i++)
        a[i] = getfloat();
    return n;
}

/* ---- Output ---------------------------------------------------------------------------- */

void putint(int v) { printf("%d", v); }

void putch(int c) { putchar((unsigned char)c); }

void putfloat(float v) { printf("%a", (double)v); }

void putarray(int n, int a[]) {
    printf("%d:", n);
    for (int i = 0; i < n; i++)
        printf(" %d", a[i]);
    putchar('\n');
}

void putfarray(int n, float a[]) {
    printf("%d:", n);
    for (int i = 0; i < n; i++)
        printf(" %a", (double)a[i]);
    putchar('\n');
}

void putf(const char fmt[], ...) {
    va_list args;
    va_start(args, fmt);
    vprintf(fmt, args);
    va_end(args);
}

/* ---- Timers ---------------------------------------------------------------------------- */

struct timer_pair {
    int start_line, stop_line;
    long long micros;
};

/* Finished pairs, in stoptime() order; grown on demand. */
static struct timer_pair *timer_pairs;
static int timer_count, timer_capacity;

/* The pending starttime(): its line (0 if none is pending) and when it happened. A second
 * starttime() before a stoptime() restarts the pending one. */
static int open_line;
static int timer_is_open;
static struct timespec open_time;

/* The clock, or 0 under `SYSY_FIXED_CLOCK=1` (the harness's runs): then the timer report, and
 * the instructions that format it, do not depend on how long the run took. */
static void read_clock(struct timespec *t) {
    static int fixed = -1;
    if (fixed < 0) {
        const char *setting = getenv("SYSY_FIXED_CLOCK");
        fixed = setting && strcmp(setting, "1") == 0;
    }
    if (fixed) {
        t->tv_sec = 0;
        t->tv_nsec = 0;
    } else {
        clock_gettime(CLOCK_MONOTONIC, t);
    }
}

static long long now_micros(void) {
    struct timespec t;
    read_clock(&t);
    return (long long)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

void _sysy_starttime(int line) {
    open_line = line;
    timer_is_open = 1;
    read_clock(&open_time);
}

void _sysy_stoptime(int line) {
    long long end = now_micros();
    long long start = (long long)open_time.tv_sec * 1000000 + open_time.tv_nsec / 1000;
    if (timer_count == timer_capacity) {
        int capacity = timer_capacity ? 2 * timer_capacity : 64;
        struct timer_pair *grown = realloc(timer_pairs, capacity * sizeof *grown);
        if (!grown) {
            fputs("sysy runtime: out of memory for timers\n", stderr);
            abort();
        }
        timer_pairs = grown;
        timer_capacity = capacity;
    }
    /* A stoptime() without a pending starttime() counts as starting at line 0, now. */
    timer_pairs[timer_count].start_line = timer_is_open ? open_line : 0;
    timer_pairs[timer_count].stop_line = line;
    timer_pairs[timer_count].micros = timer_is_open ? end - start : 0;
    timer_count++;
    timer_is_open = 0;
    open_line = 0;
}

/* Prints "<prefix>xH-xM-xS-xus\n" to stderr. */
static void print_duration(const char *prefix, long long micros) {
    long long seconds = micros / 1000000;
    fprintf(stderr, "%s%dH-%dM-%dS-%dus\n", prefix, (int)(seconds / 3600),
            (int)(seconds / 60 % 60), (int)(seconds % 60), (int)(micros % 1000000));
}

__attribute__((destructor)) static void sysy_rt_report_timers(void) {
    long long total = 0;
    char prefix[64];
    for (int i = 0; i < timer_count; i++) {
        snprintf(prefix, sizeof prefix, "Timer@%04d-%04d: ", timer_pairs[i].start_line,
                 timer_pairs[i].stop_line);
        print_duration(prefix, timer_pairs[i].micros);
        total += timer_pairs[i].micros;
    }
    print_duration("TOTAL: ", total);
}
