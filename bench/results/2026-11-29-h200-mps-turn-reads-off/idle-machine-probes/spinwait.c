#include <sched.h>
#include <stdint.h>
#include <immintrin.h>
/* poll *word until nonzero; pause between polls, sched_yield every `yield_every` polls (0: never);
   give up after max_polls (<0: never). returns polls. */
long wait_word(volatile int64_t *word, long yield_every, long max_polls) {
    long polls = 0;
    while (!*word) {
        ++polls;
        if (max_polls >= 0 && polls >= max_polls) break;
        _mm_pause();
        if (yield_every > 0 && polls % yield_every == 0) sched_yield();
    }
    return polls;
}
