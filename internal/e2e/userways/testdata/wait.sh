#!/bin/bash
# 4 waiters block in `pickup next --wait`, then 4 sessions are created one by
# one; each waiter must get a session of its own. Each waiter's --json output
# goes to out<N>; with $RECORD set, each waiter runs in a { ...; } group that
# also records its exit code in rc<N>, as scripts that check it do. At the
# end every waiter finishes its session, and failures of done go to errors.
: > claims
: > errors
for i in 1 2 3 4; do
	if [ -n "${RECORD:-}" ]; then
		{
			pickup --owner "w$i" next --wait=30s --json > "out$i" 2>> pickup.log
			echo $? > "rc$i"
		} &
	else
		pickup --owner "w$i" next --wait=30s --json > "out$i" 2>> pickup.log &
	fi
done
sleep 0.5 # let every waiter start waiting
for i in 1 2 3 4; do
	pickup new --title "arrival $i" > /dev/null
	sleep 0.2
done
wait
for i in 1 2 3 4; do
	id=$(jq -r .id "out$i")
	if [ -z "$id" ] || [ "$id" = null ]; then
		echo "w$i - next got nothing" >> errors
		continue
	fi
	echo "w$i $id" >> claims
	pickup --owner "w$i" done "$id" > /dev/null 2>> pickup.log ||
		echo "w$i $id done exit $?" >> errors
done
