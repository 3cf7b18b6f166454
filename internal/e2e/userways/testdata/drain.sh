#!/bin/bash
# The script: 8 background subshells each drain the board, taking a
# session with `pickup next --json | jq -r .id` inside a command
# substitution, working on it, then finishing it with `pickup done`.
#
# Writes "<worker> <id>" to claims after each claim and "<worker> <id> done
# exit <code>" to errors when done fails. A loop stops when nothing is left
# or, so that a broken pickup cannot loop for ever, once claims holds $MAX
# lines.
: "${MAX:?}"
: > claims
: > errors
for i in 1 2 3 4 5 6 7 8; do
	(
		while [ "$(wc -l < claims)" -lt "$MAX" ] &&
			id=$(pickup --owner "w$i" next --json 2>> pickup.log | jq -r .id) &&
			[ -n "$id" ] && [ "$id" != null ]; do
			echo "w$i $id" >> claims
			sleep 0.01 # the work
			pickup --owner "w$i" done "$id" > /dev/null 2>> pickup.log ||
				echo "w$i $id done exit $?" >> errors
		done
	) &
done
wait
