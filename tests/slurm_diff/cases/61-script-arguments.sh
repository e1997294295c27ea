#!/bin/bash
# diff: post=alpha "b c" 3
echo "args: $# [$1] [$2] [$3]"
