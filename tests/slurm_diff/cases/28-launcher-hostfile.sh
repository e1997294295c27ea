#!/bin/bash
#SBATCH -N1 -n2
scontrol show hostnames $SLURM_JOB_NODELIST | sed 's/$/ slots=2/' > hostfile
echo "nodes=$SLURM_JOB_NUM_NODES tasks=$SLURM_NTASKS tpn=$SLURM_TASKS_PER_NODE cpn=$SLURM_JOB_CPUS_PER_NODE"
