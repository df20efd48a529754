#!/bin/bash
# 90-stress.sh -- 1000 mixed operations on a busy, self-checking target (tests/stress.sh).
exec tests/stress.sh 1000
