/* retcap.c -- the return value through a perf breakpoint (see retcap.h). */
#include <errno.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "arch.h"
#include "retcap.h"

#define RING_PAGES 1	/* data pages: 4 KiB hold 100 samples; one per call */

void att_retcap_init(struct att_retcap *rc)
{
	rc->fd = -1;
	rc->map = NULL;
	rc->len = 0;
}

int att_retcap_open(struct att_retcap *rc, pid_t tid, uint64_t addr, char *msg, size_t len)
{
	struct perf_event_attr a;
	long page = sysconf(_SC_PAGESIZE);
	void *m;
	int fd, err;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_BREAKPOINT;
	a.bp_type = HW_BREAKPOINT_X;
	a.bp_addr = addr;
	a.bp_len = sizeof(long);
	a.sample_period = 1;
	a.sample_type = PERF_SAMPLE_REGS_USER;
	a.sample_regs_user = arch_perf_regs;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	fd = (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		snprintf(msg, len, "perf_event_open (breakpoint) tid %d: %s", (int)tid, strerror(-err));
		return err;
	}
	m = mmap(NULL, (size_t)page * (1 + RING_PAGES), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		err = -errno;
		close(fd);
		snprintf(msg, len, "mapping the perf buffer: %s", strerror(-err));
		return err;
	}
	rc->fd = fd;
	rc->map = m;
	rc->len = (size_t)page * (1 + RING_PAGES);
	return 0;
}

int att_retcap_take(struct att_retcap *rc, uint64_t sp, uint64_t *val)
{
	struct perf_event_mmap_page *mp = rc->map;
	const unsigned char *data;
	uint64_t head, tail, size;
	int found = 0;

	if (!mp)
		return -ENOENT;
	data = (const unsigned char *)mp + mp->data_offset;
	size = mp->data_size;
	head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
	tail = mp->data_tail;
	while (tail + sizeof(struct perf_event_header) <= head) {
		unsigned char rec[256];
		struct perf_event_header h;
		uint64_t w[4];

		for (size_t i = 0; i < sizeof(h); i++)
			((unsigned char *)&h)[i] = data[(tail + i) % size];
		if (h.size < sizeof(h) || tail + h.size > head)
			break;
		for (size_t i = 0; i < h.size && i < sizeof(rec); i++)
			rec[i] = data[(tail + i) % size];
		/* PERF_SAMPLE_REGS_USER: abi, then the registers in perf order. */
		if (h.type == PERF_RECORD_SAMPLE && h.size >= sizeof(h) + sizeof(w) - 8) {
			memcpy(w, rec + sizeof(h), sizeof(uint64_t) * 3);
			if (w[0] != PERF_SAMPLE_REGS_ABI_NONE && w[2] == sp) {
				*val = w[1];
				found = 1;
			}
		}
		tail += h.size;
	}
	__atomic_store_n(&mp->data_tail, tail, __ATOMIC_RELEASE);
	return found ? 0 : -ENOENT;
}

void att_retcap_drain(struct att_retcap *rc)
{
	struct perf_event_mmap_page *mp = rc->map;

	if (mp)
		__atomic_store_n(&mp->data_tail, __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE),
				 __ATOMIC_RELEASE);
}

void att_retcap_close(struct att_retcap *rc)
{
	if (rc->map)
		munmap(rc->map, rc->len);
	if (rc->fd >= 0)
		close(rc->fd);
	att_retcap_init(rc);
}
