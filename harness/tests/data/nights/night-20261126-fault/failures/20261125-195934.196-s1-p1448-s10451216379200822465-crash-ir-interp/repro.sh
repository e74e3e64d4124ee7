#!/bin/sh
# run inside this directory
sysyc prog.sy --passes=mem2reg,constfold --backend-stages=none --fault=constfold-sub-swap --verify-each --interpret < prog.in; echo "exit $?"
