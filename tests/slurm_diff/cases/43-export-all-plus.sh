#!/bin/bash
# diff: args=--export=ALL,EXTRA=1
env | sort > env.batch
