#!/bin/bash
# diff: args=--export=CASE_A,CASE_B=set
# diff: env=CASE_A=from-submit
env | sort > env.batch
