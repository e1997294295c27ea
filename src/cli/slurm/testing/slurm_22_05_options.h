// The long options of Slurm 22.05.8's sbatch, srun and salloc, as their `--help` lists them
// (read off the peer of ../shared/peers/slurm: `sbatch --help | grep -o -- "--[a-z][a-z0-9_-]*"`),
// blank-separated. job_options_test.cc checks that the option table takes each one, for its
// command.
#pragma once

namespace corral::slurm::testing {

inline constexpr const char* kSbatchOptions =
    "account array bb bbf begin chdir cluster-constraint clusters comment constraint container "
    "contiguous core-spec cores-per-socket cpu-freq cpus-per-gpu cpus-per-task deadline "
    "delay-boot dependency distribution error exclude exclusive export export-file "
    "extra-node-info get-user-env gid gpu-bind gpu-freq gpus gpus-per-node gpus-per-socket "
    "gpus-per-task gres gres-flags help hold ignore-pbs input job-name licenses mail-type "
    "mail-user mcs-label mem mem-per-cpu mem-per-gpu mincpus nice no-kill no-requeue nodefile "
    "nodelist nodes ntasks ntasks-per-core ntasks-per-node ntasks-per-socket output overcommit "
    "oversubscribe parsable partition power priority profile propagate qos quiet reboot "
    "requeue reservation signal sockets-per-node spread-job switches thread-spec "
    "threads-per-core time time-min tmp uid usage use-min-nodes verbose version wait wckey wrap";

inline constexpr const char* kSrunOptions =
    "account acctg-freq bb bbf bcast bcast-exclude begin chdir cluster-constraint clusters "
    "comment compress constraint container contiguous core-spec cores-per-socket cpu-freq "
    "cpus-per-gpu cpus-per-task deadline delay-boot dependency disable-status distribution "
    "epilog error exact exclude exclusive export extra-node-info gpu-bind gpu-freq gpus "
    "gpus-per-node gpus-per-socket gpus-per-task gres gres-flags help het-group hold immediate "
    "input job-name jobid kill-on-bad-exit label licenses mail-type mail-user mcs-label mem "
    "mem-per-cpu mem-per-gpu mincpus mpi multi-prog nice no-allocate no-kill nodelist nodes "
    "ntasks ntasks-per-core ntasks-per-node ntasks-per-socket output overcommit overlap "
    "oversubscribe partition power preserve-env priority profile prolog propagate pty qos "
    "quiet quit-on-interrupt reboot relative reservation resv-ports send-libs signal "
    "slurmd-debug sockets-per-node spread-job switches task-epilog task-prolog thread-spec "
    "threads threads-per-core time time-min tmp unbuffered usage use-min-nodes verbose version "
    "wait wckey";

inline constexpr const char* kSallocOptions =
    "account bb bbf begin bell chdir cluster-constraint clusters comment constraint container "
    "contiguous core-spec cores-per-socket cpu-freq cpus-per-gpu cpus-per-task deadline "
    "delay-boot dependency distribution exclude exclusive extra-node-info get-user-env gid "
    "gpu-bind gpu-freq gpus gpus-per-node gpus-per-socket gpus-per-task gres gres-flags help "
    "hold immediate job-name kill-command licenses mail-type mail-user mcs-label mem "
    "mem-per-cpu mem-per-gpu mincpus nice no-bell no-kill nodefile nodelist nodes ntasks "
    "ntasks-per-core ntasks-per-node ntasks-per-socket overcommit oversubscribe partition "
    "power priority profile qos quiet reboot reservation signal sockets-per-node spread-job "
    "switches thread-spec threads-per-core time time-min tmp uid usage use-min-nodes verbose "
    "version wckey";

}  // namespace corral::slurm::testing
