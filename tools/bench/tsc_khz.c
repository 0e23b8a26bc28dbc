// SPDX-License-Identifier: GPL-2.0
/*
 * Print the host's TSC frequency in kHz (measured over 200 ms).
 *
 * Under QEMU TCG the guest's RDTSC reads the host's TSC, but the guest
 * kernel cannot calibrate it (no PIT/HPET reference on a microvm), marks
 * it unstable and falls back to the jiffies clocksource: 4 ms clock
 * resolution and no high-resolution timers. bench.sh passes this value
 * as tsc_early_khz= (with tsc=reliable) so the guest keeps the TSC.
 */
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <x86intrin.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

int main(void)
{
	struct timespec nap = { 0, 200000000 };
	uint64_t t0, t1, c0, c1;

	t0 = now_ns();
	c0 = __rdtsc();
	nanosleep(&nap, NULL);
	t1 = now_ns();
	c1 = __rdtsc();
	printf("%llu\n", (unsigned long long)((c1 - c0) * 1000000ULL / (t1 - t0)));
	return 0;
}
