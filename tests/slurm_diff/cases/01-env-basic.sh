#!/bin/bash
# diff: args=-n1
env | sort > env.batch
