#!/bin/bash
#SBATCH -J first -t 5 --gres=gpu:1 --comment=one
#SBATCH -J second -t 10 --gres=gpu:2 --comment=two
echo ok
