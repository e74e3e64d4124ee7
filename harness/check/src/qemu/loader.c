/*
 * loader.c: the guest side of the harness's qemu-arm fork server (see fork_server.rs).
 *
 * What: a freestanding ARM program that qemu-arm starts once and that then runs one
 * executable per request, each in a forked child, so that a run costs a fork of an already
 * started qemu instead of a new qemu process (its start-up, about 7 ms, is most of the run of
 * a small program).
 *
 * Protocol, on the loader's stdin and stdout (pipes to the harness), one line each:
 *   request:  EXE \t STDIN \t STDOUT \t STDERR \t COUNTS-CONFIG-or-"-" \t CPU-SECONDS \n
 *   or, once, before the first: warm \t EXE \t INPUT \t COUNTS-CONFIG-or-"-" \t ADDRESSES
 *             (answered "warmed 1" or "unwarmed STAGE ERROR"; see warm_up)
 *   answers:  "pid N"  as soon as the child exists (the harness kills N at its deadline);
 *             then "status S" (the wait status) when the program ran, or
 *             "unloadable STAGE ERRNO" when the child could not start it (the harness then
 *             runs the executable the ordinary way).
 * The loader exits at the end of its input. It answers before it reaps the child (it waits
 * with WNOWAIT first), so the pid the harness may kill cannot belong to another process
 * until the harness has read the answer.
 *
 * The child: opens the three files onto fds 0, 1 and 2; loads the executable (a static ARM
 * ELF made only of PT_LOAD segments, plus PT_GNU_STACK/PT_ARM_EXIDX, each placed where it
 * asks and nowhere already mapped); limits its CPU time (a run outliving a dead harness
 * ends); and enters it with the stack qemu built for the loader itself, which the loader
 * never touched (it runs on a stack of its own in .bss). So the program starts as under a
 * fresh qemu started the same way: same argv, envp and stack contents above sp, fresh
 * zeroed memory.
 *
 * The runtime, kept: the warm-up request makes the parent translate the runtime library of
 * the in-process linker's executables (at fixed addresses, identical in all of them) by
 * calling its functions, and keep its code mapped. A child leaves that code mapped when its
 * executable has the same bytes there, and so starts with the runtime translated; otherwise
 * it unmaps it and maps its own (see load).
 *
 * Counting: just before entering the program the child makes the cost plugin's "fresh
 * count" system call (RECOUNT, with the descriptor of the counts configuration and the
 * program's entry address). The plugin counts every block translated from the entry block on
 * in the new file; the few loader instructions between the call and the entry (`enter`'s
 * tail) stay in the old one. So the child's counts hold the program's execution and nothing
 * of the loader: they equal those of a fresh qemu run.
 *
 * Build (runtime/library.rs TargetProgram): the freestanding runtime's flags plus -static
 * and -Wl,-Ttext-segment=0xe0000000, far above where programs are linked (0x10000).
 */
#include <stdint.h>

typedef uint32_t u32;

enum {
    SYS_EXIT = 1, SYS_FORK = 2, SYS_READ = 3, SYS_WRITE = 4, SYS_OPEN = 5, SYS_CLOSE = 6,
    SYS_LSEEK = 19, SYS_DUP = 41, SYS_DUP2 = 63, SYS_SETRLIMIT = 75, SYS_MUNMAP = 91, SYS_WAIT4 = 114,
    SYS_MPROTECT = 125, SYS_MMAP2 = 192, SYS_EXIT_GROUP = 248, SYS_WAITID = 280,
};
enum { P_PID = 1, WEXITED = 4, WNOWAIT = 0x01000000 };
enum { CLD_EXITED = 1, CLD_KILLED = 2, CLD_DUMPED = 3 };
enum { O_WRONLY = 01, O_CREAT = 0100, O_TRUNC = 01000 };
enum { PROT_READ = 1, PROT_WRITE = 2, PROT_EXEC = 4 };
enum { MAP_SHARED = 0x01, MAP_PRIVATE = 0x02, MAP_ANONYMOUS = 0x20 };
enum { RLIMIT_CPU = 0 };
enum { PT_LOAD = 1, PT_GNU_STACK = 0x6474e551, PT_ARM_EXIDX = 0x70000001 };
#define PAGE 0x1000u

/* The cost plugin's fresh-count call (sysy_cost_model::plugin_args::RECOUNT_*). */
#define RECOUNT_SYSCALL 0x5359
#define RECOUNT_MAGIC 0x636f7374

static long sys6(long n, long a, long b, long c, long d, long e, long f) {
    register long r0 __asm__("r0") = a;
    register long r1 __asm__("r1") = b;
    register long r2 __asm__("r2") = c;
    register long r3 __asm__("r3") = d;
    register long r4 __asm__("r4") = e;
    register long r5 __asm__("r5") = f;
    register long r7 __asm__("r7") = n;
    __asm__ volatile("svc #0" : "+r"(r0) : "r"(r1), "r"(r2), "r"(r3), "r"(r4), "r"(r5), "r"(r7) : "memory");
    return r0;
}
#define sys3(n, a, b, c) sys6(n, (long)(a), (long)(b), (long)(c), 0, 0, 0)

/* Set by _start: the stack pointer qemu gave the loader (argc, argv, envp, auxv above it). */
long loader_initial_sp;
/* The loader's own stack, so the one above stays untouched for the programs. */
char loader_stack[65536] __attribute__((aligned(16)));

/* enter(cfg_fd, entry, sp, magic): sp := sp, the fresh-count call (fd, magic, entry), jump
 * to entry. With magic 0 the call is an ordinary failing system call. */
void enter(long cfg_fd, u32 entry, long sp, long magic) __attribute__((noreturn));
__asm__(".text\n"
        ".global enter\n"
        ".type enter, %function\n"
        "enter:\n"
        "\tmov sp, r2\n"
        "\tmov r8, r1\n"
        "\tmov r2, r1\n"
        "\tmov r1, r3\n"
        "\tmovw r7, #0x5359\n"
        "\tsvc #0\n"
        "\tbx r8\n"
        ".size enter, .-enter\n");

/* ---- The child: load and enter ------------------------------------------------------- */

/* Where a child got to, in a page shared with the parent: ENTERED once nothing can fail. */
enum { STAGE_STDIN = 1, STAGE_STDOUT, STAGE_STDERR, STAGE_OPEN, STAGE_HEADER, STAGE_SEGMENTS,
       STAGE_PLACE, STAGE_READ, STAGE_CONFIG, STAGE_ENTERED };
static volatile long *progress; /* [0] stage, [1] error */

static void fail(long error) {
    progress[1] = error;
    sys3(SYS_EXIT_GROUP, 127, 0, 0);
}

static void set_stage(long stage) { progress[0] = stage; }

/* Reads `length` bytes; 0 and the error (0 for a short file) in *error when it cannot. */
static int read_exactly(int fd, char *at, u32 length, long *error) {
    while (length) {
        long got = sys3(SYS_READ, fd, at, length);
        if (got <= 0) {
            *error = got < 0 ? -got : 0;
            return 0;
        }
        at += got;
        length -= (u32)got;
    }
    return 1;
}

static void open_onto(const char *path, int flags, int onto) {
    long fd = sys3(SYS_OPEN, path, flags, 0644);
    if (fd < 0)
        fail(-fd);
    if (fd != onto) {
        sys3(SYS_DUP2, fd, onto, 0);
        sys3(SYS_CLOSE, fd, 0, 0);
    }
}

typedef struct { u32 type, offset, vaddr, paddr, filesz, memsz, flags, align; } Phdr;

/* The address ranges load() mapped, so that a rehearsal or a warm-up can give them back. */
static u32 mapped_start[16], mapped_end[16];
static unsigned mapped;

/* The runtime's read+execute segment the parent keeps mapped after warming it up (see
 * warm_up): its page range, and its program header as the warmed executable had it. A child
 * whose executable has the same segment with the same bytes leaves the range as it is, with
 * the translations it inherited (qemu drops a range's translations when it is mapped again);
 * any other segment over the range makes the child unmap it first. */
static u32 kept_start, kept_end;
static Phdr kept;

static void unmap_kept(void) {
    sys3(SYS_MUNMAP, kept_start, kept_end - kept_start, 0);
    kept_start = kept_end = 0;
}

/* Whether the file's bytes of segment `ph` are those mapped at its address (compared a word
 * at a time: the loop runs in every child). */
static int same_as_mapped(int fd, const Phdr *ph, long *error) {
    static u32 chunk[PAGE / 4];
    if (ph->vaddr % 4 != 0)
        return 0;
    sys3(SYS_LSEEK, fd, ph->offset, 0);
    for (u32 done = 0; done < ph->filesz;) {
        u32 n = ph->filesz - done < PAGE ? ph->filesz - done : PAGE;
        if (!read_exactly(fd, (char *)chunk, n, error))
            return 0;
        const u32 *memory = (const u32 *)(ph->vaddr + done);
        u32 words = n / 4;
        for (u32 k = 0; k < words; k++)
            if (chunk[k] != memory[k])
                return 0;
        for (u32 k = words * 4; k < n; k++)
            if (((const char *)chunk)[k] != ((const char *)memory)[k])
                return 0;
        done += n;
    }
    return 1;
}

/* How load() treats the kept runtime segment. */
enum { LOAD_CHILD, LOAD_REHEARSAL, LOAD_WARM_UP };

/* Maps the executable's segments; its entry address, or 0 with the error in *error (and the
 * stage in progress[0]). A child (LOAD_CHILD) leaves the kept segment mapped when its
 * executable has it identically, else unmaps it; a rehearsal leaves it mapped or gives up
 * (error 0); a warm-up maps everything (the caller keeps the runtime's segment). */
static u32 load(const char *exe, int how, long *error) {
    mapped = 0;
    *error = 0;
    set_stage(STAGE_OPEN);
    long fd = sys3(SYS_OPEN, exe, 0, 0);
    if (fd < 0) {
        *error = -fd;
        return 0;
    }
    u32 entry = 0;
    set_stage(STAGE_HEADER);
    unsigned char eh[52];
    Phdr ph[16];
    if (!read_exactly(fd, (char *)eh, sizeof eh, error))
        goto done;
    entry = *(u32 *)(eh + 24);
    u32 phoff = *(u32 *)(eh + 28);
    unsigned phnum = *(uint16_t *)(eh + 44);
    int elf32_arm_exec = eh[0] == 0x7f && eh[1] == 'E' && eh[2] == 'L' && eh[3] == 'F' && eh[4] == 1 &&
                         eh[5] == 1 && *(uint16_t *)(eh + 16) == 2 && *(uint16_t *)(eh + 18) == 40;
    if (!elf32_arm_exec || *(uint16_t *)(eh + 42) != sizeof(Phdr) || phnum > 16 || entry == 0)
        goto failed;
    sys3(SYS_LSEEK, fd, phoff, 0);
    if (!read_exactly(fd, (char *)ph, phnum * sizeof(Phdr), error))
        goto failed;
    set_stage(STAGE_SEGMENTS);
    for (unsigned i = 0; i < phnum; i++)
        if (ph[i].type != PT_LOAD && ph[i].type != PT_GNU_STACK && ph[i].type != PT_ARM_EXIDX) {
            *error = ph[i].type;
            goto failed;
        }
    for (unsigned i = 0; i < phnum; i++) {
        if (ph[i].type != PT_LOAD || ph[i].memsz == 0)
            continue;
        u32 start = ph[i].vaddr & ~(PAGE - 1);
        u32 end = (ph[i].vaddr + ph[i].memsz + PAGE - 1) & ~(PAGE - 1);
        if (end <= start || ph[i].filesz > ph[i].memsz)
            goto failed;
        if (kept_end && start < kept_end && kept_start < end && how != LOAD_WARM_UP) {
            int same_header = ph[i].vaddr == kept.vaddr && ph[i].filesz == kept.filesz &&
                              ph[i].memsz == kept.memsz && ph[i].flags == kept.flags;
            set_stage(STAGE_READ);
            if (same_header && same_as_mapped(fd, &ph[i], error))
                continue;
            if (*error || how == LOAD_REHEARSAL)
                goto failed;
            unmap_kept();
        }
        /* A hint, not MAP_FIXED: a range already in use (the loader, the stack, an earlier
         * segment) comes back elsewhere instead of being replaced. */
        set_stage(STAGE_PLACE);
        long at = sys6(SYS_MMAP2, start, end - start, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (at != (long)start) {
            if (at > -4096 && at < 0) {
                *error = -at;
            } else {
                sys3(SYS_MUNMAP, at, end - start, 0);
            }
            goto failed;
        }
        mapped_start[mapped] = start;
        mapped_end[mapped++] = end;
        set_stage(STAGE_READ);
        sys3(SYS_LSEEK, fd, ph[i].offset, 0);
        if (!read_exactly(fd, (char *)ph[i].vaddr, ph[i].filesz, error))
            goto failed;
        long prot = (ph[i].flags & 4 ? PROT_READ : 0) | (ph[i].flags & 2 ? PROT_WRITE : 0) |
                    (ph[i].flags & 1 ? PROT_EXEC : 0);
        sys3(SYS_MPROTECT, start, end - start, prot);
        if (how == LOAD_WARM_UP && ph[i].flags == 5 && !kept_end) {
            kept_start = start;
            kept_end = end;
            kept = ph[i];
        }
    }
    goto done;
failed:
    entry = 0;
done:
    sys3(SYS_CLOSE, fd, 0, 0);
    return entry;
}

static void unmap_loaded(void) {
    for (unsigned i = 0; i < mapped; i++)
        if (mapped_start[i] != kept_start || mapped_end[i] != kept_end)
            sys3(SYS_MUNMAP, mapped_start[i], mapped_end[i] - mapped_start[i], 0);
    mapped = 0;
}

/* A child's path up to the jump into the program. With `rehearse` set the parent itself
 * walks it once (see loader_main): the files open onto spare descriptors, stdout and stderr
 * read-only (nothing truncated), no CPU limit, and everything is closed and unmapped again
 * instead of entered. The code run is the same, so the blocks qemu translated for it are in
 * the translation cache every later child inherits. */
enum { SPARE_FD = 100 };
static void __attribute__((noinline)) child(char **field, long cpu_seconds, int rehearse) {
    int onto = rehearse ? SPARE_FD : 0;
    int write_flags = rehearse ? 0 : O_WRONLY | O_CREAT | O_TRUNC;
    set_stage(STAGE_STDIN);
    open_onto(field[1], 0, onto);
    set_stage(STAGE_STDOUT);
    open_onto(field[2], write_flags, onto + 1);
    set_stage(STAGE_STDERR);
    open_onto(field[3], write_flags, onto + 2);
    long error;
    u32 entry = load(field[0], rehearse ? LOAD_REHEARSAL : LOAD_CHILD, &error);
    if (!entry) {
        if (!rehearse)
            fail(error);
        unmap_loaded();
        for (int fd = onto; fd < onto + 3; fd++)
            sys3(SYS_CLOSE, fd, 0, 0);
        return;
    }
    long cfg = -1, magic = 0;
    if (field[4][0] != '-' || field[4][1] != 0) {
        set_stage(STAGE_CONFIG);
        cfg = sys3(SYS_OPEN, field[4], 0, 0);
        if (cfg < 0)
            fail(-cfg);
        magic = RECOUNT_MAGIC;
    }
    if (cpu_seconds > 0 && !rehearse) {
        u32 limit[2] = {(u32)cpu_seconds, (u32)cpu_seconds + 1};
        sys3(SYS_SETRLIMIT, RLIMIT_CPU, limit, 0);
    }
    set_stage(STAGE_ENTERED);
    if (rehearse) {
        unmap_loaded();
        for (int fd = onto; fd < onto + 3; fd++)
            sys3(SYS_CLOSE, fd, 0, 0);
        if (cfg >= 0)
            sys3(SYS_CLOSE, cfg, 0, 0);
        return;
    }
    enter(cfg, entry, loader_initial_sp, magic);
}

/* ---- The parent: warming the runtime up ----------------------------------------------- */

/* The runtime functions a warm-up request names, in the order of its addresses. */
enum { W_PUTINT, W_PUTCH, W_PUTARRAY, W_PUTFLOAT, W_PUTFARRAY, W_PUTF, W_GETINT, W_GETCH,
       W_GETARRAY, W_GETFLOAT, W_GETFARRAY, W_STARTTIME, W_STOPTIME, W_SINK_FLUSH, W_COUNT };

/* The runtime's `struct sink` (sysy_rt_free.c), for its `sink_flush`, which only the exit path
 * calls (in the entry code, placed with the program): every run's last output. Should the
 * runtime's layout change, the warm-up writes other bytes to /dev/null or breaks the server,
 * and the harness then serves without warming up. */
struct runtime_sink {
    char *buf;
    u32 len, cap;
    int fd;
};

static u32 warm_function[W_COUNT];
static int warm_array[64];
static float warm_floats[64];

typedef void (*put_int_fn)(int);
typedef void (*put_array_fn)(int, int *);
typedef void (*put_float_fn)(float);
typedef void (*put_floats_fn)(int, float *);
typedef void (*put_format_fn)(const char *, ...);
typedef int (*get_int_fn)(void);
typedef int (*get_array_fn)(int *);
typedef float (*get_float_fn)(void);
typedef int (*get_floats_fn)(float *);

/* Calls the runtime's functions on their common paths (output to /dev/null, input from the
 * harness's sample text, which ends in the middle of nothing), so that qemu translates them
 * here, once, for every later child. Missing functions (address 0) are skipped. */
static void call_runtime(void) {
#define HAVE(f) (warm_function[f] != 0)
#define FN(type, f) ((type)warm_function[f])
    if (HAVE(W_PUTINT)) {
        static const int values[] = {0, 7, -45, 123456789, -2147483647 - 1, 1000000000};
        for (u32 i = 0; i < sizeof values / sizeof values[0]; i++)
            FN(put_int_fn, W_PUTINT)(values[i]);
    }
    if (HAVE(W_PUTCH)) {
        FN(put_int_fn, W_PUTCH)(10);
        FN(put_int_fn, W_PUTCH)(32);
        FN(put_int_fn, W_PUTCH)('a');
    }
    for (int i = 0; i < 8; i++) {
        warm_array[i] = i * 37 - 100;
        warm_floats[i] = (float)warm_array[i] / 8.0f;
    }
    if (HAVE(W_PUTARRAY)) {
        FN(put_array_fn, W_PUTARRAY)(8, warm_array);
        FN(put_array_fn, W_PUTARRAY)(0, warm_array);
    }
    if (HAVE(W_PUTFLOAT)) {
        static const float values[] = {0.0f, 1.5f, -0.1f, 3e10f, 1e-40f};
        for (u32 i = 0; i < sizeof values / sizeof values[0]; i++)
            FN(put_float_fn, W_PUTFLOAT)(values[i]);
    }
    if (HAVE(W_PUTFARRAY))
        FN(put_floats_fn, W_PUTFARRAY)(8, warm_floats);
    if (HAVE(W_PUTF)) {
        put_format_fn putf = FN(put_format_fn, W_PUTF);
        putf("plain\n");
        putf("%d\n", -12);
        putf("%x\n", 0xbeef);
        putf("%u\n", 3000000000u);
        putf("%c", 'c');
        putf("x=%d, y=%d;", 3, -4);
        putf("[%5d|%-4d]\n", 42, -7);
        putf("%%%d%%\n", 9);
        putf("%d %a\n", 1, 2.75);
        putf("%a\n", -0.1);
        putf("%e\n", 12345.678);
        putf("%f\n", -445.61);
        putf("%.3f\n", 0.0625);
        putf("%08.2f|%c\n", 3.14159, 'z');
        putf("%g %s\n", 1e-7, "s");
    }
    for (int i = 0; i < 4 && HAVE(W_GETINT); i++)
        FN(get_int_fn, W_GETINT)();
    for (int i = 0; i < 2 && HAVE(W_GETCH); i++)
        FN(get_int_fn, W_GETCH)();
    if (HAVE(W_GETARRAY))
        FN(get_array_fn, W_GETARRAY)(warm_array);
    for (int i = 0; i < 8 && HAVE(W_GETFLOAT); i++)
        FN(get_float_fn, W_GETFLOAT)();
    if (HAVE(W_GETFARRAY))
        FN(get_floats_fn, W_GETFARRAY)(warm_floats);
    /* At the end of the input. */
    if (HAVE(W_GETINT))
        FN(get_int_fn, W_GETINT)();
    if (HAVE(W_GETCH))
        FN(get_int_fn, W_GETCH)();
    if (HAVE(W_STARTTIME) && HAVE(W_STOPTIME)) {
        FN(put_int_fn, W_STARTTIME)(1);
        FN(put_int_fn, W_STOPTIME)(2);
    }
    /* More than the 64 KiB stdout buffer: putch's own flush runs too. */
    for (int i = 0; i < 70000 && HAVE(W_PUTCH); i++)
        FN(put_int_fn, W_PUTCH)('z');
    if (HAVE(W_SINK_FLUSH)) {
        static char bytes[8] = "warm-up";
        struct runtime_sink sink = {bytes, 7, sizeof bytes, 1};
        FN(void (*)(struct runtime_sink *), W_SINK_FLUSH)(&sink);
        FN(void (*)(struct runtime_sink *), W_SINK_FLUSH)(&sink); /* empty */
    }
#undef HAVE
#undef FN
}

static long number(const char *text);
static void answer(const char *word, long a, long b, int two);

/* The warm-up request: warm \t EXE \t INPUT \t COUNTS-CONFIG-or-"-" \t W_COUNT addresses.
 * Maps EXE's segments, points fds 0-2 at INPUT and /dev/null, asks the plugin for a fresh
 * count (so the translated blocks are classified with EXE's mapping symbols, as in a run of
 * it; children adopt them), calls the runtime, then unmaps everything but the runtime's
 * read+execute segment (the first one), which stays for good, and puts fds 0-2 back. The
 * runtime's data was the warm-up's own: children map theirs from their executables.
 * Answers "warmed 1", or "unwarmed STAGE ERROR" when nothing was kept. Done at most once. */
static void warm_up(char **field) {
    enum { SAVED_FD = 110 };
    if (kept_end) {
        answer("unwarmed", 0, 0, 1);
        return;
    }
    for (int k = 0; k < W_COUNT; k++)
        warm_function[k] = (u32)number(field[4 + k]);
    for (int fd = 0; fd < 3; fd++)
        sys3(SYS_DUP2, fd, SAVED_FD + fd, 0);
    long opened[3] = {sys3(SYS_OPEN, field[2], 0, 0), sys3(SYS_OPEN, "/dev/null", O_WRONLY, 0),
                      sys3(SYS_OPEN, "/dev/null", O_WRONLY, 0)};
    long error = 0;
    int ready = 1;
    for (int fd = 0; fd < 3; fd++) {
        if (opened[fd] < 0) {
            error = -opened[fd];
            ready = 0;
        }
    }
    u32 entry = 0;
    if (ready) {
        for (int fd = 0; fd < 3; fd++) {
            sys3(SYS_DUP2, opened[fd], fd, 0);
            sys3(SYS_CLOSE, opened[fd], 0, 0);
        }
        entry = load(field[1], LOAD_WARM_UP, &error);
    } else {
        for (int fd = 0; fd < 3; fd++)
            if (opened[fd] >= 0)
                sys3(SYS_CLOSE, opened[fd], 0, 0);
    }
    int runnable = entry && kept_end;
    for (int k = 0; k < W_COUNT; k++)
        if (warm_function[k] && (warm_function[k] < kept.vaddr || warm_function[k] >= kept.vaddr + kept.filesz))
            runnable = 0;
    if (runnable) {
        if (field[3][0] != '-' || field[3][1] != 0) {
            long cfg = sys3(SYS_OPEN, field[3], 0, 0);
            u32 first = 0;
            for (int k = 0; k < W_COUNT && !first; k++)
                first = warm_function[k];
            if (cfg >= 0) {
                sys6(RECOUNT_SYSCALL, cfg, RECOUNT_MAGIC, first, 0, 0, 0);
                sys3(SYS_CLOSE, cfg, 0, 0);
            }
        }
        call_runtime();
    } else if (kept_end) {
        unmap_kept();
    }
    unmap_loaded();
    for (int fd = 0; fd < 3; fd++) {
        sys3(SYS_DUP2, SAVED_FD + fd, fd, 0);
        sys3(SYS_CLOSE, SAVED_FD + fd, 0, 0);
    }
    if (runnable)
        answer("warmed", 1, 0, 0);
    else
        answer("unwarmed", progress[0], error, 1);
}

/* ---- The parent: requests and answers ------------------------------------------------- */

static char request[16384];

/* One request line into `request` (NUL-terminated, without the newline); 0 at end of input. */
static int read_request(void) {
    static char buffer[4096];
    static u32 start, end;
    u32 length = 0;
    for (;;) {
        if (start == end) {
            long got = sys3(SYS_READ, 0, buffer, sizeof buffer);
            if (got <= 0)
                return 0;
            start = 0;
            end = (u32)got;
        }
        char c = buffer[start++];
        if (c == '\n') {
            request[length] = 0;
            return 1;
        }
        if (length + 1 < sizeof request)
            request[length++] = c;
    }
}

static void answer(const char *word, long a, long b, int two) {
    char line[64];
    u32 n = 0;
    while (*word)
        line[n++] = *word++;
    long values[2] = {a, b};
    for (int k = 0; k < 1 + two; k++) {
        line[n++] = ' ';
        long v = values[k];
        u32 u = v < 0 ? 0u - (u32)v : (u32)v;
        char digits[12];
        int d = 0;
        do {
            digits[d++] = (char)('0' + u % 10);
            u /= 10;
        } while (u);
        if (v < 0)
            line[n++] = '-';
        while (d)
            line[n++] = digits[--d];
    }
    line[n++] = '\n';
    sys3(SYS_WRITE, 1, line, n);
}

static long number(const char *text) {
    long v = 0;
    while (*text >= '0' && *text <= '9')
        v = v * 10 + (*text++ - '0');
    return v;
}

/* The wait status (as wait4 would give it) of child `pid` once it has ended, leaving it
 * unreaped. */
static long wait_unreaped(long pid) {
    int info[32]; /* siginfo_t: signo, errno, code, pid, uid, status, ... (no initialiser: it would be a memset call) */
    info[2] = 0;
    info[5] = 0;
    while (sys6(SYS_WAITID, P_PID, pid, (long)info, WEXITED | WNOWAIT, 0, 0) == -4) /* EINTR */
        ;
    switch (info[2]) {
    case CLD_EXITED:
        return (info[5] & 0xff) << 8;
    case CLD_DUMPED:
        return (info[5] & 0x7f) | 0x80;
    case CLD_KILLED:
    default:
        return info[5] & 0x7f;
    }
}

void loader_main(void) __attribute__((noreturn));
void loader_main(void) {
    int rehearsed = 0;
    progress = (volatile long *)sys6(SYS_MMAP2, 0, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if ((long)progress < 0 && (long)progress > -4096)
        sys3(SYS_EXIT_GROUP, 2, 0, 0);
    while (read_request()) {
        enum { MOST_FIELDS = 4 + W_COUNT };
        char *field[MOST_FIELDS];
        int fields = 1;
        field[0] = request;
        for (char *c = request; *c && fields < MOST_FIELDS; c++)
            if (*c == '\t') {
                *c = 0;
                field[fields++] = c + 1;
            }
        int is_warm_up = field[0][0] == 'w' && field[0][1] == 'a' && field[0][2] == 'r' &&
                         field[0][3] == 'm' && field[0][4] == 0;
        if (is_warm_up && fields == MOST_FIELDS) {
            progress[0] = 0;
            progress[1] = 0;
            warm_up(field);
            continue;
        }
        if (fields != 6) {
            answer("unloadable", 0, 0, 1);
            continue;
        }
        progress[0] = 0;
        progress[1] = 0;
        long pid = sys3(SYS_FORK, 0, 0, 0);
        if (pid == 0)
            child(field, number(field[5]), 0); /* does not return */
        if (pid < 0) {
            answer("unloadable", 0, -pid, 1);
            continue;
        }
        answer("pid", pid, 0, 0);
        long status = wait_unreaped(pid);
        if (progress[0] != STAGE_ENTERED) {
            answer("unloadable", progress[0], progress[1], 1);
        } else {
            /* The first child that got through rehearses its path here, in the parent, while
             * its files still exist (the harness waits for the answer): later children then
             * start with that path translated, about 55 of the 85 blocks an empty program's
             * run translated. It cannot fail where the child, forked from this very state,
             * did not. */
            if (!rehearsed) {
                rehearsed = 1;
                child(field, 0, 1);
            }
            answer("status", status, 0, 0);
        }
        int reaped;
        while (sys6(SYS_WAIT4, pid, (long)&reaped, 0, 0, 0, 0) == -4) /* EINTR */
            ;
    }
    sys3(SYS_EXIT_GROUP, 0, 0, 0);
    __builtin_unreachable();
}

/* Entry: remember qemu's stack, move to the loader's own, and serve. */
__asm__(".text\n"
        ".global _start\n"
        ".type _start, %function\n"
        "_start:\n"
        "\tldr r1, =loader_initial_sp\n"
        "\tstr sp, [r1]\n"
        "\tldr sp, =loader_stack+65536\n"
        "\tbl loader_main\n"
        "\t.ltorg\n"
        ".size _start, .-_start\n");
