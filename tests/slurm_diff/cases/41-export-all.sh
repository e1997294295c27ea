#!/bin/bash
# diff: args=--export=ALL
# diff: env=CASE_VAR=hello
env | sort > env.batch
