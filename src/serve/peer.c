/* peer.c -- who is at the other end of a connection: a local user, or an address.
 *
 * Limits per address do not hold for a local client: 127.0.0.0/8 is 16
 * million addresses (64 half-sent requests each from 127.0.0.2 and .3
 * starved every other client), and a host's own addresses are its users'
 * too.  The kernel knows the socket at the other end when it is on this
 * host: sock_diag's exact lookup of the connection's four addresses and
 * ports (as `ss` asks) gives its owner, the user who made it.  So a local
 * client is its uid, whatever address it came from; anything else is its
 * address (an IPv6 client by its /64, what one site is given).  Without
 * sock_diag (a sandbox refusing AF_NETLINK), loopback is one client.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "serve/serve.h"

/* An address as IPv4 when it is one (or v4-mapped): family, and 16 bytes. */
static int addr_of(const struct sockaddr_storage *ss, unsigned char a[16], uint16_t *port)
{
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *s4 = (const void *)ss;

		memset(a, 0, 16);
		memcpy(a, &s4->sin_addr, 4);
		*port = s4->sin_port;
		return AF_INET;
	}
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)ss;

		*port = s6->sin6_port;
		if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr)) {
			memset(a, 0, 16);
			memcpy(a, s6->sin6_addr.s6_addr + 12, 4);
			return AF_INET;
		}
		memcpy(a, &s6->sin6_addr, 16);
		return AF_INET6;
	}
	return -1;
}

/* The uid owning the local TCP socket @src:@sport connected to @dst:@dport;
 * -ENOENT when none is on this host, -errno when sock_diag cannot say. */
static int owner_of(int family, const unsigned char src[16], uint16_t sport,
		    const unsigned char dst[16], uint16_t dport, uid_t *uid)
{
	struct {
		struct nlmsghdr nh;
		struct inet_diag_req_v2 req;
	} q = { 0 };
	union {
		struct nlmsghdr nh;
		char buf[8192];
	} a;
	struct timeval tv = { 1, 0 };
	int fd, err = -ENOENT;
	ssize_t n;

	q.nh.nlmsg_len = sizeof(q);
	q.nh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	q.nh.nlmsg_flags = NLM_F_REQUEST;
	q.req.sdiag_family = (uint8_t)family;
	q.req.sdiag_protocol = IPPROTO_TCP;
	q.req.idiag_states = ~0u;
	q.req.id.idiag_sport = sport;
	q.req.id.idiag_dport = dport;
	memcpy(q.req.id.idiag_src, src, 16);
	memcpy(q.req.id.idiag_dst, dst, 16);
	q.req.id.idiag_cookie[0] = q.req.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (send(fd, &q, sizeof(q), 0) != (ssize_t)sizeof(q)) {
		err = -errno;
		goto out;
	}
	n = recv(fd, &a, sizeof(a), 0);
	if (n < 0) {
		err = -errno;
		goto out;
	}
	for (struct nlmsghdr *h = &a.nh; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
		if (h->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *e = NLMSG_DATA(h);

			if (h->nlmsg_len >= NLMSG_LENGTH(sizeof(*e)) && e->error)
				err = e->error;
			break;
		}
		if (h->nlmsg_type == SOCK_DIAG_BY_FAMILY &&
		    h->nlmsg_len >= NLMSG_LENGTH(sizeof(struct inet_diag_msg))) {
			const struct inet_diag_msg *m = NLMSG_DATA(h);

			*uid = m->idiag_uid;
			err = 0;
			break;
		}
	}
out:
	close(fd);
	return err;
}

int peer_of(int fd, struct peer *p)
{
	struct sockaddr_storage them, us;
	socklen_t l1 = sizeof(them), l2 = sizeof(us);
	unsigned char ta[16], ua[16];
	uint16_t tport, uport;
	char host[INET6_ADDRSTRLEN] = "?";
	int fam, err;

	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "unknown");
	if (getpeername(fd, (struct sockaddr *)&them, &l1) || getsockname(fd, (struct sockaddr *)&us, &l2))
		return -errno;
	fam = addr_of(&them, ta, &tport);
	if (fam < 0 || addr_of(&us, ua, &uport) != fam)
		return -EAFNOSUPPORT;
	err = owner_of(fam, ta, tport, ua, uport, &p->uid);
	if (!err) {
		p->local = 1;
		snprintf(p->name, sizeof(p->name), "uid %u", (unsigned)p->uid);
		return 0;
	}
	if (fam == AF_INET && ta[0] == 127) {
		snprintf(p->name, sizeof(p->name), "127.0.0.0/8");
	} else if (fam == AF_INET) {
		inet_ntop(AF_INET, ta, host, sizeof(host));
		snprintf(p->name, sizeof(p->name), "%s", host);
	} else {
		memset(ta + 8, 0, 8);
		inet_ntop(AF_INET6, ta, host, sizeof(host));
		snprintf(p->name, sizeof(p->name), "%s/64", host);
	}
	return err == -ENOENT ? 0 : err;
}
