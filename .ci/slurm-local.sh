#!/usr/bin/env bash
# A one-node Slurm cluster on this host for the scale-out tests (issue 26): munge, slurmctld and
# slurmd from Debian's packages, with more task slots than the machine has cores (the tests
# run several shards per node), no accounting, no cgroups. Idempotent: a running cluster is
# left as it is. Prints the node's state when ready; fails when the cluster does not come up.
set -euo pipefail

need=()
command -v munged >/dev/null || need+=(munge)
command -v slurmctld >/dev/null || need+=(slurmctld)
command -v slurmd >/dev/null || need+=(slurmd)
command -v srun >/dev/null || need+=(slurm-client)
if [ ${#need[@]} -gt 0 ]; then
  echo "slurm-local: installing ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${need[@]}" >/dev/null
fi

if sinfo -h -o %T 2>/dev/null | grep -qE '^(idle|mixed|allocated)'; then
  exit 0
fi

node=$(hostname -s)
slots=8
mkdir -p /etc/slurm /var/spool/slurmctld /var/spool/slurmd /var/log/slurm /run/munge
cat > /etc/slurm/slurm.conf <<CONF
# Written by storbench's .ci/slurm-local.sh: a one-node cluster for tests.
ClusterName=storbench-ci
SlurmctldHost=${node}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
ReturnToService=2
SlurmdParameters=config_overrides
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
InactiveLimit=0
KillWait=5
MinJobAge=30
NodeName=${node} CPUs=${slots} State=UNKNOWN
PartitionName=ci Nodes=${node} Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF

chown munge:munge /run/munge 2>/dev/null || true
if ! pgrep -x munged >/dev/null; then
  runuser -u munge -- /usr/sbin/munged
fi
pgrep -x slurmctld >/dev/null || slurmctld
pgrep -x slurmd >/dev/null || slurmd
for _ in $(seq 1 30); do
  state=$(sinfo -h -o %T 2>/dev/null || true)
  case "$state" in
    idle*|mixed*|allocated*) echo "slurm-local: node ${node} ${state}, ${slots} task slots"; exit 0 ;;
    down*|drain*) scontrol update nodename="${node}" state=resume 2>/dev/null || true ;;
  esac
  sleep 1
done
echo "slurm-local: the cluster did not come up; see /var/log/slurm/" >&2
exit 1
