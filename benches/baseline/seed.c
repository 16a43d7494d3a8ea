/* Baseline for scripts/compare-baseline.sh: the seed documents' recursive bitmask search
 * (one thread) with first-row mirror halving, written for this project.
 * Usage: seed N   -> prints the number of solutions of N-Queens, 1 <= N <= 32. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t full;

/* cols/ld/rd: occupied columns and diagonals seen by the current row */
static uint64_t solve(uint64_t cols, uint64_t ld, uint64_t rd) {
    if (cols == full) return 1;
    uint64_t count = 0;
    uint64_t free_sq = full & ~(cols | ld | rd);
    while (free_sq) {
        uint64_t bit = free_sq & (~free_sq + 1);
        free_sq -= bit;
        count += solve(cols | bit, (ld | bit) << 1, (rd | bit) >> 1);
    }
    return count;
}

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: seed N\n"); return 2; }
    int n = atoi(argv[1]);
    if (n < 1 || n > 32) { fprintf(stderr, "N must be from 1 to 32\n"); return 2; }
    full = (n == 64) ? ~0ULL : ((1ULL << n) - 1);
    uint64_t total = 0;
    /* mirror halving: first-row queens in the left half count twice, the middle once */
    for (int c = 0; c < n / 2; c++) {
        uint64_t bit = 1ULL << c;
        total += 2 * solve(bit, bit << 1, bit >> 1);
    }
    if (n % 2 == 1) {
        uint64_t bit = 1ULL << (n / 2);
        total += solve(bit, bit << 1, bit >> 1);
    }
    printf("%llu\n", (unsigned long long)total);
    return 0;
}
