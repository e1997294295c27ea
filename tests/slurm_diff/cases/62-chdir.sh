#!/bin/bash
# diff: args=-D sub
# diff: pre=mkdir sub
pwd > where.txt
