#!/bin/bash
# 90-stress.sh -- 500 mixed operations on a busy, self-checking target (tests/stress.sh),
# through the ASan+UBSan build in make check; make soak runs 10000.
exec tests/stress.sh 500
