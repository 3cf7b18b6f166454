#!/bin/bash
# Maintenance beside work (issue 22): for $DUR seconds, 3 background
# subshells loop `pickup claim X; pickup release X` over the ids in ./churn,
# 4 drain ./drain's sessions with `pickup next --json` / `pickup done`, and
# 2 loop `pickup doctor --fix` while 1 loops a plain `pickup doctor`.
#
# Every doctor run's output goes to doctor.<loop>.<n>, and its exit code
# (doctor exits 1 when a problem remains) to doctor-exits as
# "<file> <code>". Failures of done go to errors.
: "${DUR:?}"
mapfile -t churn < churn
: > errors
: > doctor-exits
end=$((SECONDS + DUR))
for w in 1 2 3; do
	(
		while [ $SECONDS -lt $end ]; do
			x=${churn[RANDOM % ${#churn[@]}]}
			pickup --owner "c$w" claim "$x" > /dev/null 2>&1
			pickup --owner "c$w" release "$x" > /dev/null 2>&1
		done
	) &
done
for w in 1 2 3 4; do
	(
		while [ $SECONDS -lt $end ] &&
			id=$(pickup --owner "d$w" next --json --not-tag churn 2>> pickup.log | jq -r .id) &&
			[ -n "$id" ] && [ "$id" != null ]; do
			pickup --owner "d$w" done "$id" > /dev/null 2>> pickup.log ||
				echo "d$w $id done exit $?" >> errors
		done
	) &
done
doctor() {
	local n=0
	while [ $SECONDS -lt $end ]; do
		pickup doctor "$@" > "doctor.$loop.$n" 2>&1
		echo "doctor.$loop.$n $?" >> doctor-exits
		n=$((n + 1))
	done
}
loop=fix1 doctor --fix &
loop=fix2 doctor --fix &
loop=look doctor &
wait
