#!/bin/bash
# diff: args=--export=NONE
env | sort > env.batch
