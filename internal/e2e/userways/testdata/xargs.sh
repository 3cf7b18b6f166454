#!/bin/bash
# xargs runs N steps, 8 at a time; each step is a small sh -c that claims a
# session, works on it and finishes it. $OWNER is one owner shared by every
# step, or "job" for an owner of its own per step (job1, job2, ...).
: "${N:?}" "${OWNER:?}"
: > claims
: > errors
seq 1 "$N" | xargs -P 8 -n 1 sh -c '
	owner=$OWNER
	[ "$owner" = job ] && owner=job$1
	id=$(pickup --owner "$owner" next --json 2>> pickup.log | jq -r .id)
	[ -n "$id" ] && [ "$id" != null ] || exit 0
	echo "$owner $id" >> claims
	sleep 0.01 # the work
	pickup --owner "$owner" done "$id" > /dev/null 2>> pickup.log ||
		echo "$owner $id done exit $?" >> errors
' step
