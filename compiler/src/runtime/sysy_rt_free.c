/*
 * sysy_rt_free.c: the SysY runtime library without a C library ("freestanding").
 *
 * What: the same functions as sysy_rt.c (getint, getch, getfloat, getarray, getfarray,
 * putint, putch, putfloat, putarray, putfarray, putf, _sysy_starttime, _sysy_stoptime) plus
 * the program entry point `_start`, in one relocatable object that needs nothing else: no
 * libc, no libgcc, no start files. The only undefined symbol is `main`.
 *
 * Why: a static glibc executable spends most of a qemu-arm run (about 35 of 45 ms) starting
 * glibc. Linked with this object instead, a program starts in about the time qemu itself
 * needs. sysy_rt.c (over glibc's stdio) stays the reference: every byte this file reads or
 * writes is meant to be exactly what sysy_rt.c reads or writes on glibc 2.36.
 *
 * Build: arm-linux-gnueabihf-gcc -O2 -marm -march=armv7ve -mfpu=vfpv4 -mfloat-abi=hard
 *   -ffreestanding -nostdlib -fno-builtin -fno-pic -fno-stack-protector -fno-unwind-tables
 *   -fno-asynchronous-unwind-tables -fno-tree-loop-distribute-patterns -fno-ident -c
 * (see runtime/library.rs). The code avoids everything gcc would turn into a library call:
 * no 64-bit division (a hand-written one serves the timers), no 64-bit <-> floating
 * conversions, no large structure copies; the last flag above keeps gcc from turning byte
 * loops into memcpy/memset calls.
 *
 * System calls (Linux ARM EABI): the number in r7, arguments in r0-r5, `svc #0`, the result
 * (or -errno) in r0. Used: read (3) on fd 0, write (4) on fds 1 and 2, exit_group (248),
 * clock_gettime (263, CLOCK_MONOTONIC, 32-bit timespec) and mmap2 (192, only when a program
 * records more than 256 timer pairs).
 *
 * Start and exit: `_start` aligns sp to 8 bytes (AAPCS), calls main, then does what glibc's
 * exit does for sysy_rt.c: first the timer report on stderr (sysy_rt.c prints it from a
 * destructor, which glibc runs before it flushes stdio), then the flush of stdout, then
 * exit_group(main's value); the kernel keeps its low 8 bits as the exit status. Both are in
 * a section of their own, `.text.sysy_entry`, the only code that refers to the program: the
 * in-process linker places it with the program and the rest of the runtime at fixed
 * addresses, the same in every executable (see isa/arm/link.rs).
 *
 * glibc behaviour reproduced:
 * - stdout is fully buffered in 64 KiB (sysy_rt.c sets the same with setvbuf) and written
 *   when full and at exit; stderr output (the timer report) is written line by line.
 * - stdin is read in large blocks; end of input is sticky, as in glibc since 2.28.
 * - getint is scanf("%d"): skip white space (" \t\n\v\f\r"); an optional sign; decimal
 *   digits; out-of-range values saturate (strtol with a 32-bit long). Without digits the
 *   conversion fails, the sign (if any) stays consumed and the character after it does not.
 * - getch is scanf("%c"); getfloat is scanf("%a"), which collects characters with one
 *   character of look-ahead exactly as glibc's vfscanf does (also where it fails: a
 *   mismatch inside "nan"/"inf"/"infinity" consumes the mismatching character) and converts
 *   them as strtof would: correctly rounded (to nearest, ties to even) for decimal text of
 *   any length (exact big-integer arithmetic on the first 200 significant digits plus a
 *   sticky digit, more than the 112 a binary32 tie can need) and for hex-float text.
 *   Where scanf fails the value is 0, as in sysy_rt.c.
 * - putint/putch/putfloat/putarray/putfarray/putf are printf: %d, %c and %a of the float
 *   promoted to double, and for putf everything the Rust model runtime/printf.rs documents:
 *   conversions d i u x X o b B c C p f F e E g G a A %, flags, width, precision, `*`, length
 *   modifiers, exact decimal conversion (the exact decimal expansion of the double, from a
 *   base-10^8 big integer, rounded half to even), glibc's printing of unknown conversions
 *   and its "positional path" quirks, and where it stops (a format ending inside a
 *   specification, a wide character outside ASCII).
 * - the timer report: "Timer@%04d-%04d: %dH-%dM-%dS-%dus" per start/stop pair, then
 *   "TOTAL: ..." (always), with the arithmetic of sysy_rt.c.
 *
 * How it is checked: harness/tests/runtime_vs_io.rs runs every case (tens of thousands of
 * putf formats and values, input texts) through a driver built on this file and through one
 * built on sysy_rt.c with glibc, compares each with the Rust model, and compares the two
 * drivers' records byte for byte (which also covers what a failed read consumes, where the
 * model has no opinion). The driver #includes this file to reach the scanf-level result of a
 * read (converted or not), which the public functions do not return.
 */
#include <stdarg.h>
#include <stdint.h>

#include "sysy_rt.h"

typedef uint32_t u32;
typedef uint64_t u64;

int main(void);

/* ---- Linux system calls ---------------------------------------------------------------- */

enum {
    SYS_READ = 3,
    SYS_WRITE = 4,
    SYS_MMAP2 = 192,
    SYS_EXIT_GROUP = 248,
    SYS_CLOCK_GETTIME = 263,
};

static inline long syscall3(long nr, long a, long b, long c) {
    register long r7 __asm__("r7") = nr;
    register long r0 __asm__("r0") = a;
    register long r1 __asm__("r1") = b;
    register long r2 __asm__("r2") = c;
    __asm__ volatile("svc #0" : "+r"(r0) : "r"(r7), "r"(r1), "r"(r2) : "memory");
    return r0;
}

static inline long syscall6(long nr, long a, long b, long c, long d, long e, long f) {
    register long r7 __asm__("r7") = nr;
    register long r0 __asm__("r0") = a;
    register long r1 __asm__("r1") = b;
    register long r2 __asm__("r2") = c;
    register long r3 __asm__("r3") = d;
    register long r4 __asm__("r4") = e;
    register long r5 __asm__("r5") = f;
    __asm__ volatile("svc #0"
                     : "+r"(r0)
                     : "r"(r7), "r"(r1), "r"(r2), "r"(r3), "r"(r4), "r"(r5)
                     : "memory");
    return r0;
}

/* ---- Output streams -------------------------------------------------------------------- */

/* A buffered output file descriptor. */
struct sink {
    char *buf;
    u32 len, cap;
    int fd;
};

static char stdout_space[1 << 16];
static struct sink out = {stdout_space, 0, sizeof stdout_space, 1};

/* Writes the buffer out. On a write error the rest is dropped, as glibc does. */
static void sink_flush(struct sink *s) {
    u32 done = 0;
    while (done < s->len) {
        long n = syscall3(SYS_WRITE, s->fd, (long)(s->buf + done), s->len - done);
        if (n <= 0)
            break;
        done += (u32)n;
    }
    s->len = 0;
}

static inline void put_byte(struct sink *s, char c) {
    if (s->len == s->cap)
        sink_flush(s);
    s->buf[s->len++] = c;
}

static void put_bytes(struct sink *s, const char *p, u32 n) {
    while (n--)
        put_byte(s, *p++);
}

static void put_fill(struct sink *s, char c, u32 n) {
    while (n--)
        put_byte(s, c);
}

static u32 string_length(const char *p) {
    u32 n = 0;
    while (p[n])
        n++;
    return n;
}

/* Writes the digits of `v` in `radix` backwards, ending just before `end`; returns how many. */
static u32 digits_backwards(char *end, u32 v, u32 radix, int upper) {
    const char *digit = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    u32 n = 0;
    do {
        *--end = digit[v % radix];
        v /= radix;
        n++;
    } while (v);
    return n;
}

static void put_uint(struct sink *s, u32 v) {
    char b[12];
    u32 n = digits_backwards(b + sizeof b, v, 10, 0);
    put_bytes(s, b + sizeof b - n, n);
}

/* ---- Exact decimal expansion of a double ----------------------------------------------- */

/* The value 0.d[0]d[1]...d[n-1] x 10^point, i.e. `point` digits before the decimal point
 * (point may be <= 0 or > n). No trailing zero digits; n == 0 is the value 0. A double's
 * exact expansion has at most 767 significant digits. */
struct decimal {
    int n, point;
    char d[800];
};

enum { LIMB = 100000000 }; /* base of the big integer below: 10^8 per u32 limb */

/* limbs = limbs * factor + add, for factor <= 42 (so a limb times it fits in 32 bits). */
static void limbs_mul_add(u32 *limb, int *count, u32 factor, u32 add) {
    u32 carry = add;
    for (int i = 0; i < *count; i++) {
        u32 t = limb[i] * factor + carry;
        limb[i] = t % LIMB;
        carry = t / LIMB;
    }
    if (carry)
        limb[(*count)++] = carry;
}

static u64 double_bits(double x) {
    union {
        double f;
        u64 u;
    } v = {x};
    return v.u;
}

/* The exact decimal expansion of the finite, non-negative `a`. */
static void decimal_of(double a, struct decimal *out) {
    u64 bits = double_bits(a);
    u32 biased = (u32)(bits >> 52) & 0x7ff;
    u64 m = bits & 0xfffffffffffffull;
    int e;
    if (biased == 0) {
        e = -1074;
    } else {
        m |= 1ull << 52;
        e = (int)biased - 1075;
    }
    out->n = 0;
    out->point = 0;
    if (m == 0)
        return;
    while (!(m & 1)) {
        m >>= 1;
        e++;
    }
    /* a = m * 2^e. For e >= 0 the digits are those of m * 2^e; for e < 0, a = m * 5^-e *
     * 10^e, so they are those of m * 5^-e with the decimal point moved -e places. */
    u32 limb[100];
    int count = 1;
    limb[0] = 0;
    for (int bit = 52; bit >= 0; bit--)
        limbs_mul_add(limb, &count, 2, (u32)(m >> bit) & 1);
    int scale = 0;
    if (e > 0) {
        for (; e >= 5; e -= 5)
            limbs_mul_add(limb, &count, 32, 0);
        if (e)
            limbs_mul_add(limb, &count, 1u << e, 0);
    } else if (e < 0) {
        scale = e;
        for (e = -e; e >= 2; e -= 2)
            limbs_mul_add(limb, &count, 25, 0);
        if (e)
            limbs_mul_add(limb, &count, 5, 0);
    }
    char top[8];
    u32 top_len = digits_backwards(top + 8, limb[count - 1], 10, 0);
    int n = 0;
    for (u32 i = 8 - top_len; i < 8; i++)
        out->d[n++] = top[i];
    for (int i = count - 2; i >= 0; i--) {
        u32 v = limb[i];
        for (int k = 7; k >= 0; k--) {
            out->d[n + k] = (char)('0' + v % 10);
            v /= 10;
        }
        n += 8;
    }
    out->point = n + scale;
    while (out->d[n - 1] == '0')
        n--;
    out->n = n;
}

/* Whether rounding to the first `keep` digits (keep < n) goes up: to nearest, ties to even
 * (digits beyond d[n-1] are all zero, so a 5 followed by more digits is above the tie). */
static int rounds_up(const struct decimal *x, int keep) {
    if (keep < 0)
        return 0;
    char c = x->d[keep];
    if (c != '5')
        return c > '5';
    if (keep + 1 < x->n)
        return 1;
    return keep > 0 && ((x->d[keep - 1] - '0') & 1);
}

/* Whether rounding to `keep` >= 1 digits carries into a new leading digit (999.7 -> 1000). */
static int rounding_carries(const struct decimal *x, int keep) {
    if (keep >= x->n || !rounds_up(x, keep))
        return 0;
    for (int i = 0; i < keep; i++)
        if (x->d[i] != '9')
            return 0;
    return 1;
}

/* Rounds to the first `keep` digits (counted from d[0]; may be <= 0). */
static void round_decimal(struct decimal *x, int keep) {
    if (keep >= x->n)
        return;
    int up = rounds_up(x, keep);
    if (keep <= 0) {
        x->n = up ? 1 : 0;
        if (up) {
            x->d[0] = '1';
            x->point -= keep - 1;
        }
        return;
    }
    x->n = keep;
    if (up) {
        int i = keep - 1;
        while (i >= 0 && x->d[i] == '9')
            x->d[i--] = '0';
        if (i < 0) {
            x->d[0] = '1';
            x->n = 1;
            x->point++;
        } else {
            x->d[i]++;
        }
    }
    while (x->n > 0 && x->d[x->n - 1] == '0')
        x->n--;
}

/* ---- printf ------------------------------------------------------------------------------ */

/* A formatted number or text: head, then `zeros` zero digits, then tail. */
struct body {
    const char *head;
    u32 head_len;
    u32 zeros;
    const char *tail;
    u32 tail_len;
};

/* The text of a floating conversion: room for 310 integer digits, a point and 1074 exact
 * fraction digits (the largest and the smallest doubles). */
struct float_text {
    char text[1400];
    u32 len;
    u32 zeros;
    char tail[8];
    u32 tail_len;
};

enum { LEN_INT, LEN_SHORT, LEN_CHAR, LEN_LONG };

/* One conversion specification (what follows a '%'); see runtime/printf.rs. */
struct spec {
    unsigned char minus, plus, space, alt, zero, group, i18n;
    unsigned char star_left;  /* the width came from a negative `*` argument */
    unsigned char positional; /* formatted on glibc's positional path */
    unsigned char length;
    unsigned char conv;
    u32 width;
    int precision; /* -1: none */
};

static u32 read_number(const unsigned char *t, int *i) {
    u32 n = 0;
    while (t[*i] >= '0' && t[*i] <= '9') {
        u32 d = t[(*i)++] - '0';
        n = n > (0xffffffffu - d) / 10 ? 0xffffffffu : n * 10 + d;
    }
    return n;
}

/* Parses the specification at `t` (just after the '%'), taking `*` arguments. Returns its
 * length, or -1 if the format ends first (then *s holds what was parsed; its conv is 0). */
static int parse_spec(const unsigned char *t, struct spec *s, va_list *ap) {
    s->minus = s->plus = s->space = s->alt = s->zero = s->group = s->i18n = 0;
    s->star_left = s->positional = 0;
    s->length = LEN_INT;
    s->conv = 0;
    s->width = 0;
    s->precision = -1;
    int i = 0;
    for (;; i++) {
        switch (t[i]) {
        case '-': s->minus = 1; continue;
        case '+': s->plus = 1; continue;
        case ' ': s->space = 1; continue;
        case '#': s->alt = 1; continue;
        case '0': s->zero = 1; continue;
        case '\'': s->group = 1; continue;
        case 'I': s->i18n = 1; continue;
        }
        break;
    }
    if (t[i] == '*') {
        i++;
        int w = va_arg(*ap, int);
        s->star_left = w < 0;
        s->width = w < 0 ? 0u - (u32)w : (u32)w;
    } else {
        s->width = read_number(t, &i);
    }
    if (t[i] == '.') {
        i++;
        if (t[i] == '*') {
            i++;
            int p = va_arg(*ap, int);
            s->precision = p < 0 ? -1 : p;
        } else {
            u32 p = read_number(t, &i);
            s->precision = p > 0x7fffffff ? 0x7fffffff : (int)p;
        }
    }
    if (!t[i])
        return -1;
    switch (t[i]) {
    case 'h':
        if (t[i + 1] == 'h') {
            s->length = LEN_CHAR;
            i += 2;
        } else {
            s->length = LEN_SHORT;
            i++;
        }
        break;
    case 'l':
        if (t[i + 1] == 'l') {
            i += 2;
        } else {
            s->length = LEN_LONG;
            i++;
        }
        break;
    case 'L': case 'q': case 'j': case 'z': case 'Z': case 't':
        i++;
        break;
    }
    if (!t[i])
        return -1;
    s->conv = t[i];
    return i + 1;
}

static int one_of(unsigned char c, const char *set) {
    for (; *set; set++)
        if ((unsigned char)*set == c)
            return 1;
    return 0;
}

/* Whether glibc's fast path hands this specification to its positional path. */
static int leaves_fast_path(const struct spec *s) {
    if (!one_of(s->conv, "diuxXobBcCpfFeEgGaA%sSnm"))
        return 1;
    return s->length == LEN_SHORT && one_of(s->conv, "cCpfFeEgGaAsSm");
}

static int left(const struct spec *s) { return s->minus || s->star_left; }

/* glibc's "pad with zeros" state. */
static int pad_zero(const struct spec *s) {
    return s->zero && !s->minus && (s->positional || !s->star_left);
}

static const char *sign_of(int negative, const struct spec *s) {
    return negative ? "-" : s->plus ? "+" : s->space ? " " : "";
}

static u32 body_len(const struct body *b) { return b->head_len + b->zeros + b->tail_len; }

static void put_body(struct sink *o, const struct body *b) {
    put_bytes(o, b->head, b->head_len);
    put_fill(o, '0', b->zeros);
    put_bytes(o, b->tail, b->tail_len);
}

/* Writes prefix and body padded to the field width: spaces on the right when left-justified,
 * zeros between prefix and body when padding with zeros (and zero_ok), else spaces on the
 * left. */
static void pad(struct sink *o, const struct spec *s, const char *prefix, const struct body *b,
                int zero_ok) {
    u32 plen = string_length(prefix);
    u32 len = plen + body_len(b);
    u32 fill = s->width > len ? s->width - len : 0;
    if (left(s)) {
        put_bytes(o, prefix, plen);
        put_body(o, b);
        put_fill(o, ' ', fill);
    } else if (pad_zero(s) && zero_ok) {
        put_bytes(o, prefix, plen);
        put_fill(o, '0', fill);
        put_body(o, b);
    } else {
        put_fill(o, ' ', fill);
        put_bytes(o, prefix, plen);
        put_body(o, b);
    }
}

/* glibc prints an unknown conversion's specification back, canonicalised. */
static void write_unknown(struct sink *o, const struct spec *s) {
    put_byte(o, '%');
    if (s->alt) put_byte(o, '#');
    if (s->group) put_byte(o, '\'');
    if (s->plus) put_byte(o, '+');
    if (s->space && !s->plus) put_byte(o, ' ');
    if (left(s)) put_byte(o, '-');
    if (pad_zero(s)) put_byte(o, '0');
    if (s->i18n) put_byte(o, 'I');
    if (s->width)
        put_uint(o, s->width);
    if (s->precision >= 0) {
        put_byte(o, '.');
        put_uint(o, (u32)s->precision);
    }
    if (s->conv)
        put_byte(o, (char)s->conv);
}

/* An integer conversion of `v`: digits in `buf` (ending at buf + 32), at least `precision`
 * of them (an explicit zero precision prints 0 as nothing). */
static struct body int_body(char *buf, u32 v, u32 radix, int upper, int precision) {
    struct body b = {0, 0, 0, 0, 0};
    u32 n = 0;
    if (!(precision == 0 && v == 0))
        n = digits_backwards(buf + 32, v, radix, upper);
    b.tail = buf + 32 - n;
    b.tail_len = n;
    if (precision > 0 && (u32)precision > n)
        b.zeros = (u32)precision - n;
    return b;
}

static void text_push(struct float_text *t, char c) { t->text[t->len++] = c; }

/* %.Pf of x (consumed: rounded in place). */
static void fixed_text(struct decimal *x, u32 precision, int alt, struct float_text *t) {
    int p = precision > 1200 ? 1200 : (int)precision; /* beyond 1074 fraction digits: zeros */
    round_decimal(x, x->point + p);
    t->len = t->zeros = t->tail_len = 0;
    if (x->n == 0 || x->point <= 0) {
        text_push(t, '0');
    } else {
        for (int i = 0; i < x->point; i++)
            text_push(t, i < x->n ? x->d[i] : '0');
    }
    if (precision > 0 || alt)
        text_push(t, '.');
    int exact = x->n == 0 ? 0 : x->n - x->point;
    if (exact < 0)
        exact = 0;
    if (exact > p)
        exact = p;
    for (int i = 0; i < exact; i++) {
        int j = x->point + i;
        text_push(t, j < 0 ? '0' : x->d[j]);
    }
    t->zeros = precision - (u32)exact;
}

/* %.Pe of x (consumed): at least two exponent digits. */
static void exp_text(struct decimal *x, u32 precision, int alt, int upper, struct float_text *t) {
    int p = precision > 1200 ? 1200 : (int)precision;
    int exponent = 0;
    t->len = t->zeros = t->tail_len = 0;
    if (x->n == 0) {
        text_push(t, '0');
    } else {
        round_decimal(x, p + 1);
        exponent = x->point - 1;
        text_push(t, x->d[0]);
    }
    if (precision > 0 || alt)
        text_push(t, '.');
    int exact = x->n > 1 ? x->n - 1 : 0;
    if (exact > p)
        exact = p;
    for (int i = 1; i <= exact; i++)
        text_push(t, x->d[i]);
    t->zeros = precision - (u32)exact;
    t->tail[t->tail_len++] = upper ? 'E' : 'e';
    t->tail[t->tail_len++] = exponent < 0 ? '-' : '+';
    u32 magnitude = exponent < 0 ? (u32)-exponent : (u32)exponent;
    if (magnitude < 10)
        t->tail[t->tail_len++] = '0';
    char b[12];
    u32 n = digits_backwards(b + 12, magnitude, 10, 0);
    for (u32 i = 12 - n; i < 12; i++)
        t->tail[t->tail_len++] = b[i];
}

/* %.Pg of x (consumed), with glibc's choice of style (see runtime/printf.rs). */
static void general_text(struct decimal *x, u32 precision, int alt, int upper,
                         struct float_text *t) {
    int p = precision == 0 ? 1 : precision > 1200 ? 1200 : (int)precision;
    int carries = x->n > 0 && rounding_carries(x, p);
    int exponent = x->n == 0 ? 0 : x->point - 1 + carries;
    if (exponent < -4 || exponent >= p) {
        /* A carry from the fixed style's last digit keeps its fraction digit count (0). */
        int carried_from_fixed = exponent == p && carries;
        exp_text(x, carried_from_fixed ? 0 : (u32)(p - 1), alt, upper, t);
    } else {
        fixed_text(x, (u32)(p - 1 - exponent), alt, t);
    }
    if (!alt) {
        int has_point = 0;
        for (u32 i = 0; i < t->len; i++)
            has_point |= t->text[i] == '.';
        if (has_point) {
            t->zeros = 0;
            while (t->text[t->len - 1] == '0')
                t->len--;
            if (t->text[t->len - 1] == '.')
                t->len--;
        }
    }
}

/* %a of the finite, non-negative `a` without the "0x": "1.8p+1"; with a precision the
 * fraction is rounded to that many hex digits (ties to even; the leading digit may become
 * 2), without one trailing zeros are dropped. Subnormals print as 0.xxx with exponent -1022. */
static void hex_text(double a, int precision, int alt, int upper, struct float_text *t) {
    u64 bits = double_bits(a);
    u32 biased = (u32)(bits >> 52) & 0x7ff;
    u64 fraction = bits & 0xfffffffffffffull;
    u32 lead = 1;
    int exponent = (int)biased - 1023;
    if (biased == 0) {
        lead = 0;
        exponent = fraction ? -1022 : 0;
    }
    if (precision >= 0 && precision < 13) {
        u32 dropped = (u32)(13 - precision) * 4;
        u64 full = ((u64)lead << 52) | fraction;
        u64 kept = full >> dropped;
        u64 rest = full & ((1ull << dropped) - 1);
        u64 half = 1ull << (dropped - 1);
        if (rest > half || (rest == half && (kept & 1)))
            kept++;
        u32 kept_bits = (u32)precision * 4;
        lead = (u32)(kept >> kept_bits);
        fraction = (kept & ((1ull << kept_bits) - 1)) << dropped;
    }
    const char *digit = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    char digits[13];
    for (int i = 0; i < 13; i++)
        digits[i] = digit[(fraction >> (48 - 4 * i)) & 15];
    u32 n = 13;
    if (precision < 0) {
        while (n > 0 && digits[n - 1] == '0')
            n--;
    } else if (precision < 13) {
        n = (u32)precision;
    }
    t->len = t->tail_len = 0;
    t->zeros = precision > 13 ? (u32)precision - 13 : 0;
    text_push(t, (char)('0' + lead));
    if (n > 0 || t->zeros > 0 || alt)
        text_push(t, '.');
    for (u32 i = 0; i < n; i++)
        text_push(t, digits[i]);
    t->tail[t->tail_len++] = upper ? 'P' : 'p';
    t->tail[t->tail_len++] = exponent < 0 ? '-' : '+';
    char b[12];
    u32 magnitude = exponent < 0 ? (u32)-exponent : (u32)exponent;
    u32 m = digits_backwards(b + 12, magnitude, 10, 0);
    for (u32 i = 12 - m; i < 12; i++)
        t->tail[t->tail_len++] = b[i];
}

static void write_float(struct sink *o, const struct spec *s, double v) {
    int upper = s->conv >= 'A' && s->conv <= 'Z';
    u64 bits = double_bits(v);
    const char *sign = sign_of((int)(bits >> 63), s);
    bits &= ~(1ull << 63);
    union {
        u64 u;
        double f;
    } magnitude = {bits};
    double a = magnitude.f;
    if ((bits >> 52) == 0x7ff) {
        int nan = (bits & 0xfffffffffffffull) != 0;
        const char *word = nan ? (upper ? "NAN" : "nan") : (upper ? "INF" : "inf");
        struct body b = {word, 3, 0, 0, 0};
        pad(o, s, sign, &b, 0);
        return;
    }
    int zero_left = left(s) && pad_zero(s);
    struct float_text t;
    unsigned char conv = s->conv | 0x20;
    if (conv == 'a') {
        hex_text(a, s->precision, s->alt, upper, &t);
        char prefix[4] = {0, 0, 0, 0};
        u32 k = 0;
        if (*sign)
            prefix[k++] = *sign;
        prefix[k++] = '0';
        prefix[k++] = upper ? 'X' : 'x';
        struct body b = {t.text, t.len, t.zeros, t.tail, t.tail_len};
        if (zero_left) {
            /* glibc's hex-float printer pads neither side in this state. */
            put_bytes(o, prefix, k);
            put_body(o, &b);
            return;
        }
        pad(o, s, prefix, &b, 1);
        return;
    }
    struct decimal x;
    decimal_of(a, &x);
    u32 precision = s->precision < 0 ? 6 : (u32)s->precision;
    if (conv == 'f')
        fixed_text(&x, precision, s->alt, &t);
    else if (conv == 'e')
        exp_text(&x, precision, s->alt, upper, &t);
    else
        general_text(&x, precision, s->alt, upper, &t);
    struct body b = {t.text, t.len, t.zeros, t.tail, t.tail_len};
    if (zero_left) {
        /* glibc's decimal printer pads on the right with its pad character. */
        u32 len = string_length(sign) + body_len(&b);
        put_bytes(o, sign, string_length(sign));
        put_body(o, &b);
        put_fill(o, '0', s->width > len ? s->width - len : 0);
        return;
    }
    pad(o, s, sign, &b, 1);
}

/* Formats one specification. Returns 0 where glibc's printf fails (output stops). */
static int write_spec(struct sink *o, const struct spec *s, va_list *ap) {
    char buf[32];
    struct body b = {0, 0, 0, 0, 0};
    switch (s->conv) {
    case '%':
        put_byte(o, '%');
        return 1;
    case 'd':
    case 'i': {
        int v = va_arg(*ap, int);
        if (s->length == LEN_SHORT)
            v = (short)v;
        else if (s->length == LEN_CHAR)
            v = (signed char)v;
        u32 magnitude = v < 0 ? 0u - (u32)v : (u32)v;
        b = int_body(buf, magnitude, 10, 0, s->precision);
        pad(o, s, sign_of(v < 0, s), &b, s->precision < 0);
        return 1;
    }
    case 'u': case 'x': case 'X': case 'o': case 'b': case 'B': {
        u32 v = va_arg(*ap, u32);
        if (s->length == LEN_SHORT)
            v = (unsigned short)v;
        else if (s->length == LEN_CHAR)
            v = (unsigned char)v;
        u32 radix = s->conv == 'u' ? 10 : s->conv == 'o' ? 8 : (s->conv | 0x20) == 'b' ? 2 : 16;
        b = int_body(buf, v, radix, s->conv == 'X', s->precision);
        const char *prefix = "";
        if (s->alt) {
            int starts_with_zero = b.zeros > 0 || (b.tail_len > 0 && b.tail[0] == '0');
            if (s->conv == 'o' && !starts_with_zero)
                prefix = "0";
            else if (s->conv == 'x' && v)
                prefix = "0x";
            else if (s->conv == 'X' && v)
                prefix = "0X";
            else if (s->conv == 'b' && v)
                prefix = "0b";
            else if (s->conv == 'B' && v)
                prefix = "0B";
        }
        pad(o, s, prefix, &b, s->precision < 0);
        return 1;
    }
    case 'c':
    case 'C': {
        int v = va_arg(*ap, int);
        if (s->conv == 'C' || s->length == LEN_LONG) {
            /* A wide character: the C locale encodes only ASCII. */
            if (v < 0 || v > 127)
                return 0;
        }
        buf[0] = (char)v;
        b.head = buf;
        b.head_len = 1;
        pad(o, s, "", &b, 0);
        return 1;
    }
    case 'p': {
        u32 v = va_arg(*ap, u32);
        if (v == 0) {
            b.head = "(nil)";
            b.head_len = 5;
            pad(o, s, "", &b, 0);
        } else {
            b = int_body(buf, v, 16, 0, s->precision);
            pad(o, s, s->plus ? "+0x" : s->space ? " 0x" : "0x", &b, s->precision < 0);
        }
        return 1;
    }
    case 'f': case 'F': case 'e': case 'E': case 'g': case 'G': case 'a': case 'A':
        write_float(o, s, va_arg(*ap, double));
        return 1;
    default:
        write_unknown(o, s);
        return 1;
    }
}

/* printf(fmt, ...) onto `o`. */
static void format(struct sink *o, const char *format_text, va_list *ap) {
    const unsigned char *f = (const unsigned char *)format_text;
    int positional = 0;
    for (;;) {
        while (*f && *f != '%')
            put_byte(o, (char)*f++);
        if (!*f)
            return;
        struct spec s;
        int len = parse_spec(f + 1, &s, ap);
        if (len < 0) {
            /* The fast path gives up; the positional path prints what it parsed. */
            if (positional) {
                s.positional = 1;
                write_unknown(o, &s);
            }
            return;
        }
        positional |= leaves_fast_path(&s);
        s.positional = (unsigned char)positional;
        if (!write_spec(o, &s, ap))
            return;
        f += 1 + len;
    }
}

static void sink_printf(struct sink *o, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    format(o, fmt, &ap);
    va_end(ap);
}

/* ---- Output functions ------------------------------------------------------------------ */

void putint(int v) {
    char b[12];
    u32 n = digits_backwards(b + 12, v < 0 ? 0u - (u32)v : (u32)v, 10, 0);
    if (v < 0)
        b[12 - ++n] = '-';
    put_bytes(&out, b + 12 - n, n);
}

void putch(int c) { put_byte(&out, (char)c); }

static void put_hex_float(float v) {
    static const struct spec plain_a = {0, 0, 0, 0, 0, 0, 0, 0, 0, LEN_INT, 'a', 0, -1};
    write_float(&out, &plain_a, (double)v);
}

void putfloat(float v) { put_hex_float(v); }

void putarray(int n, int a[]) {
    putint(n);
    put_byte(&out, ':');
    for (int i = 0; i < n; i++) {
        put_byte(&out, ' ');
        putint(a[i]);
    }
    put_byte(&out, '\n');
}

void putfarray(int n, float a[]) {
    putint(n);
    put_byte(&out, ':');
    for (int i = 0; i < n; i++) {
        put_byte(&out, ' ');
        put_hex_float(a[i]);
    }
    put_byte(&out, '\n');
}

void putf(const char fmt[], ...) {
    va_list ap;
    va_start(ap, fmt);
    format(&out, fmt, &ap);
    va_end(ap);
}

/* ---- Input ----------------------------------------------------------------------------- */

/* Standard input, read in blocks. `eof` is sticky: once read() reports the end (or an
 * error), no more reads are made. */
static struct {
    u32 pos, len;
    int eof;
    unsigned char buf[1 << 16];
} in;

/* The next byte without consuming it, or -1 at the end of input. */
static int in_peek(void) {
    if (in.pos == in.len) {
        if (in.eof)
            return -1;
        long n = syscall3(SYS_READ, 0, (long)in.buf, sizeof in.buf);
        if (n <= 0) {
            in.eof = 1;
            return -1;
        }
        in.pos = 0;
        in.len = (u32)n;
    }
    return in.buf[in.pos];
}

static void in_advance(void) { in.pos++; }

static int is_space(int c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
static int is_digit(int c) { return c >= '0' && c <= '9'; }
static int lower(int c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

static int hex_value(int c) {
    if (is_digit(c))
        return c - '0';
    c = lower(c);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Skips white space; returns the next byte (not consumed) or -1. */
static int skip_space(void) {
    int c;
    while (is_space(c = in_peek()))
        in_advance();
    return c;
}

/* scanf("%d", v): 1 converted, 0 no number (v untouched), -1 end of input first. */
static int scan_int(int *v) {
    int c = skip_space();
    if (c < 0)
        return -1;
    int negative = 0;
    if (c == '-' || c == '+') {
        negative = c == '-';
        in_advance();
        c = in_peek();
    }
    if (!is_digit(c))
        return 0;
    u64 magnitude = 0; /* saturates far above 2^31 */
    do {
        if (magnitude < 1ull << 40)
            magnitude = magnitude * 10 + (u32)(c - '0');
        in_advance();
        c = in_peek();
    } while (is_digit(c));
    if (negative)
        *v = magnitude >= 0x80000000u ? (int)0x80000000u : -(int)(u32)magnitude;
    else
        *v = magnitude > 0x7fffffffu ? 0x7fffffff : (int)(u32)magnitude;
    return 1;
}

/* scanf("%c", v). */
static int scan_char(int *v) {
    int c = in_peek();
    if (c < 0)
        return -1;
    in_advance();
    *v = c;
    return 1;
}

/* ---- strtof ---------------------------------------------------------------------------- */

static float float_of_bits(u32 bits) {
    union {
        u32 u;
        float f;
    } v = {bits};
    return v.f;
}

static int leading_zeros64(u64 x) {
    u32 hi = (u32)(x >> 32);
    return hi ? __builtin_clz(hi) : 32 + __builtin_clz((u32)x);
}

/* mant * 2^exp (plus, if `sticky`, something nonzero below mant's last bit) rounded to
 * binary32, to nearest, ties to even. */
static u32 round_to_float_bits(u64 mant, int sticky, int exp) {
    if (mant == 0)
        return 0;
    int lz = leading_zeros64(mant);
    u64 m = mant << lz;
    int e = exp - lz + 63; /* value = 1.xxx * 2^e */
    if (e > 128)
        return 0x7f800000;
    int shift = e >= -126 ? 40 : 40 + (-126 - e); /* bits of m below the significand */
    if (shift > 64)
        return 0;
    u64 kept;
    int half, below;
    if (shift == 64) {
        kept = 0;
        half = 1;
        below = (m << 1) != 0 || sticky;
    } else {
        kept = m >> shift;
        u64 rest = m & ((1ull << shift) - 1);
        u64 half_bit = 1ull << (shift - 1);
        half = (rest & half_bit) != 0;
        below = (rest & (half_bit - 1)) != 0 || sticky;
    }
    if (half && (below || (kept & 1)))
        kept++;
    if (e < -126)
        return (u32)kept; /* subnormal; 2^23 is the smallest normal */
    u32 bits = ((u32)(e + 127) << 23) + (u32)kept - (1u << 23);
    return bits >= 0x7f800000 ? 0x7f800000 : bits;
}

/* A binary big integer for decimal-to-float conversion: up to 1280 bits. */
struct big {
    int n;
    u32 w[40];
};

static void big_set(struct big *b, u32 v) {
    b->n = v ? 1 : 0;
    b->w[0] = v;
}

static void big_mul_add(struct big *b, u32 factor, u32 add) {
    u32 carry = add;
    for (int i = 0; i < b->n; i++) {
        u64 t = (u64)b->w[i] * factor + carry;
        b->w[i] = (u32)t;
        carry = (u32)(t >> 32);
    }
    if (carry)
        b->w[b->n++] = carry;
}

static void big_shift_left(struct big *b, int bits) {
    int words = bits / 32, r = bits % 32;
    if (b->n == 0)
        return;
    b->w[b->n] = 0;
    for (int i = b->n; i >= 0; i--) {
        u32 v = b->w[i] << r;
        if (r && i > 0)
            v |= b->w[i - 1] >> (32 - r);
        b->w[i + words] = v;
    }
    for (int i = 0; i < words; i++)
        b->w[i] = 0;
    b->n += words + 1;
    while (b->n > 0 && b->w[b->n - 1] == 0)
        b->n--;
}

static int big_bits(const struct big *b) {
    return b->n == 0 ? 0 : 32 * b->n - __builtin_clz(b->w[b->n - 1]);
}

static int big_compare(const struct big *a, const struct big *b) {
    if (a->n != b->n)
        return a->n < b->n ? -1 : 1;
    for (int i = a->n - 1; i >= 0; i--)
        if (a->w[i] != b->w[i])
            return a->w[i] < b->w[i] ? -1 : 1;
    return 0;
}

static void big_copy(struct big *to, const struct big *from) {
    to->n = from->n;
    for (int i = 0; i < from->n; i++)
        to->w[i] = from->w[i];
}

/* a -= b, for a >= b. */
static void big_subtract(struct big *a, const struct big *b) {
    u32 borrow = 0;
    for (int i = 0; i < a->n; i++) {
        u64 t = (u64)a->w[i] - (i < b->n ? b->w[i] : 0) - borrow;
        a->w[i] = (u32)t;
        borrow = (u32)(t >> 63);
    }
    while (a->n > 0 && a->w[a->n - 1] == 0)
        a->n--;
}

static void big_pow10(struct big *b, int k) {
    for (; k >= 9; k -= 9)
        big_mul_add(b, 1000000000u, 0);
    for (; k > 0; k--)
        big_mul_add(b, 10, 0);
}

/* Significant decimal digits kept exactly; more are folded into one sticky digit. */
enum { SIGNIFICANT = 200 };

/* A decimal number being read: digits[0..count) x 10^scale. */
struct decimal_input {
    char digits[SIGNIFICANT + 1];
    int count;
    int scale;
    int sticky;
};

/* The float nearest to digits x 10^(scale + exponent). */
static u32 decimal_to_float_bits(struct decimal_input *d, int exponent) {
    if (d->sticky) {
        /* Something nonzero beyond the kept digits: one more digit 1 says so. */
        d->digits[d->count++] = 1;
        d->scale--;
    }
    if (d->count == 0)
        return 0;
    int total = d->scale + exponent;
    int magnitude = d->count + total; /* value < 10^magnitude */
    if (magnitude > 40)
        return 0x7f800000;
    if (magnitude < -47)
        return 0;
    struct big n, m;
    big_set(&n, 0);
    for (int i = 0; i < d->count; i++)
        big_mul_add(&n, 10, (u32)d->digits[i]);
    big_set(&m, 1);
    if (total >= 0)
        big_pow10(&n, total);
    else
        big_pow10(&m, -total);
    /* Find s with n * 2^s / m in [2^23, 2^24): the float is q * 2^-s, exponent 23 - s. */
    int s = 24 - (big_bits(&n) - big_bits(&m));
    struct big a, b, t;
    for (;;) {
        big_copy(&a, &n);
        big_copy(&b, &m);
        if (s >= 0)
            big_shift_left(&a, s);
        else
            big_shift_left(&b, -s);
        big_copy(&t, &b);
        big_shift_left(&t, 24);
        if (big_compare(&a, &t) >= 0) {
            s--;
            continue;
        }
        big_copy(&t, &b);
        big_shift_left(&t, 23);
        if (big_compare(&a, &t) < 0) {
            s++;
            continue;
        }
        break;
    }
    int e2 = 23 - s;
    if (e2 > 127)
        return 0x7f800000;
    if (e2 < -126) {
        /* Subnormal: q counts units of 2^-149. */
        s = 149;
        big_copy(&a, &n);
        big_copy(&b, &m);
        big_shift_left(&a, s);
    }
    u32 q = 0;
    for (int bit = 23; bit >= 0; bit--) {
        big_copy(&t, &b);
        big_shift_left(&t, bit);
        if (big_compare(&a, &t) >= 0) {
            big_subtract(&a, &t);
            q |= 1u << bit;
        }
    }
    big_shift_left(&a, 1);
    int c = big_compare(&a, &b);
    if (c > 0 || (c == 0 && (q & 1)))
        q++;
    if (e2 < -126)
        return q; /* 2^23 here is the smallest normal */
    u32 bits = ((u32)(e2 + 127) << 23) + q - (1u << 23);
    return bits >= 0x7f800000 ? 0x7f800000 : bits;
}

/* scanf("%a", v), following glibc's vfscanf: characters are collected while they can
 * continue a number, with one character of look-ahead, then converted as strtof would. */
static int scan_float(float *v) {
    int c = skip_space();
    if (c < 0)
        return -1;
    int negative = 0;
    if (c == '-' || c == '+') {
        negative = c == '-';
        in_advance();
        c = in_peek();
        if (c < 0)
            return 0;
    }
    u32 bits;
    if (lower(c) == 'n' || lower(c) == 'i') {
        /* "nan", "inf", "infinity": a mismatch fails and consumes the mismatching byte. */
        const char *word = lower(c) == 'n' ? "nan" : "inf";
        in_advance();
        for (int k = 1; k < 3; k++) {
            c = in_peek();
            if (c < 0)
                return 0;
            in_advance();
            if (lower(c) != word[k])
                return 0;
        }
        bits = word[0] == 'n' ? 0x7fc00000 : 0x7f800000;
        if (word[0] == 'i' && lower(in_peek()) == 'i') {
            in_advance();
            for (const char *rest = "nity"; *rest; rest++) {
                c = in_peek();
                if (c < 0)
                    return 0;
                in_advance();
                if (lower(c) != *rest)
                    return 0;
            }
        }
    } else {
        int hex = 0, got_digit = 0, got_dot = 0, got_e = 0;
        u32 collected = 0;   /* bytes taken into the number */
        int last = 0;        /* the last byte taken (the exponent letter in lower case) */
        int mantissa_digits = 0, exponent_digits = 0, exponent_negative = 0;
        int exponent = 0;    /* saturates at 100000000 */
        struct decimal_input dec;
        dec.count = dec.scale = dec.sticky = 0;
        u64 hex_mant = 0;    /* hex: leading 60 bits of the significand */
        int hex_sticky = 0, hex_adjust = 0;
        if (c == '0') {
            in_advance();
            collected++;
            c = in_peek();
            if (lower(c) == 'x') {
                in_advance();
                collected++;
                hex = 1;
                c = in_peek();
            } else {
                got_digit = 1;
                mantissa_digits++;
            }
        }
        int exp_char = hex ? 'p' : 'e';
        for (; c >= 0; c = in_peek()) {
            int h = hex_value(c);
            if (is_digit(c) || (!got_e && hex && h >= 0)) {
                got_digit = 1;
                if (got_e) {
                    exponent_digits++;
                    if (exponent < 100000000)
                        exponent = exponent * 10 + (c - '0');
                } else if (hex) {
                    mantissa_digits++;
                    if (hex_mant >> 56 == 0) {
                        hex_mant = (hex_mant << 4) | (u32)h;
                        if (got_dot)
                            hex_adjust -= 4;
                    } else {
                        hex_sticky |= h != 0;
                        if (!got_dot)
                            hex_adjust += 4;
                    }
                } else {
                    mantissa_digits++;
                    if (dec.count == 0 && c == '0') {
                        if (got_dot)
                            dec.scale--;
                    } else if (dec.count < SIGNIFICANT) {
                        dec.digits[dec.count++] = (char)(c - '0');
                        if (got_dot)
                            dec.scale--;
                    } else {
                        dec.sticky |= c != '0';
                        if (!got_dot)
                            dec.scale++;
                    }
                }
                last = c;
            } else if (got_e && last == exp_char && (c == '-' || c == '+')) {
                exponent_negative = c == '-';
                last = c;
            } else if (got_digit && !got_e && lower(c) == exp_char) {
                got_e = got_dot = 1;
                last = exp_char;
            } else if (!got_dot && c == '.') {
                got_dot = 1;
                last = c;
            } else {
                break;
            }
            in_advance();
            collected++;
        }
        if (collected == 0 || (hex && collected == 2))
            return 0;
        int e = exponent_digits ? (exponent_negative ? -exponent : exponent) : 0;
        if (hex) {
            /* strtof reads a "0x" without hex digits as the number 0. */
            bits = mantissa_digits ? round_to_float_bits(hex_mant, hex_sticky, e + hex_adjust) : 0;
        } else {
            if (!mantissa_digits)
                return 0; /* "." alone: strtof converts nothing */
            bits = decimal_to_float_bits(&dec, e);
        }
    }
    *v = float_of_bits(negative ? bits ^ 0x80000000u : bits);
    return 1;
}

/* ---- Input functions ------------------------------------------------------------------- */

int getint(void) {
    int v = 0;
    scan_int(&v);
    return v;
}

int getch(void) {
    int c = 0;
    scan_char(&c);
    return c;
}

float getfloat(void) {
    float v = 0;
    scan_float(&v);
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

/* ---- Timers ---------------------------------------------------------------------------- */

struct timer_pair {
    int start_line, stop_line;
    u64 micros;
};

/* Finished pairs, in stoptime() order: first in timer_space, then in mmap'ed memory. */
static struct timer_pair timer_space[256];
static struct timer_pair *timer_pairs;
static u32 timer_count, timer_capacity;

/* The pending starttime(): its line and when it happened. */
static int open_line;
static int timer_is_open;
static u64 open_micros;

/* Set by `SYSY_FIXED_CLOCK=1` in the environment (the harness's runs): every timer reads 0,
 * so the report on stderr, and the instructions that format it, do not depend on how long the
 * run took. Nothing else changes: the program cannot observe the clock. */
static int fixed_clock;

static u64 now_micros(void) {
    if (fixed_clock)
        return 0;
    struct {
        long tv_sec, tv_nsec;
    } t = {0, 0};
    syscall3(SYS_CLOCK_GETTIME, 1 /* CLOCK_MONOTONIC */, (long)&t, 0);
    return (u64)(u32)t.tv_sec * 1000000u + (u32)t.tv_nsec / 1000u;
}

void _sysy_starttime(int line) {
    open_line = line;
    timer_is_open = 1;
    open_micros = now_micros();
}

void _sysy_stoptime(int line) {
    u64 end = now_micros();
    if (!timer_pairs) {
        timer_pairs = timer_space;
        timer_capacity = sizeof timer_space / sizeof timer_space[0];
    }
    if (timer_count == timer_capacity) {
        u32 capacity = 2 * timer_capacity;
        long p = syscall6(SYS_MMAP2, 0, (long)(capacity * sizeof *timer_pairs),
                          3 /* PROT_READ | PROT_WRITE */, 0x22 /* MAP_PRIVATE | MAP_ANONYMOUS */,
                          -1, 0);
        if ((unsigned long)p >= (unsigned long)-4095) {
            static const char message[] = "sysy runtime: out of memory for timers\n";
            syscall3(SYS_WRITE, 2, (long)message, sizeof message - 1);
            syscall3(SYS_EXIT_GROUP, 134, 0, 0);
        }
        struct timer_pair *grown = (struct timer_pair *)p;
        for (u32 i = 0; i < timer_count; i++)
            grown[i] = timer_pairs[i];
        timer_pairs = grown;
        timer_capacity = capacity;
    }
    /* A stoptime() without a pending starttime() counts as starting at line 0, now. */
    timer_pairs[timer_count].start_line = timer_is_open ? open_line : 0;
    timer_pairs[timer_count].stop_line = line;
    timer_pairs[timer_count].micros = timer_is_open ? end - open_micros : 0;
    timer_count++;
    timer_is_open = 0;
    open_line = 0;
}

/* n / d (and the remainder), by binary long division: no libgcc. */
static u64 divide(u64 n, u32 d, u32 *remainder) {
    u64 q = 0, r = 0;
    for (int bit = 63; bit >= 0; bit--) {
        r = (r << 1) | ((n >> bit) & 1);
        if (r >= d) {
            r -= d;
            q |= 1ull << bit;
        }
    }
    *remainder = (u32)r;
    return q;
}

/* "<prefix>xH-xM-xS-xus\n", with sysy_rt.c's arithmetic. */
static void print_duration(struct sink *err, u64 micros) {
    /* Every run of the harness reads a fixed clock of 0: the same bytes, without the
     * divisions and the formatter (whose blocks qemu would otherwise translate in every run). */
    if (micros == 0) {
        static const char zero[] = "0H-0M-0S-0us\n";
        put_bytes(err, zero, sizeof zero - 1);
        return;
    }
    u32 us, s, m, unused;
    u64 seconds = divide(micros, 1000000, &us);
    u64 minutes = divide(seconds, 60, &s);
    divide(minutes, 60, &m);
    u64 hours = divide(seconds, 3600, &unused);
    sink_printf(err, "%dH-%dM-%dS-%dus\n", (int)(u32)hours, (int)m, (int)s, (int)us);
}

static void report_timers(void) {
    static char space[128];
    struct sink err = {space, 0, sizeof space, 2};
    u64 total = 0;
    for (u32 i = 0; i < timer_count; i++) {
        sink_printf(&err, "Timer@%04d-%04d: ", timer_pairs[i].start_line, timer_pairs[i].stop_line);
        print_duration(&err, timer_pairs[i].micros);
        total += timer_pairs[i].micros;
        sink_flush(&err);
    }
    static const char total_prefix[] = "TOTAL: ";
    put_bytes(&err, total_prefix, sizeof total_prefix - 1);
    print_duration(&err, total);
    sink_flush(&err);
}

/* ---- Entry point ----------------------------------------------------------------------- */

/* Whether `entry` is exactly "SYSY_FIXED_CLOCK=1". */
static int is_fixed_clock_entry(const char *entry) {
    static const char wanted[] = "SYSY_FIXED_CLOCK=1";
    for (u32 i = 0; i < sizeof wanted; i++)
        if (entry[i] != wanted[i])
            return 0;
    return 1;
}

/* The entry code (`_start` and `sysy_start`, the only code that refers to the program: it
 * calls `main`) is in a section of its own, which the in-process linker places with the
 * program; everything else is placed at the same address in every executable, so that its
 * bytes do not depend on the program (see isa/arm/link.rs). */
#define SYSY_ENTRY_SECTION ".text.sysy_entry"

/* Runs main and exits like glibc's exit() does for sysy_rt.c: destructor (timer report),
 * then the stdio flush. `initial_sp` is the kernel's: argc, argv[argc + 1], envp (null
 * terminated). */
__attribute__((used, noreturn, noipa, section(SYSY_ENTRY_SECTION))) static void sysy_start(long *initial_sp) {
    char **envp = (char **)(initial_sp + initial_sp[0] + 2);
    for (; *envp; envp++)
        if (is_fixed_clock_entry(*envp))
            fixed_clock = 1;
    int status = main();
    report_timers();
    sink_flush(&out);
    for (;;)
        syscall3(SYS_EXIT_GROUP, status, 0, 0);
}

/* The kernel starts the process here with sp at argc (passed on to sysy_start); AAPCS wants
 * sp 8-byte aligned at calls, and a zero fp/lr ends backtraces. */
__asm__(".section " SYSY_ENTRY_SECTION ",\"ax\",%progbits\n"
        ".global _start\n"
        ".type _start, %function\n"
        "_start:\n"
        "\tmov fp, #0\n"
        "\tmov lr, #0\n"
        "\tmov r0, sp\n"
        "\tbic sp, sp, #7\n"
        "\tbl sysy_start\n"
        ".size _start, .-_start\n"
        ".previous\n");
