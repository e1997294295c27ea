#!/bin/bash
# diff: args=--parsable
echo ok
