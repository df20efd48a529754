/* snapshot.h -- the snapshot reader with its bounds as arguments (the tests lower them). */
#ifndef JMA_CENSUS_SNAPSHOT_H
#define JMA_CENSUS_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#include <jemattach/census_diff.h>

/* jma_census_parse with a body of at most @max inflated bytes and tables of
 * at most @tables bytes (else -E2BIG). */
int census_snap_parse(const void *buf, size_t len, uint64_t max, uint64_t tables,
		      struct jma_census **out, struct jma_census_meta *m, char *msg, size_t msglen);

#endif
