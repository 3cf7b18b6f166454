#!/bin/bash
# term-agent.sh NAME: an agent as a script, started from an interactive
# shell: it claims the next session as owner NAME, says which (NAME.claimed)
# and what its process is (NAME.pid), and works until it is killed.
echo $$ > "$1.pid"
id=$(pickup --owner "$1" next --json | jq -r .id)
echo "$id" > "$1.claimed"
sleep 600
