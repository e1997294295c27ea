#!/bin/bash
#SBATCH -A nosuchaccount
echo never
