fio --name=fsync-high --directory=/var/tmp/fiocap/bind/fio --output-format=json+ --thread=1 --group_reporting=1 --bs=4k --fsync=5 --ioengine=psync --rw=randwrite --direct=0 --size=67108864 --numjobs=1 --time_based=1 --runtime=2000ms --ramp_time=1000ms
exit 0
