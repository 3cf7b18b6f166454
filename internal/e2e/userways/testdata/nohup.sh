#!/bin/bash
# Starts 8 workers with nohup in the background and exits at once, leaving
# them to run on their own (the test waits for their names in finished).
: > claims
: > errors
: > finished
for i in 1 2 3 4 5 6 7 8; do
	nohup ./loop.sh "w$i" > "w$i.out" 2>&1 &
done
