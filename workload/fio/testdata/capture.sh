#!/bin/sh
# Captures the fio outputs the parser tests read (see README.md). Usage:
#   capture.sh ROOT
# where ROOT/bind is a directory on the host's ext4, ROOT/tmpfs a tmpfs, ROOT/loop an ext4 on a
# loop device over a file, and ROOT/ramfs a ramfs. Each command is exactly the argv of
# (*fio.Workload).Argv(ROOT/<fs>) for the job (Duration 2s, Warmup 1s, Size 64 MiB), run
# natively. NAME.json is fio's standard output, NAME.err its standard error when not empty,
# NAME.cmd the command and its exit status.
set -u
root=$1

cap() { # name fs job direct numjobs [extra options...]
	name=$1 fs=$2 job=$3 direct=$4 numjobs=$5
	shift 5
	set -- fio --name="$job" --directory="$root/$fs/fio" --output-format=json+ --thread=1 --group_reporting=1 "$@" \
		--direct="$direct" --size=67108864 --numjobs="$numjobs" --time_based=1 --runtime=2000ms --ramp_time=1000ms
	rm -rf "$root/$fs/fio" && mkdir -p "$root/$fs/fio"
	echo "$*" > "$name.cmd"
	"$@" > "$name.json" 2> "$name.err"
	echo "exit $?" >> "$name.cmd"
	[ -s "$name.err" ] || rm -f "$name.err"
	rm -rf "$root/$fs/fio"
}

high="--bs=4k --fsync=5 --ioengine=psync --rw=randwrite"
low="--bs=4k --fsync=20 --ioengine=psync --rw=randwrite"
none="--bs=4k --ioengine=psync --rw=randwrite"
wal="--bs=8k --fdatasync=1 --ioengine=psync --rw=write"
randread="--bs=4k --ioengine=psync --rw=randread"
randwrite="--bs=4k --ioengine=psync --rw=randwrite"
seqwrite="--bs=64k --ioengine=psync --rw=write"

cap bind-fsync-high bind fsync-high 0 1 $high
cap bind-fsync-high-2jobs bind fsync-high 0 2 $high
cap bind-fsync-low bind fsync-low 0 1 $low
cap bind-fsync-none bind fsync-none 0 1 $none
cap bind-wal bind wal 0 1 $wal
cap bind-randread-4k-direct bind randread-4k 1 1 $randread
cap bind-seqwrite-64k bind seqwrite-64k 0 1 $seqwrite
cap tmpfs-fsync-high tmpfs fsync-high 0 1 $high
cap tmpfs-wal tmpfs wal 0 1 $wal
cap tmpfs-randread-4k-direct tmpfs randread-4k 1 1 $randread
cap loop-fsync-high loop fsync-high 0 1 $high
cap loop-fsync-low loop fsync-low 0 1 $low
cap loop-wal loop wal 0 1 $wal
cap loop-randwrite-4k-direct loop randwrite-4k 1 1 $randwrite
# ramfs has no O_DIRECT: the failure boxbench must report as ErrDirectUnsupported
cap ramfs-fsync-high-direct ramfs fsync-high 1 1 $high
