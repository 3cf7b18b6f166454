#!/bin/bash
# One worker for nohup.sh and setsid.sh: drains the board as owner $1, the
# way drain.sh's loops do, then appends its name to finished (its launcher
# does not wait for it).
: "${MAX:?}"
owner=${1:?usage: loop.sh OWNER}
while [ "$(wc -l < claims)" -lt "$MAX" ] &&
	id=$(pickup --owner "$owner" next --json 2>> pickup.log | jq -r .id) &&
	[ -n "$id" ] && [ "$id" != null ]; do
	echo "$owner $id" >> claims
	sleep 0.01 # the work
	pickup --owner "$owner" done "$id" > /dev/null 2>> pickup.log ||
		echo "$owner $id done exit $?" >> errors
done
echo "$owner" >> finished
