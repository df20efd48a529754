/* backing.h -- what backs a process's memory, known before it is read.
 *
 * A page of a file mapping that is not in memory is read from its file
 * system when another process reads it (process_vm_readv, /proc/PID/mem),
 * and a file system can make that wait last for ever: a FUSE daemon that
 * never answers (any user can mount one with fusermount3), an unreachable
 * network server.  FUSE waits uninterruptibly once the daemon has the
 * request, through SIGKILL.  So before any read or write of another
 * process's memory, the mappings it touches are looked up: each one's file
 * system type comes from the process's /proc/PID/mountinfo, matched by the
 * device number /proc/PID/maps gives (neither touches the file system), and
 * from /sys/fs/fuse/connections (fusectl, when mounted), which also lists
 * FUSE mounts no namespace shows any more (umount -l).  Memory behind a
 * remote or user-space file system (att_backing_remote) is refused.
 *
 * The answer comes from a snapshot of the process's maps, read again when it
 * is a second old, when another process is asked about, or when a range
 * lies outside every mapping it knows (at most every 50 ms): a mapping
 * replaced since can still be read; attach/mem.c bounds that read in time.
 */
#ifndef ATTACH_BACKING_H
#define ATTACH_BACKING_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* 1 when a file system of type @fstype (mountinfo's word: "fuse.sshfs",
 * "nfs4"...) may leave a read unanswered for as long as it likes: FUSE and
 * every network or cluster file system (the list is in backing.c). */
int att_backing_remote(const char *fstype);

/* 0 when [@addr, @addr + @len) of process @pid lies in no mapping backed by
 * such a file system; else -EREMOTE and the mapping in @why ("0x...-0x...
 * /path (fuse.hangfs)").  A process whose maps cannot be read: 0 (the read
 * itself then fails as it will). */
int att_backing_check(pid_t pid, uint64_t addr, size_t len, char *why, size_t wlen);

/* Forget the snapshots of this thread (tests). */
void att_backing_forget(void);

#endif
