/* safepath.h -- a path walked as root without following another user's symbolic links.
 *
 * jemattach runs as root; the paths it writes (-o, --svg, the symbol cache)
 * may pass through directories another user can write: /tmp, that user's
 * home, a directory of theirs inside ours.  That user can plant a symbolic
 * link at any name there, in any component, to make root write a file of
 * root's.  proc_path_walk resolves a path one component at a time, each
 * opened O_PATH|O_NOFOLLOW relative to the one before, and follows a link
 * only when root or the user running jemattach (real or effective uid, and
 * under sudo the user who ran it: $SUDO_UID) owns it -- the kernel's protected_symlinks rule, for every component and
 * whatever the sysctl says.  What it returns is a directory fd and a name in
 * it: the caller acts relative to that fd (openat, mkdirat, renameat), so a
 * component swapped after the walk changes nothing.
 *
 * Links in /proc (/dev/stdout's /proc/self/fd/1) are the kernel's, with no
 * text to resolve: a trusted one is followed by the kernel, and in last
 * place it is reported (proc_link) for the caller to decide.
 */
#ifndef JMA_PROCESS_SAFEPATH_H
#define JMA_PROCESS_SAFEPATH_H

#include <stddef.h>
#include <sys/types.h>

/* Where a path leads: its last component @name in directory @dirfd. */
struct jma_path_at {
	int dirfd;		/* O_PATH|O_DIRECTORY, owned by the caller; -1 when none */
	char name[256];		/* never empty; may be "." or ".." ("d/." "d/..") */
	int proc_link;		/* @name is a trusted link inside /proc, not followed */
	int slash;		/* the path ended with '/': a directory is meant */
	char shown[4096];	/* the path as resolved, for messages */
};

/* 1 when a file owned by @uid may be trusted: root's or the invoking user's
 * (getuid, geteuid, $SUDO_UID when run by root). */
int proc_path_trusted_uid(uid_t uid);

/* Walk @path (relative to the working directory unless absolute) to the
 * directory holding its last component, following trusted links in every
 * component, the last included (a link there is replaced by what it names).
 * 0 with @at filled (close at->dirfd), or -errno with a message in @msg:
 * -EPERM for a link owned by another user, -ELOOP past 40 links. */
int proc_path_walk(const char *path, struct jma_path_at *at, char *msg, size_t len);

/* 0 when nobody but root and the invoking user can change what directory
 * @dirfd holds: a trusted owner, and writable by no other user, or sticky
 * (others may add names there, never rename or remove ours).  -EPERM with a
 * message naming @shown otherwise; *@sticky (may be NULL) tells which. */
int proc_path_dir_private(int dirfd, const char *shown, int *sticky, char *msg, size_t len);

/* open(@path, @flags | O_NOFOLLOW, @mode) after proc_path_walk: a file or
 * directory reached through trusted links only.  An fd or -errno (@msg). */
int proc_path_open(const char *path, int flags, mode_t mode, char *msg, size_t len);

#endif
