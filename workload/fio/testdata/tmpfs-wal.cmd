fio --name=wal --directory=/var/tmp/fiocap/tmpfs/fio --output-format=json+ --thread=1 --group_reporting=1 --bs=8k --fdatasync=1 --ioengine=psync --rw=write --direct=0 --size=67108864 --numjobs=1 --time_based=1 --runtime=2000ms --ramp_time=1000ms
exit 0
