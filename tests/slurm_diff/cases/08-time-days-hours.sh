#!/bin/bash
#SBATCH -t 1-2:03
echo ok
