/* mem.h -- reading and writing another process's memory. */
#ifndef ATTACH_MEM_H
#define ATTACH_MEM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Every access below is first checked against what backs the memory
 * (backing.h: -EREMOTE for a mapping of a FUSE or network file system), then
 * made by a helper process of the calling thread, which is given up on when
 * it takes longer than the timeout (-ETIMEDOUT): no access can hold us (and
 * so the target's threads we stopped) longer, whatever backs the page.
 * att_mem_why() says which mapping, or what did not end. */

/* The calling thread's bound on one access, in ms (10000 until set). */
void att_mem_set_timeout(int ms);
/* Why the calling thread's last -EREMOTE or -ETIMEDOUT. */
const char *att_mem_why(void);

/* Read/write exactly @len bytes at @addr in process @pid.  Uses
 * process_vm_readv/writev and falls back to /proc/PID/mem where the kernel
 * lacks them or refuses (ENOSYS, EPERM).  Return 0 or -errno (-EFAULT when part
 * of the range is unmapped). */
int att_mem_read(pid_t pid, uint64_t addr, void *buf, size_t len);
int att_mem_write(pid_t pid, uint64_t addr, const void *buf, size_t len);

/* Many small reads in one system call each IOV_MAX of them (with thousands
 * of threads, one per thread adds up): piece i is @p[i].len bytes at
 * @p[i].addr into @p[i].buf, and @p[i].ok says whether it was read whole
 * (an unmapped piece fails alone).  0, or -errno when the process cannot be
 * read at all. */
struct att_piece {
	uint64_t addr;
	void *buf;
	size_t len;
	int ok;
};
int att_mem_read_pieces(pid_t pid, struct att_piece *p, size_t n);

/* Read a NUL-terminated string of at most @max bytes (NUL excluded) at @addr.
 * *out is malloc'ed and owned by the caller; *truncated tells whether @max was
 * hit.  Stops cleanly at an unmapped page. */
int att_mem_read_str(pid_t pid, uint64_t addr, size_t max, char **out, int *truncated);

#endif
