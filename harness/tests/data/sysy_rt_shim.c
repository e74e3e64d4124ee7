/*
 * A minimal SysY runtime for the C-emitter tests, used only when the project's runtime
 * (compiler/src/runtime/sysy_rt.c) is not in the tree. Same observable behaviour on stdout:
 * scanf/printf conversions as the SysY runtime specifies; timers are accepted and ignored.
 */
#include <stdarg.h>
#include <stdio.h>

int getint(void) { int v = 0; scanf("%d", &v); return v; }
int getch(void) { char c = 0; scanf("%c", &c); return (unsigned char)c; }
float getfloat(void) { float v = 0; scanf("%a", &v); return v; }
int getarray(int a[]) { int n = getint(); for (int i = 0; i < n; i++) a[i] = getint(); return n; }
int getfarray(float a[]) { int n = getint(); for (int i = 0; i < n; i++) a[i] = getfloat(); return n; }
void putint(int v) { printf("%d", v); }
void putch(int c) { printf("%c", c); }
void putfloat(float v) { printf("%a", v); }
void putarray(int n, int a[]) { printf("%d:", n); for (int i = 0; i < n; i++) printf(" %d", a[i]); printf("\n"); }
void putfarray(int n, float a[]) { printf("%d:", n); for (int i = 0; i < n; i++) printf(" %a", a[i]); printf("\n"); }
void putf(const char fmt[], ...) { va_list ap; va_start(ap, fmt); vprintf(fmt, ap); va_end(ap); }
void _sysy_starttime(int line) { (void)line; }
void _sysy_stoptime(int line) { (void)line; }
