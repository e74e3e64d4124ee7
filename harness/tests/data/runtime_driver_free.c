/*
 * runtime_driver_free.c: runtime_driver.c for the freestanding runtime (sysy_rt_free.c),
 * for the differential test runtime_vs_io.rs. Same commands on stdin, same records on
 * stdout (each followed by a 0x1e byte); see runtime_driver.c for the command language.
 *
 * Built without any C library: `gcc <the runtime's flags> -nostdlib -static -I <dir of
 * sysy_rt_free.c>`. The runtime source is included, not linked, because the driver needs
 * two things the public functions do not offer: the scanf-level result of a read (1 =
 * converted, 0 = no match, -1 = end of input first: scan_int, scan_char, scan_float) and
 * a way to put a `G` command's input text in the runtime's stdin buffer. Everything the
 * record shows is printed with the runtime's own putf/putch; the test compares each record
 * with glibc's too, so a formatting bug cannot hide behind itself.
 */
#include "sysy_rt_free.c"

static void die(const char *message) {
    syscall3(SYS_WRITE, 2, (long)message, string_length(message));
    syscall3(SYS_EXIT_GROUP, 100, 0, 0);
}

/* ---- Commands, read from fd 0 (the runtime's stdin buffer is reserved for G inputs) ---- */

static unsigned char command_buf[1 << 16];
static u32 command_pos, command_len;

static int command_byte(void) {
    if (command_pos == command_len) {
        long n = syscall3(SYS_READ, 0, (long)command_buf, sizeof command_buf);
        if (n <= 0)
            return -1;
        command_pos = 0;
        command_len = (u32)n;
    }
    return command_buf[command_pos++];
}

static char token[1 << 20];

/* The next white-space separated token, or 0 at the end of the commands. */
static int read_token(void) {
    int c;
    while ((c = command_byte()) >= 0 && is_space(c))
        ;
    if (c < 0)
        return 0;
    u32 n = 0;
    do {
        if (n + 1 >= sizeof token)
            die("driver: token too long\n");
        token[n++] = (char)c;
    } while ((c = command_byte()) >= 0 && !is_space(c));
    token[n] = 0;
    return 1;
}

static const char *next_token(void) {
    if (!read_token())
        die("driver: truncated command\n");
    return token;
}

static int next_int(void) {
    const char *t = next_token();
    int negative = *t == '-';
    if (*t == '-' || *t == '+')
        t++;
    u32 v = 0;
    for (; is_digit(*t); t++)
        v = v * 10 + (u32)(*t - '0');
    return negative ? (int)(0u - v) : (int)v;
}

static u32 next_hex(void) {
    u32 v = 0;
    for (const char *t = next_token(); hex_value(*t) >= 0; t++)
        v = v * 16 + (u32)hex_value(*t);
    return v;
}

static float next_float(void) { return float_of_bits(next_hex()); }

static unsigned bits_of(float f) {
    union {
        float value;
        unsigned bits;
    } u = {f};
    return u.bits;
}

static unsigned char bytes[1 << 19];

/* Decodes the next token's hex digits into `bytes`; returns the length. */
static u32 next_bytes(void) {
    const char *hex = next_token();
    u32 n = 0;
    if (hex[0] == '-' && hex[1] == 0)
        return 0;
    for (; hex[0] && hex[1]; hex += 2)
        bytes[n++] = (unsigned char)(hex_value(hex[0]) * 16 + hex_value(hex[1]));
    return n;
}

static int same(const char *a, const char *b) {
    while (*a && *a == *b)
        a++, b++;
    return *a == *b;
}

static void do_putf(void) {
    char shape[16];
    const char *t = next_token();
    u32 k = 0;
    for (; t[k] && k < sizeof shape - 1; k++)
        shape[k] = t[k];
    shape[k] = 0;
    u32 len = next_bytes();
    static char fmt[sizeof bytes + 1];
    for (u32 j = 0; j < len; j++)
        fmt[j] = (char)bytes[j];
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
    if (same(shape, "-")) putf(fmt);
    else if (same(shape, "i")) putf(fmt, i[0]);
    else if (same(shape, "f")) putf(fmt, f[0]);
    else if (same(shape, "ii")) putf(fmt, i[0], i[1]);
    else if (same(shape, "if")) putf(fmt, i[0], f[0]);
    else if (same(shape, "fi")) putf(fmt, f[0], i[0]);
    else if (same(shape, "ff")) putf(fmt, f[0], f[1]);
    else if (same(shape, "iii")) putf(fmt, i[0], i[1], i[2]);
    else if (same(shape, "iif")) putf(fmt, i[0], i[1], f[0]);
    else if (same(shape, "ifif")) putf(fmt, i[0], f[0], i[1], f[1]);
    else if (same(shape, "iff")) putf(fmt, i[0], f[0], f[1]);
    else if (same(shape, "fif")) putf(fmt, f[0], i[0], f[1]);
    else if (same(shape, "iiii")) putf(fmt, i[0], i[1], i[2], i[3]);
    else if (same(shape, "iiif")) putf(fmt, i[0], i[1], i[2], f[0]);
    else if (same(shape, "iifi")) putf(fmt, i[0], i[1], f[0], i[2]);
    else if (same(shape, "iiff")) putf(fmt, i[0], i[1], f[0], f[1]);
    else if (same(shape, "ifii")) putf(fmt, i[0], f[0], i[1], i[2]);
    else if (same(shape, "fiif")) putf(fmt, f[0], i[0], i[1], f[1]);
    else die("driver: unsupported shape\n");
}

/* Makes `bytes[0..len)` the whole of the runtime's standard input. */
static void open_input(u32 len) {
    if (len > sizeof in.buf)
        die("driver: input too long\n");
    for (u32 k = 0; k < len; k++)
        in.buf[k] = bytes[k];
    in.pos = 0;
    in.len = len;
    in.eof = 1;
}

static void print_rest(void) {
    int c, any = 0;
    putch(' ');
    while ((c = in_peek()) >= 0) {
        in_advance();
        putf("%02x", c);
        any = 1;
    }
    if (!any)
        putch('-');
}

static void do_get(void) {
    char kind = next_token()[0];
    u32 len = next_bytes();

    /* Pass 1: the scanf-level read, for its result. */
    int ret;
    open_input(len);
    {
        int d;
        float f;
        if (kind == 'f')
            ret = scan_float(&f);
        else if (kind == 'c')
            ret = scan_char(&d);
        else
            ret = scan_int(&d);
    }

    /* Pass 2: the runtime function, for the value and what it leaves unread. */
    open_input(len);
    putf("%d", ret);
    if (kind == 'd') {
        putf(" %d", getint());
    } else if (kind == 'c') {
        putf(" %d", getch());
    } else if (kind == 'f') {
        putf(" %08x", bits_of(getfloat()));
    } else if (kind == 'a') {
        static int a[4096];
        int n = getarray(a);
        putf(" %d", n);
        for (int k = 0; k < n; k++)
            putf(",%d", a[k]);
    } else if (kind == 'b') {
        static float a[4096];
        int n = getfarray(a);
        putf(" %d", n);
        for (int k = 0; k < n; k++)
            putf(",%08x", bits_of(a[k]));
    }
    print_rest();
}

int main(void) {
    static int ints[4096];
    static float floats[4096];
    while (read_token()) {
        switch (token[0]) {
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
            die("driver: unknown command\n");
        }
        putch(0x1e);
    }
    return 0;
}
