#!/bin/bash
# A long-lived worker: claims session $1 as owner $2, writes claim's exit
# code to claim.rc, then keeps running (as itself, not exec'ed into sleep)
# until it is killed.
pickup --owner "${2:?usage: holder.sh ID OWNER}" claim "${1:?}" > /dev/null 2>> pickup.log
echo $? > claim.rc
sleep 60 &
wait
