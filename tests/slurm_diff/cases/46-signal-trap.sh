#!/bin/bash
#SBATCH --signal=B:USR1@60
trap 'echo got usr1' USR1
kill -USR1 $$
echo done
