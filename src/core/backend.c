/* backend.c -- the backend's operations as the jemalloc layer calls them (backend.h). */
#include <errno.h>

#include "core/session.h"

void sess_expect_text(jma_session *s)
{
	if (s->be && s->be->ops->expect_text)
		s->be->ops->expect_text(s->be);
}

int sess_call(jma_session *s, const struct jma_bcall *c, uint64_t *ret)
{
	if (!s->attached)
		return sess_fail(s, JMA_ERR_USAGE, -EINVAL, "not attached");
	return s->be->ops->call(s->be, c, ret);
}

uint64_t sess_scratch(jma_session *s, const void *data, size_t len, size_t align)
{
	return s->be->ops->scratch(s->be, data, len, align);
}

int sess_read(jma_session *s, uint64_t addr, void *buf, size_t len)
{
	return s->be->ops->read(s->be, addr, buf, len);
}

int sess_read_str(jma_session *s, uint64_t addr, size_t max, char **out, int *trunc)
{
	return s->be->ops->read_str(s->be, addr, max, out, trunc);
}

int sess_dump(jma_session *s, const char *dir, const char *name, size_t max, jma_dump_fn write,
	     void *arg, char **buf, size_t *len)
{
	if (!s->attached)
		return sess_fail(s, JMA_ERR_USAGE, -EINVAL, "not attached");
	return s->be->ops->dump(s->be, dir, name, max, write, arg, buf, len);
}

pid_t sess_call_tid(jma_session *s)
{
	struct jma_target_info info = { .sz = sizeof(info), .tid = 0 };

	if (s->attached && s->be->ops->describe)
		s->be->ops->describe(s->be, &info);
	return info.tid;
}
