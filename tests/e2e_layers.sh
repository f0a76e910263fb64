#!/bin/sh
# The include rules of architecture.md hold in the tree (tools/check_layers.sh),
# and the check itself catches a bad include of each kind (its self-test).
# Exit 0 pass, else fail.
fail=0
sh tools/check_layers.sh . || fail=1
sh tools/check_layers.sh --self-test || fail=1
exit $fail
