#!/bin/bash
# diff: command=sbatch -H -o wrap.out --wrap 'echo wrapped; env | sort > env.wrap'
