/*
 * sysy_rt.h: the SysY runtime library's interface, for C programs.
 *
 * SysY programs never include this file; the compiler knows these signatures. It exists for
 * C translations of SysY programs (the gcc "third opinion" of the harness): gcc is invoked
 * with `-include sysy_rt.h`, so a SysY program compiles as C unchanged, `starttime()` and
 * `stoptime()` included. The implementation is sysy_rt.c.
 */
#ifndef SYSY_RT_H
#define SYSY_RT_H

/* Input, as scanf would read it from stdin. */
int getint(void);            /* scanf("%d") */
int getch(void);             /* scanf("%c"): the byte, 0..255 */
float getfloat(void);        /* scanf("%a"): decimal or hex-float text */
int getarray(int a[]);       /* reads n, then n ints into a; returns n */
int getfarray(float a[]);    /* reads n, then n floats into a; returns n */

/* Output, as printf would write it to stdout. */
void putint(int v);                /* printf("%d") */
void putch(int c);                 /* printf("%c") */
void putfloat(float v);            /* printf("%a") */
void putarray(int n, int a[]);     /* "n:" then " %d" per element, then "\n" */
void putfarray(int n, float a[]);  /* "n:" then " %a" per element, then "\n" */
void putf(const char fmt[], ...);  /* printf(fmt, ...) */

/* Timers: the report is written to stderr when the program exits. */
void _sysy_starttime(int line);
void _sysy_stoptime(int line);
#define starttime() _sysy_starttime(__LINE__)
#define stoptime() _sysy_stoptime(__LINE__)

#endif /* SYSY_RT_H */
