/*
 * runtime_driver.c: exercises the C runtime library (sysy_rt.c) for the differential test
 * runtime_vs_io.rs, which checks the Rust model (sysyc::runtime::io) against it.
 *
 * Commands come one per line on stdin; the output of each is followed by a 0x1e byte (ASCII
 * record separator) so the test can compare them one by one. Floats travel as the hex digits
 * of their bit patterns, text as hex digits of its bytes ("-" for none).
 *
 *   P <shape> <fmt> <args>  putf(fmt, args...); shape: one letter per argument, i = int,
 *                           f = float (promoted to double), or "-" for no argument
 *   I <int>                 putint          C <int>   putch          F <bits>  putfloat
 *   A <n> <ints>            putarray        B <n> <bits>              putfarray
 *   G <kind> <input>        reads from <input> (stdin is replaced by a memory stream) with
 *                           kind d = getint, c = getch, f = getfloat, a = getarray,
 *                           b = getfarray; prints "<scanf result> <value(s)> <rest of input>"
 *                           where the scanf result comes from a second pass calling scanf
 *                           directly (1 = converted; 0 or -1 = failed) and the rest of the
 *                           input is what the runtime call left unread
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sysy_rt.h"

static FILE *commands;
static char token[1 << 20];
static unsigned char bytes[1 << 19];

static const char *next_token(void) {
    if (fscanf(commands, "%1048575s", token) != 1) {
        fputs("driver: truncated command\n", stderr);
        exit(100);
    }
    return token;
}

static int next_int(void) { return (int)strtol(next_token(), NULL, 10); }

static float next_float(void) {
    union { unsigned bits; float value; } u;
    u.bits = (unsigned)strtoul(next_token(), NULL, 16);
    return u.value;
}

static unsigned bits_of(float f) {
    union { unsigned bits; float value; } u;
    u.value = f;
    return u.bits;
}

/* Decodes the next token's hex digits into `bytes`; returns the length. */
static size_t next_bytes(void) {
    const char *hex = next_token();
    size_t n = 0;
    if (strcmp(hex, "-") == 0)
        return 0;
    for (; hex[0] && hex[1]; hex += 2) {
        char pair[3] = {hex[0], hex[1], 0};
        bytes[n++] = (unsigned char)strtoul(pair, NULL, 16);
    }
    return n;
}

static void do_putf(void) {
    char shape[16];
    strncpy(shape, next_token(), sizeof shape - 1);
    shape[sizeof shape - 1] = 0;
    size_t len = next_bytes();
    char *fmt = malloc(len + 1);
    memcpy(fmt, bytes, len);
    fmt[len] = 0;
    int i[4];
    float f[4];
    /* Read the arguments in order, ints into i[], floats into f[]. */
    int ni = 0, nf = 0;
    for (const char *s = shape; *s && *s != '-'; s++) {
        if (*s == 'i')
            i[ni++] = next_int();
        else
            f[nf++] = next_float();
    }
    if (!strcmp(shape, "-")) putf(fmt);
    else if (!strcmp(shape, "i")) putf(fmt, i[0]);
    else if (!strcmp(shape, "f")) putf(fmt, f[0]);
    else if (!strcmp(shape, "ii")) putf(fmt, i[0], i[1]);
    else if (!strcmp(shape, "if")) putf(fmt, i[0], f[0]);
    else if (!strcmp(shape, "fi")) putf(fmt, f[0], i[0]);
    else if (!strcmp(shape, "ff")) putf(fmt, f[0], f[1]);
    else if (!strcmp(shape, "iii")) putf(fmt, i[0], i[1], i[2]);
    else if (!strcmp(shape, "iif")) putf(fmt, i[0], i[1], f[0]);
    else if (!strcmp(shape, "ifif")) putf(fmt, i[0], f[0], i[1], f[1]);
    else if (!strcmp(shape, "iff")) putf(fmt, i[0], f[0], f[1]);
    else if (!strcmp(shape, "fif")) putf(fmt, f[0], i[0], f[1]);
    else if (!strcmp(shape, "iiii")) putf(fmt, i[0], i[1], i[2], i[3]);
    else if (!strcmp(shape, "iiif")) putf(fmt, i[0], i[1], i[2], f[0]);
    else if (!strcmp(shape, "iifi")) putf(fmt, i[0], i[1], f[0], i[2]);
    else if (!strcmp(shape, "iiff")) putf(fmt, i[0], i[1], f[0], f[1]);
    else if (!strcmp(shape, "ifii")) putf(fmt, i[0], f[0], i[1], i[2]);
    else if (!strcmp(shape, "fiif")) putf(fmt, f[0], i[0], i[1], f[1]);
    else {
        fprintf(stderr, "driver: unsupported shape %s\n", shape);
        exit(100);
    }
    free(fmt);
}

static void print_rest(void) {
    int c, any = 0;
    putch(' ');
    while ((c = fgetc(stdin)) != EOF) {
        printf("%02x", c);
        any = 1;
    }
    if (!any)
        putch('-');
}

/* Opens the input as stdin; every runtime read now comes from it. */
static void open_input(size_t len) {
    /* fmemopen does not accept an empty buffer: read an empty input from /dev/null. */
    stdin = len ? fmemopen(bytes, len, "r") : fopen("/dev/null", "r");
    if (!stdin) {
        perror("driver: fmemopen");
        exit(100);
    }
}

static void do_get(void) {
    char kind = next_token()[0];
    size_t len = next_bytes();

    /* Pass 1: scanf directly, for its return value. */
    int ret;
    open_input(len);
    {
        int d;
        float f;
        char c;
        if (kind == 'f')
            ret = scanf("%a", &f);
        else if (kind == 'c')
            ret = scanf("%c", &c);
        else
            ret = scanf("%d", &d);
    }
    fclose(stdin);

    /* Pass 2: the runtime function, for the value and what it leaves unread. */
    open_input(len);
    printf("%d", ret);
    if (kind == 'd') {
        printf(" %d", getint());
    } else if (kind == 'c') {
        printf(" %d", getch());
    } else if (kind == 'f') {
        printf(" %08x", bits_of(getfloat()));
    } else if (kind == 'a') {
        static int a[4096];
        int n = getarray(a);
        printf(" %d", n);
        for (int k = 0; k < n; k++)
            printf(",%d", a[k]);
    } else if (kind == 'b') {
        static float a[4096];
        int n = getfarray(a);
        printf(" %d", n);
        for (int k = 0; k < n; k++)
            printf(",%08x", bits_of(a[k]));
    }
    print_rest();
    fclose(stdin);
}

int main(void) {
    static int ints[4096];
    static float floats[4096];
    char op[8];
    commands = stdin;
    while (fscanf(commands, "%7s", op) == 1) {
        switch (op[0]) {
        case 'P': do_putf(); break;
        case 'I': putint(next_int()); break;
        case 'C': putch(next_int()); break;
        case 'F': putfloat(next_float()); break;
        case 'A': {
            int n = next_int();
            for (int k = 0; k < n; k++) ints[k] = next_int();
            putarray(n, ints);
            break;
        }
        case 'B': {
            int n = next_int();
            for (int k = 0; k < n; k++) floats[k] = next_float();
            putfarray(n, floats);
            break;
        }
        case 'G': do_get(); break;
        default:
            fprintf(stderr, "driver: unknown command %s\n", op);
            return 100;
        }
        putch(0x1e);
    }
    return 0;
}
