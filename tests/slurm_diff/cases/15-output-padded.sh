#!/bin/bash
#SBATCH -o out-%12j.txt
echo ok
