/* A small glibc program for the plugin's repeatability tests: integer and
   float work in the program's own functions, then printf (libc, mostly
   Thumb-2 code in Debian's armhf glibc). */
#include <stdio.h>

#ifndef ITERATIONS
#define ITERATIONS 3000
#endif

static int table[1000];

__attribute__((noinline)) int mix_table(int n)
{
    int sum = 0;
    for (int i = 0; i < n; i++) {
        table[i % 1000] += i;
        sum += table[(i * 7) % 1000] / 3;
    }
    return sum;
}

__attribute__((noinline)) float harmonic(int n)
{
    float total = 0.0f;
    for (int i = 1; i <= n; i++)
        total += 1.0f / (float)i;
    return total;
}

int main(void)
{
    printf("%d %.4f\n", mix_table(ITERATIONS), harmonic(ITERATIONS));
    return 0;
}
